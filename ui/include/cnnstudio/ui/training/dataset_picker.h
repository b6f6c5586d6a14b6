// DatasetPicker: which data set a run trains on — the built-in Fashion-MNIST, a FER2013 CSV file,
// a folder of IDX files or a folder of class sub-folders of images — with a sentence on what each
// source needs and where to get it (FER2013 is not shipped), kept as the data set string the
// worker takes ("fashion-mnist", "fer2013:PATH", "idx:DIR", "folder:DIR") but never shown as one.
// It loads the chosen data set on a background thread and shows it in a DatasetPreview.
#pragma once

#include <cstdint>
#include <optional>

#include <QFutureWatcher>
#include <QWidget>

#include "cnnstudio/ui/training/dataset_preview.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace cnnstudio::ui {

class DatasetPicker : public QWidget {
    Q_OBJECT

public:
    explicit DatasetPicker(QWidget* parent = nullptr);

    QString datasetSpec() const;
    void setDatasetSpec(const QString& spec);
    // The run's seed: where a data set has no validation split of its own, it picks the training
    // images held out for validation, so the preview counts what that run will train on.
    void setValidationSeed(std::uint64_t seed);
    // The run's "Skip unreadable images and rows": with it the preview leaves them out and counts
    // them, as the worker will; without it the first one is the preview's error.
    void setSkipUnreadable(bool skip);
    DatasetPreview* preview() const { return preview_; }
    bool isLoadingPreview() const { return loader_.isRunning(); }

public slots:
    void refreshPreview();

signals:
    void changed();
    void previewUpdated();

private:
    // What a preview was read for: the data set and the run's settings that change what it holds.
    struct PreviewRequest {
        QString spec;
        std::uint64_t validationSeed = 0;
        bool skipUnreadable = false;
        bool operator==(const PreviewRequest&) const = default;
    };
    struct PreviewResult {
        PreviewRequest request;
        DatasetSummary summary;
        QString error;
    };
    PreviewRequest wantedPreview() const;
    void updatePathRow();
    void browse();

    QComboBox* kind_;
    QLineEdit* path_;
    QPushButton* browse_;
    QLabel* sourceHint_;
    QLabel* splitNote_;
    DatasetPreview* preview_;
    QFutureWatcher<PreviewResult> loader_;
    std::optional<PreviewRequest> shown_;  // none while a message stands in for the preview
    std::uint64_t validationSeed_ = 0;
    bool skipUnreadable_ = false;
    bool refreshPending_ = false;
};

}  // namespace cnnstudio::ui
