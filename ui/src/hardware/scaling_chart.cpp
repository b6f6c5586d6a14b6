#include "cnnstudio/ui/hardware/scaling_chart.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include <qcustomplot.h>

#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

// Tell apart the lines of one machine when colour stands for the machine.
const QCPScatterStyle::ScatterShape markers[] = {QCPScatterStyle::ssDisc, QCPScatterStyle::ssSquare,
                                                 QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond,
                                                 QCPScatterStyle::ssTriangleInverted, QCPScatterStyle::ssCross};

}  // namespace

ScalingChart::ScalingChart(QWidget* parent) : BenchChart(parent) {
    setObjectName("scalingChart");
    plot()->yAxis->setLabel(tr("training images/s"));
    setTitle(tr("Scaling"));
    showEmptyNote(tr("Run a sweep or open a report to see how throughput scales."));
}

void ScalingChart::setData(const std::vector<ScalingSeries>& series, ScalingAxis axis, bool colourByMachine) {
    QCustomPlot* chart = plot();
    chart->clearPlottables();
    chart->clearItems();
    lines_.clear();
    const bool ranks = axis == ScalingAxis::Ranks;
    const QString key = colourByMachine ? tr("colour: machine, marker: configuration, dashed: ideal") : tr("dashed: ideal");
    setTitle(ranks ? tr("Scaling over GPUs and nodes (%1)").arg(key) : tr("Scaling over CPU threads (%1)").arg(key));
    if (series.empty()) {
        showEmptyNote(ranks ? tr("These reports hold no backend measured on one and on several ranks. Sweep 1 and 2 or "
                                 "more GPUs (or nodes) of one backend to see its scaling.")
                            : tr("These reports hold no CPU backend measured on one and on several threads. Sweep the "
                                 "cpu backend on 1 and more threads to see its scaling."));
        return;
    }
    // Counts double each step (1, 2, 4, 16): a logarithmic axis spaces them evenly.
    chart->xAxis->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    std::set<int> counts;
    double largest = 0;
    std::map<int, int> linesOfReport;
    for (const ScalingSeries& line : series) {
        Line drawn{line.name, chart->addGraph(), chart->addGraph(), {}, int(lines_.size()), 0};
        if (colourByMachine) {
            drawn.colourIndex = line.reportIndex;
            drawn.markerIndex = linesOfReport[line.reportIndex]++;
        }
        drawn.measured->setName(line.name);
        drawn.ideal->removeFromLegend();
        for (const ScalingSeries::Point& point : line.points) {
            drawn.measured->addData(point.count, point.imagesPerSecond);
            drawn.ideal->addData(point.count, point.idealImagesPerSecond);
            counts.insert(point.count);
            largest = std::max({largest, point.imagesPerSecond, point.idealImagesPerSecond});
            if (point.count == 1 || !point.efficiency) continue;  // one rank is 100% by definition
            auto* label = new QCPItemText(chart);
            label->position->setCoords(point.count, point.imagesPerSecond);
            label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            label->setPadding(QMargins(0, 0, 0, 6));
            label->setText(QStringLiteral("%1%").arg(*point.efficiency * 100, 0, 'f', 0));
            drawn.labels.insert(point.count, label);
        }
        lines_.push_back(drawn);
    }
    for (int count : counts) ticker->addTick(count, QString::number(count));
    chart->xAxis->setTicker(ticker);
    chart->xAxis->setLabel(scalingAxisTitle(axis));
    chart->xAxis->setRange(*counts.begin() / 1.3, *counts.rbegin() * 1.3);
    chart->yAxis->setRange(0, largest * 1.15);
    restyle();
    showPlot();
}

QList<ScalingChart::DrawnPoint> ScalingChart::drawnPoints() const {
    QList<DrawnPoint> points;
    for (const Line& line : lines_) {
        for (auto measured = line.measured->data()->constBegin(), ideal = line.ideal->data()->constBegin();
             measured != line.measured->data()->constEnd(); ++measured, ++ideal) {
            DrawnPoint point{line.name, int(measured->key), measured->value, ideal->value, {}};
            if (const QCPItemText* label = line.labels.value(point.count)) point.efficiencyText = label->text();
            points << point;
        }
    }
    return points;
}

void ScalingChart::restyle() {
    const QPalette colors = palette();
    for (const Line& line : lines_) {
        const QColor colour = seriesColor(line.colourIndex, colors);
        line.measured->setPen(QPen(colour, 2.2));
        const auto marker = markers[std::size_t(line.markerIndex) % std::size(markers)];
        line.measured->setScatterStyle(QCPScatterStyle(marker, colour, colour, 8));
        line.ideal->setPen(QPen(colour, 1.4, Qt::DashLine));
        for (QCPItemText* label : line.labels) {
            label->setColor(colour);
            QFont labelFont = font();
            labelFont.setBold(true);
            label->setFont(labelFont);
        }
    }
}

}  // namespace cnnstudio::ui
