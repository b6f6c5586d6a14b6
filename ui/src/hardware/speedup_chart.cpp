#include "cnnstudio/ui/hardware/speedup_chart.h"

#include <algorithm>
#include <map>

#include <QFontMetrics>

#include <qcustomplot.h>

#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

// The same hue for a backend on every chart: the reference grey, oneDNN blue, ours orange,
// cuDNN green.
int backendColourIndex(const std::string& backend) {
    if (backend == "cpu-ref") return 7;
    if (backend == "cpu") return 0;
    if (backend == "cuda") return 1;
    if (backend == "cudnn") return 2;
    return 4;
}

// Three figures at most below 100 (0.025×, 8.21×, 22.4×), whole numbers above (13600×).
QString formatSpeedup(double speedup) {
    const int decimals = speedup < 10 ? 2 : speedup < 100 ? 1 : 0;
    return QString::number(speedup, 'f', speedup < 0.1 ? 3 : decimals);
}

}  // namespace

SpeedupChart::SpeedupChart(QWidget* parent) : BenchChart(parent) {
    setObjectName("speedupChart");
    plot()->xAxis->setLabel(tr("training images/s (median of repeats)"));
    plot()->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    plot()->yAxis->grid()->setVisible(false);
    setTitle(tr("Speedup"));
    showEmptyNote(tr("Run a sweep or open a report to compare configurations."));
}

void SpeedupChart::setData(const std::vector<ComparedConfiguration>& configurations,
                           const std::optional<ComparedConfiguration>& baseline, const QString& baselineName,
                           bool colourByMachine) {
    QCustomPlot* chart = plot();
    chart->clearPlottables();
    chart->clearItems();
    drawn_.clear();
    groups_.clear();
    groupColours_.clear();
    // Overlaid, colour stands for the machine here and on the scaling chart alike.
    setTitle(colourByMachine ? tr("Training throughput and speedup over %1 (colour: machine)").arg(baselineName)
                             : tr("Training throughput and speedup over %1").arg(baselineName));
    if (configurations.empty()) {
        showEmptyNote(tr("No configuration of these reports ran successfully."));
        return;
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    std::map<QString, QCPBars*> groupByName;
    double largest = 0;
    const int count = int(configurations.size());
    for (int i = 0; i < count; ++i) {
        const ComparedConfiguration& bar = configurations[std::size_t(i)];
        const QString group = colourByMachine ? bar.machine : QString::fromStdString(bar.configuration.backend);
        QCPBars*& bars = groupByName[group];
        if (!bars) {
            bars = new QCPBars(chart->yAxis, chart->xAxis);
            bars->setName(group);
            bars->setWidth(0.7);
            groups_ << bars;
            groupColours_ << (colourByMachine ? bar.reportIndex : backendColourIndex(bar.configuration.backend));
        }
        const double key = count - i;  // the first configuration on top
        const double value = bar.configuration.trainImagesPerSecond.median;
        bars->addData(key, value);
        ticker->addTick(key, bar.barLabel);
        largest = std::max(largest, value);
        const bool isBaseline = baseline && baseline->reportIndex == bar.reportIndex &&
                                baseline->configuration.label == bar.configuration.label;
        auto* text = new QCPItemText(chart);
        text->position->setAxes(chart->xAxis, chart->yAxis);
        text->position->setCoords(value, key);
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        text->setPadding(QMargins(6, 0, 0, 0));
        text->setClipToAxisRect(false);
        QString valueText = formatImagesPerSecond(value);
        if (isBaseline) valueText += tr(" · baseline");
        else if (bar.speedup) valueText += QStringLiteral(" · %1×").arg(formatSpeedup(*bar.speedup));
        text->setText(valueText);
        drawn_.push_back({bars, key, bar.barLabel, text, groupColours_.back(), isBaseline});
    }
    chart->yAxis->setTicker(ticker);
    chart->yAxis->setRange(0.3, count + 0.7);
    largest_ = largest;
    restyle();
    fitToWidth();
    showPlot();
}

QList<SpeedupChart::DrawnBar> SpeedupChart::drawnBars() const {
    QList<DrawnBar> bars;
    for (const Bar& bar : drawn_) {
        const auto point = bar.bars->data()->findBegin(bar.key, false);
        bars << DrawnBar{bar.label, point == bar.bars->data()->constEnd() ? 0.0 : point->value, bar.text->text()};
    }
    return bars;
}

void SpeedupChart::restyle() {
    const QPalette colors = palette();
    for (int i = 0; i < groups_.size(); ++i) {
        const QColor colour = seriesColor(groupColours_[i], colors);
        groups_[i]->setBrush(colour);
        groups_[i]->setPen(QPen(colour.darker(115), 1));
    }
    QFont valueFont = font();
    valueFont.setPointSizeF(font().pointSizeF() * 0.92);
    for (const Bar& bar : drawn_) {
        bar.text->setColor(colors.color(QPalette::Text));
        QFont barFont = valueFont;
        barFont.setBold(bar.baseline);
        bar.text->setFont(barFont);
    }
}

// The value axis ends where the widest label, right of its bar, still fits inside the plot: a
// share of the axis in pixels, so a narrow window gets more room in images/s than a wide one.
void SpeedupChart::fitToWidth() {
    QCustomPlot* chart = plot();
    if (largest_ <= 0) {
        chart->xAxis->setRange(0, 1);
        return;
    }
    // On a resize the plot has its new width but its axis rect still the old one; the margins
    // beside the axis rect (tick labels) do not change with the width.
    const int margins = chart->viewport().width() - chart->axisRect()->width();
    const int axisWidth = chart->width() - margins;
    int widest = 0;
    for (const Bar& bar : drawn_)
        widest = std::max(widest, QFontMetrics(bar.text->font()).horizontalAdvance(bar.text->text()) +
                                      bar.text->padding().left() + 8);
    const double labelShare = axisWidth > 0 ? std::min(0.6, double(widest) / axisWidth) : 0.3;
    chart->xAxis->setRange(0, largest_ / (1.0 - labelShare));
}

}  // namespace cnnstudio::ui
