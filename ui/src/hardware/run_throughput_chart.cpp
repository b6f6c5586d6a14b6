#include "cnnstudio/ui/hardware/run_throughput_chart.h"

#include <qcustomplot.h>

#include "common/layer_colors.h"
#include "cnnstudio/ui/common/formatting.h"

namespace cnnstudio::ui {
namespace {

int backendColourIndex(const QString& backend) {  // as on the speedup chart
    if (backend == "cpu-ref") return 7;
    if (backend == "cpu") return 0;
    if (backend == "cuda") return 1;
    if (backend == "cudnn") return 2;
    return 4;
}

}  // namespace

RunThroughputChart::RunThroughputChart(QWidget* parent) : BenchChart(parent) {
    setObjectName("runThroughputChart");
    plot()->xAxis->setLabel(tr("training images/s (median over epochs, then over runs)"));
    plot()->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    plot()->yAxis->grid()->setVisible(false);
    plot()->legend->setVisible(true);
    setTitle(tr("Measured by training runs"));
    showEmptyNote(tr("No finished training run yet."));
}

void RunThroughputChart::setGroups(const QList<RunThroughputGroup>& groups, const QString& runsRoot) {
    QCustomPlot* chart = plot();
    chart->clearPlottables();
    chart->clearItems();
    bars_.clear();
    labels_.clear();
    groups_ = groups;
    setTitle(tr("Training throughput of the finished runs in %1").arg(runsRoot));
    if (groups.isEmpty()) {
        showEmptyNote(tr("No finished training run in %1 yet. Train a network on the Train page; its measured "
                         "images/s appear here by backend and hardware.").arg(runsRoot));
        return;
    }
    QMap<QString, QCPBars*> byBackend;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double largest = 0;
    const int count = int(groups.size());
    for (int i = 0; i < count; ++i) {
        const RunThroughputGroup& group = groups[i];
        QCPBars*& bars = byBackend[group.backend];
        if (!bars) {
            bars = new QCPBars(chart->yAxis, chart->xAxis);
            bars->setName(group.backend);
            bars->setWidth(0.7);
            bars_ << bars;
        }
        const double key = count - i;
        bars->addData(key, group.medianImagesPerSecond);
        ticker->addTick(key, group.label);
        largest = std::max(largest, group.medianImagesPerSecond);
        auto* text = new QCPItemText(chart);
        text->position->setAxes(chart->xAxis, chart->yAxis);
        text->position->setCoords(group.medianImagesPerSecond, key);
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        text->setPadding(QMargins(6, 0, 0, 0));
        text->setClipToAxisRect(false);
        text->setText(tr("%1 (%2)").arg(formatImagesPerSecond(group.medianImagesPerSecond), countOf(group.runs, tr("run"), tr("runs"))));
        labels_ << text;
    }
    chart->yAxis->setTicker(ticker);
    chart->yAxis->setRange(0.3, count + 0.7);
    chart->xAxis->setRange(0, largest > 0 ? largest * 1.5 : 1);
    restyle();
    showPlot();
}

QStringList RunThroughputChart::drawnLabels() const {
    QStringList texts;
    for (const QCPItemText* label : labels_) texts << label->text();
    return texts;
}

void RunThroughputChart::restyle() {
    const QPalette colors = palette();
    for (QCPBars* bars : bars_) {
        const QColor colour = seriesColor(backendColourIndex(bars->name()), colors);
        bars->setBrush(colour);
        bars->setPen(QPen(colour.darker(115), 1));
    }
    for (QCPItemText* label : labels_) {
        label->setColor(colors.color(QPalette::Text));
        label->setFont(font());
    }
}

}  // namespace cnnstudio::ui
