// DatasetPicker: which data set a run trains on — the built-in Fashion-MNIST, a FER2013 CSV file,
// a folder of IDX files or a folder of class sub-folders of images — with a sentence on what each
// source needs and where to get it (FER2013 is not shipped), kept as the data set string the
// worker takes ("fashion-mnist", "fer2013:PATH", "idx:DIR", "folder:DIR") but never shown as one.
// It loads the chosen data set on a background thread and shows it in a DatasetPreview.
#pragma once

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
        DatasetSummary summary;
        QString error;
    };
    void updatePathRow();
    void browse();

    QComboBox* kind_;
    QLineEdit* path_;
    QPushButton* browse_;
    QLabel* sourceHint_;
    DatasetPreview* preview_;
    QFutureWatcher<PreviewResult> loader_;
    QString shownSpec_;
    bool refreshPending_ = false;
};

}  // namespace cnnstudio::ui
