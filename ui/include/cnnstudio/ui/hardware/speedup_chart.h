// SpeedupChart: training images/s of every measured configuration as horizontal bars, one
// colour per backend (or per machine when reports are overlaid), each bar labelled with its
// images/s and its speedup over the baseline, which the title names and whose bar says so.
#pragma once

#include <optional>
#include <vector>

#include "cnnstudio/ui/hardware/bench_chart.h"
#include "cnnstudio/ui/hardware/hardware_comparison.h"

class QCPBars;
class QCPItemText;

namespace cnnstudio::ui {

class SpeedupChart : public BenchChart {
    Q_OBJECT

public:
    explicit SpeedupChart(QWidget* parent = nullptr);

    // Draws `configurations` (in order, top to bottom); `baseline` is outlined and named.
    void setData(const std::vector<ComparedConfiguration>& configurations,
                 const std::optional<ComparedConfiguration>& baseline, const QString& baselineName,
                 bool colourByMachine);

    // What the chart draws, read back from its bars and labels (tests check them against the report).
    struct DrawnBar {
        QString label;
        double imagesPerSecond = 0;
        QString valueText;  // "45.2 k images/s · 8.21×"
    };
    QList<DrawnBar> drawnBars() const;

protected:
    void restyle() override;
    void fitToWidth() override;

private:
    struct Bar {
        QCPBars* bars;
        double key;
        QString label;
        QCPItemText* text;
        int colourIndex;
        bool baseline;
    };
    std::vector<Bar> drawn_;
    double largest_ = 0;  // the longest bar's images/s
    QList<QCPBars*> groups_;
    QList<int> groupColours_;
};

}  // namespace cnnstudio::ui
