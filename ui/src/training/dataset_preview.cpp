#include "cnnstudio/ui/training/dataset_preview.h"

#include <algorithm>
#include <climits>

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPixmap>
#include <QProgressBar>
#include <QVBoxLayout>

#include "cnnstudio/datasets/dataset.h"

namespace cnnstudio::ui {
namespace {

constexpr int maximumClassRows = 12;
constexpr int thumbnailSide = 34;

// One CHW uint8 sample as an image: grey for one channel, RGB from the first three otherwise.
QImage sampleImage(std::span<const std::uint8_t> pixels, int channels, int height, int width) {
    const std::size_t plane = std::size_t(height) * std::size_t(width);
    if (channels < 3) {
        QImage image(width, height, QImage::Format_Grayscale8);
        for (int y = 0; y < height; ++y)
            std::copy_n(pixels.data() + std::size_t(y) * std::size_t(width), width, image.scanLine(y));
        return image;
    }
    QImage image(width, height, QImage::Format_RGB888);
    for (int y = 0; y < height; ++y) {
        uchar* line = image.scanLine(y);
        for (int x = 0; x < width; ++x) {
            const std::size_t at = std::size_t(y) * std::size_t(width) + std::size_t(x);
            for (int c = 0; c < 3; ++c) line[3 * x + c] = pixels[std::size_t(c) * plane + at];
        }
    }
    return image;
}

}  // namespace

DatasetSummary DatasetSummary::fromSplits(const datasets::DatasetSplits& splits, int samplesPerClass) {
    DatasetSummary summary;
    summary.description = QString::fromStdString(splits.description);
    for (const std::string& name : splits.classNames) summary.classNames << QString::fromStdString(name);
    summary.trainSize = qint64(splits.train.size());
    summary.validationSize = qint64(splits.validation.size());
    summary.testSize = qint64(splits.test.size());
    summary.channels = splits.train.channels;
    summary.height = splits.train.height;
    summary.width = splits.train.width;
    summary.skipped = qint64(splits.skipped.count);
    for (const std::string& message : splits.skipped.firstMessages) summary.firstSkipped << QString::fromStdString(message);
    const std::size_t classes = splits.classNames.size();
    for (std::size_t count : splits.train.classCounts(classes)) summary.trainCounts << qint64(count);
    summary.samples.resize(qsizetype(classes));
    for (std::size_t i = 0; i < splits.train.size(); ++i) {
        const auto label = std::size_t(splits.train.labels[i]);
        if (label >= classes || summary.samples[qsizetype(label)].size() >= samplesPerClass) continue;
        summary.samples[qsizetype(label)].append(
            sampleImage(splits.train.image(i), summary.channels, summary.height, summary.width));
    }
    return summary;
}

DatasetPreview::DatasetPreview(QWidget* parent) : QWidget(parent) {
    header_ = new QLabel(this);
    header_->setObjectName("datasetHeader");
    header_->setWordWrap(true);
    header_->setTextFormat(Qt::RichText);
    rows_ = new QWidget(this);
    grid_ = new QGridLayout(rows_);
    grid_->setContentsMargins(0, 0, 0, 0);
    grid_->setHorizontalSpacing(8);
    grid_->setVerticalSpacing(3);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(header_);
    layout->addWidget(rows_);
}

void DatasetPreview::clearRows() {
    while (QLayoutItem* item = grid_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
}

void DatasetPreview::showMessage(const QString& message) {
    summary_ = {};
    clearRows();
    header_->setText(message.toHtmlEscaped());
    header_->setToolTip(QString());
}

void DatasetPreview::showSummary(const DatasetSummary& summary) {
    summary_ = summary;
    clearRows();
    header_->setText(tr("<b>%1</b><br>%2 training · %3 validation · %4 test images, %5×%6×%7, %n class(es)",
                        nullptr, int(summary.classNames.size()))
                         .arg(summary.description.toHtmlEscaped())
                         .arg(summary.trainSize)
                         .arg(summary.validationSize)
                         .arg(summary.testSize)
                         .arg(summary.channels)
                         .arg(summary.height)
                         .arg(summary.width));
    if (summary.skipped > 0) {
        header_->setText(header_->text() + "<br>" +
                         tr("%n unreadable image(s) or row(s) left out", nullptr, int(std::min<qint64>(summary.skipped, INT_MAX))));
        header_->setToolTip(summary.firstSkipped.join('\n'));
    } else {
        header_->setToolTip(QString());
    }
    const qint64 largest = summary.trainCounts.isEmpty()
                               ? 1
                               : std::max<qint64>(1, *std::max_element(summary.trainCounts.begin(), summary.trainCounts.end()));
    const int shown = std::min<int>(int(summary.classNames.size()), maximumClassRows);
    for (int row = 0; row < shown; ++row) {
        auto* name = new QLabel(summary.classNames[row], rows_);
        grid_->addWidget(name, row, 0);
        auto* bar = new QProgressBar(rows_);
        bar->setObjectName(QStringLiteral("classCount%1").arg(row));
        bar->setRange(0, int(std::min<qint64>(largest, INT_MAX)));
        bar->setValue(int(std::min<qint64>(summary.trainCounts.value(row), INT_MAX)));
        bar->setFormat(QString::number(summary.trainCounts.value(row)));
        bar->setTextVisible(true);
        bar->setMaximumWidth(120);
        bar->setMaximumHeight(thumbnailSide - 6);
        grid_->addWidget(bar, row, 1);
        auto* strip = new QWidget(rows_);
        auto* stripLayout = new QHBoxLayout(strip);
        stripLayout->setContentsMargins(0, 0, 0, 0);
        stripLayout->setSpacing(2);
        for (const QImage& image : summary.samples.value(row)) {
            auto* thumbnail = new QLabel(strip);
            thumbnail->setPixmap(QPixmap::fromImage(
                image.scaled(thumbnailSide, thumbnailSide, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
            thumbnail->setFixedSize(thumbnailSide, thumbnailSide);
            stripLayout->addWidget(thumbnail);
        }
        stripLayout->addStretch(1);
        grid_->addWidget(strip, row, 2);
    }
    if (int(summary.classNames.size()) > shown)
        grid_->addWidget(new QLabel(tr("… and %n more class(es)", nullptr, int(summary.classNames.size()) - shown), rows_),
                         shown, 0, 1, 3);
    grid_->setColumnStretch(2, 1);
}

}  // namespace cnnstudio::ui
