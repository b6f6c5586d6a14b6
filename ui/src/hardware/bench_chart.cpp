#include "cnnstudio/ui/hardware/bench_chart.h"

#include <algorithm>

#include <QEvent>
#include <QLabel>
#include <QStackedLayout>

#include <qcustomplot.h>

#include "cnnstudio/ui/common/plot_export.h"
#include "cnnstudio/ui/common/plot_legend.h"

namespace cnnstudio::ui {
namespace {

// The least height of a chart: two rows of them fill the page's 660-pixel minimum.
constexpr int minimumPlotHeightPx = 300;

}  // namespace

QString formatImagesPerSecond(double imagesPerSecond) {
    if (imagesPerSecond >= 1e6) return QObject::tr("%1 M images/s").arg(imagesPerSecond / 1e6, 0, 'g', 3);
    if (imagesPerSecond >= 1e4) return QObject::tr("%1 k images/s").arg(imagesPerSecond / 1e3, 0, 'g', 3);
    if (imagesPerSecond >= 100) return QObject::tr("%1 images/s").arg(imagesPerSecond, 0, 'f', 0);
    return QObject::tr("%1 images/s").arg(imagesPerSecond, 0, 'g', 3);
}

BenchChart::BenchChart(QWidget* parent) : QWidget(parent) {
    plot_ = new QCustomPlot(this);
    plot_->setMinimumSize(260, minimumPlotHeightPx);
    plot_->plotLayout()->insertRow(0);
    title_ = new QCPTextElement(plot_, QString());
    plot_->plotLayout()->addElement(0, 0, title_);
    plot_->legend->setVisible(true);
    plot_->plotLayout()->addElement(2, 0, plot_->legend);
    plot_->plotLayout()->setRowStretchFactor(0, 0.001);
    plot_->plotLayout()->setRowStretchFactor(2, 0.001);
    plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot_->legend->setBorderPen(Qt::NoPen);
    plot_->legend->setMargins(QMargins(4, 0, 4, 2));
    plot_->legend->setRowSpacing(0);
    plot_->installEventFilter(this);
    // Each layout knows the margins its tick labels take and how many rows the legend wraps into.
    connect(plot_, &QCustomPlot::afterLayout, this, &BenchChart::fitHeightToContents);

    note_ = new QLabel(this);
    note_->setObjectName("chartNote");
    note_->setAlignment(Qt::AlignCenter);
    note_->setWordWrap(true);
    note_->setMargin(24);
    note_->setForegroundRole(QPalette::PlaceholderText);
    note_->setAutoFillBackground(true);
    note_->setBackgroundRole(QPalette::Base);

    stack_ = new QStackedLayout(this);
    stack_->setContentsMargins(0, 0, 0, 0);
    stack_->addWidget(plot_);
    stack_->addWidget(note_);
    applyPalette();
}

QString BenchChart::title() const { return title_->text(); }

QString BenchChart::emptyNote() const { return stack_->currentWidget() == note_ ? note_->text() : QString(); }

void BenchChart::setTitle(const QString& title) { title_->setText(title); }

void BenchChart::showEmptyNote(const QString& note) {
    note_->setText(title_->text() + QStringLiteral("\n\n") + note);
    stack_->setCurrentWidget(note_);
}

void BenchChart::showPlot() {
    stack_->setCurrentWidget(plot_);
    fitLegendColumns(plot_);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void BenchChart::applyPalette() {
    const QPalette colors = palette();
    const QColor text = colors.color(QPalette::Text);
    QColor grid = colors.color(QPalette::Mid);
    grid.setAlphaF(0.6f);
    plot_->setBackground(colors.color(QPalette::Base));
    plot_->axisRect()->setBackground(colors.color(QPalette::Base));
    for (QCPAxis* axis : plot_->axisRect()->axes()) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->setTickLabelFont(font());
        axis->setLabelFont(font());
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    }
    plot_->legend->setBrush(colors.color(QPalette::Base));
    plot_->legend->setTextColor(text);
    plot_->legend->setFont(font());
    QFont titleFont = font();
    titleFont.setBold(true);
    title_->setFont(titleFont);
    title_->setTextColor(text);
    restyle();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

// The plot is at least as tall as its title, axis rect (with the room a chart asks for its bars)
// and legend need: in a short window the page scrolls instead of cutting the legend off at the
// bottom or running the bars' labels into each other.
void BenchChart::fitHeightToContents() {
    plot_->setMinimumHeight(std::max(minimumPlotHeightPx, plot_->plotLayout()->minimumOuterSizeHint().height()));
}

bool BenchChart::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::Resize) {
        fitLegendColumns(plot_);
        fitToWidth();
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
    return QWidget::eventFilter(watched, event);
}

void BenchChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) applyPalette();
    QWidget::changeEvent(event);
}

void BenchChart::exportCharts(const QList<BenchChart*>& charts, const QString& path, int width, int height) {
    QList<QCustomPlot*> plots;
    for (BenchChart* chart : charts) plots.append(chart->plot());
    exportPlots(plots, path, QSize(width, height));
}

}  // namespace cnnstudio::ui
