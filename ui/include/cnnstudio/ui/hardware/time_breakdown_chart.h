// TimeBreakdownChart: where a training step's time goes, one stacked bar per configuration:
// convolution, batch norm, activation, pooling, dense, loss, optimiser update, communication
// (and other), as shares of the step so that a GPU's bar reads beside a CPU's, the step's total in
// milliseconds under each bar's label.
#pragma once

#include <vector>

#include <QMap>

#include "cnnstudio/ui/hardware/bench_chart.h"
#include "cnnstudio/ui/hardware/hardware_comparison.h"

class QCPBars;

namespace cnnstudio::ui {

class TimeBreakdownChart : public BenchChart {
    Q_OBJECT

public:
    explicit TimeBreakdownChart(QWidget* parent = nullptr);

    void setData(const std::vector<ComparedConfiguration>& configurations);

    // The drawn share (percent) of `category` in the bar of `barLabel`; none when not drawn.
    std::optional<double> drawnShare(const QString& barLabel, const QString& category) const;
    QStringList drawnCategories() const;  // the report's names ("batch_norm"), bottom of the stack first
    QString totalText(const QString& barLabel) const;  // "12.4 ms"

protected:
    void restyle() override;

private:
    struct Stack {
        QString category;
        QCPBars* bars;
    };
    std::vector<Stack> stacks_;
    QMap<QString, double> keyByLabel_;
    QMap<QString, QString> totalByLabel_;  // "12.4 ms", shown under the bar's label
};

// "batch_norm" -> "batch norm", "update" -> "optimiser update".
QString breakdownCategoryTitle(const QString& category);

}  // namespace cnnstudio::ui
