// DatasetPreview: what a data set holds, at a glance — its splits, image size, and one row per
// class with the class name, its number of training images (with a bar) and a few samples.
// The data come from the datasets library (see DatasetPicker, which loads them off the GUI thread).
#pragma once

#include <QImage>
#include <QList>
#include <QStringList>
#include <QWidget>

class QGridLayout;
class QLabel;

namespace cnnstudio::datasets {
struct DatasetSplits;
}

namespace cnnstudio::ui {

struct DatasetSummary {
    QString description;
    QStringList classNames;
    QList<qint64> trainCounts;          // per class
    qint64 trainSize = 0, validationSize = 0, testSize = 0;
    int channels = 0, height = 0, width = 0;
    QList<QList<QImage>> samples;        // per class, a few training images
    qint64 skipped = 0;                  // unreadable images and rows left out (skipping on)
    QStringList firstSkipped;            // the first few, "file:line: what is wrong"

    // Counts and samples of `splits` (samplesPerClass images of each class, the first ones).
    static DatasetSummary fromSplits(const datasets::DatasetSplits& splits, int samplesPerClass = 6);
};

class DatasetPreview : public QWidget {
    Q_OBJECT

public:
    explicit DatasetPreview(QWidget* parent = nullptr);

    void showSummary(const DatasetSummary& summary);
    void showMessage(const QString& message);  // "loading…", or why the data set cannot be read
    const DatasetSummary& summary() const { return summary_; }

private:
    void clearRows();

    DatasetSummary summary_;
    QLabel* header_;
    QWidget* rows_;
    QGridLayout* grid_;
};

}  // namespace cnnstudio::ui
