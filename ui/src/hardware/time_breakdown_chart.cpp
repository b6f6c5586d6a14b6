#include "cnnstudio/ui/hardware/time_breakdown_chart.h"

#include <algorithm>

#include <QFontMetrics>

#include <qcustomplot.h>

#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

// The hue of a category: the layer categories as the designer's palette colours them, the rest
// from the series colours.
QColor categoryColour(const QString& category, const QPalette& palette) {
    static const QStringList order{"convolution", "batch_norm", "activation", "pooling", "dense",
                                   "loss",        "update",     "communication", "other"};
    static const int hues[] = {0, 4, 2, 1, 9, 3, 5, 6, 7};
    const qsizetype index = order.indexOf(category);
    return seriesColor(index < 0 ? 7 : hues[index], palette);
}

}  // namespace

QString breakdownCategoryTitle(const QString& category) {
    if (category == "batch_norm") return QObject::tr("batch norm");
    if (category == "update") return QObject::tr("optimiser update");
    return QString(category).replace('_', ' ');
}

TimeBreakdownChart::TimeBreakdownChart(QWidget* parent) : BenchChart(parent) {
    setObjectName("timeBreakdownChart");
    plot()->xAxis->setLabel(tr("share of a training step (%)"));
    plot()->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    plot()->yAxis->grid()->setVisible(false);
    setTitle(tr("Where the time goes"));
    showEmptyNote(tr("Run a sweep or open a report to see where a training step's time goes."));
}

void TimeBreakdownChart::setData(const std::vector<ComparedConfiguration>& configurations) {
    QCustomPlot* chart = plot();
    chart->clearPlottables();
    chart->clearItems();
    stacks_.clear();
    keyByLabel_.clear();
    totalByLabel_.clear();
    setTitle(tr("Where a training step's time goes"));
    std::vector<const ComparedConfiguration*> profiled;
    for (const ComparedConfiguration& configuration : configurations)
        if (configuration.configuration.breakdownMs.totalMs() > 0) profiled.push_back(&configuration);
    // Each bar's label takes two lines: the bars get rows that tall, and the chart grows (the page
    // scrolls) rather than run one bar's label into the next.
    const int rowHeightPx = 2 * QFontMetrics(chart->yAxis->tickLabelFont()).lineSpacing();
    chart->axisRect()->setMinimumSize(0, int(profiled.size()) * rowHeightPx);
    if (profiled.empty()) {
        showEmptyNote(tr("These reports hold no per-layer times."));
        return;
    }
    // A category joins the stack when some configuration spends time in it.
    for (const std::string& name : BenchBreakdown::categories()) {
        const bool used = std::ranges::any_of(profiled, [&](const ComparedConfiguration* c) {
            return c->configuration.breakdownMs.at(name) > 0;
        });
        if (!used) continue;
        auto* bars = new QCPBars(chart->yAxis, chart->xAxis);
        const QString category = QString::fromStdString(name);
        bars->setName(breakdownCategoryTitle(category));
        bars->setWidth(0.7);
        bars->setStackingGap(0);
        if (!stacks_.empty()) bars->moveAbove(stacks_.back().bars);
        stacks_.push_back({category, bars});
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int count = int(profiled.size());
    for (int i = 0; i < count; ++i) {
        const ComparedConfiguration& configuration = *profiled[std::size_t(i)];
        const BenchBreakdown& breakdown = configuration.configuration.breakdownMs;
        const double key = count - i;
        const double total = breakdown.totalMs();
        for (const Stack& stack : stacks_) stack.bars->addData(key, 100.0 * breakdown.at(stack.category.toStdString()) / total);
        // The step's total under the label, where a narrow chart never cuts it off.
        const QString stepTotal = total >= 100 ? tr("%1 ms").arg(total, 0, 'f', 0) : tr("%1 ms").arg(total, 0, 'g', 3);
        ticker->addTick(key, configuration.barLabel + '\n' + stepTotal);
        keyByLabel_.insert(configuration.barLabel, key);
        totalByLabel_.insert(configuration.barLabel, stepTotal);
    }
    chart->yAxis->setTicker(ticker);
    chart->yAxis->setRange(0.3, count + 0.7);
    chart->xAxis->setRange(0, 100);
    auto percentTicker = QSharedPointer<QCPAxisTickerFixed>::create();
    percentTicker->setTickStep(20);
    percentTicker->setScaleStrategy(QCPAxisTickerFixed::ssNone);
    chart->xAxis->setTicker(percentTicker);
    restyle();
    showPlot();
}

std::optional<double> TimeBreakdownChart::drawnShare(const QString& barLabel, const QString& category) const {
    if (!keyByLabel_.contains(barLabel)) return std::nullopt;
    for (const Stack& stack : stacks_) {
        if (stack.category != category) continue;
        const auto point = stack.bars->data()->findBegin(keyByLabel_.value(barLabel), false);
        if (point == stack.bars->data()->constEnd()) return std::nullopt;
        return point->value;
    }
    return std::nullopt;
}

QStringList TimeBreakdownChart::drawnCategories() const {
    QStringList categories;
    for (const Stack& stack : stacks_) categories << stack.category;
    return categories;
}

QString TimeBreakdownChart::totalText(const QString& barLabel) const { return totalByLabel_.value(barLabel); }

void TimeBreakdownChart::restyle() {
    const QPalette colors = palette();
    for (const Stack& stack : stacks_) {
        const QColor colour = categoryColour(stack.category, colors);
        stack.bars->setBrush(colour);
        stack.bars->setPen(QPen(colors.color(QPalette::Base), 1));
    }
}

}  // namespace cnnstudio::ui
