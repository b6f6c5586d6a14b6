// DatasetPicker: which data set a run trains on — the built-in Fashion-MNIST, a FER2013 CSV file,
// a folder of IDX files or a folder of class sub-folders of images — with a sentence on what each
// source needs and where to get it (FER2013 is not shipped), kept as the data set string the
// worker takes ("fashion-mnist", "fer2013:PATH", "idx:DIR", "folder:DIR") but never shown as one.
// It loads the chosen data set on a background thread and shows it in a DatasetPreview.
#pragma once

#include <cstdint>

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
    DatasetPreview* preview() const { return preview_; }
    bool isLoadingPreview() const { return loader_.isRunning(); }

public slots:
    void refreshPreview();

signals:
    void changed();
    void previewUpdated();

private:
    struct PreviewResult {
        QString spec;
        std::uint64_t validationSeed = 0;
        DatasetSummary summary;
        QString error;
    };
    void updatePathRow();
    void browse();

    QComboBox* kind_;
    QLineEdit* path_;
    QPushButton* browse_;
    QLabel* sourceHint_;
    QLabel* splitNote_;
    DatasetPreview* preview_;
    QFutureWatcher<PreviewResult> loader_;
    QString shownSpec_;
    std::uint64_t validationSeed_ = 0, shownValidationSeed_ = 0;
    bool refreshPending_ = false;
};

}  // namespace cnnstudio::ui
