// ScalingChart: training images/s against ranks (GPUs, nodes) or CPU threads, one line per
// backend + precision + batch, each beside its ideal line (the one-rank throughput times the
// count, dashed) with the scaling efficiency in percent at every point.
#pragma once

#include <vector>

#include <QMap>

#include "cnnstudio/ui/hardware/bench_chart.h"
#include "cnnstudio/ui/hardware/hardware_comparison.h"

class QCPGraph;
class QCPItemText;

namespace cnnstudio::ui {

class ScalingChart : public BenchChart {
    Q_OBJECT

public:
    explicit ScalingChart(QWidget* parent = nullptr);

    // colourByMachine (reports overlaid): a line's colour is its machine's, as on the speedup
    // chart, and its marker tells the configurations of one machine apart.
    void setData(const std::vector<ScalingSeries>& series, ScalingAxis axis, bool colourByMachine = false);

    struct DrawnPoint {
        QString series;
        int count = 0;
        double imagesPerSecond = 0, idealImagesPerSecond = 0;
        QString efficiencyText;  // "93%"
    };
    QList<DrawnPoint> drawnPoints() const;

protected:
    void restyle() override;

private:
    struct Line {
        QString name;
        QCPGraph* measured;
        QCPGraph* ideal;
        QMap<int, QCPItemText*> labels;  // the efficiency at each count but 1
        int colourIndex = 0;             // into seriesColor
        int markerIndex = 0;             // into the marker shapes
    };
    std::vector<Line> lines_;
};

}  // namespace cnnstudio::ui
