// RunThroughputChart: the training throughput measured by real runs of the runs folder, one bar
// per network + backend + hardware group (fastest on top, one colour per backend), labelled with
// its median images/s and the number of runs behind it.
#pragma once

#include "cnnstudio/ui/hardware/bench_chart.h"
#include "cnnstudio/ui/hardware/run_throughput.h"

class QCPBars;
class QCPItemText;

namespace cnnstudio::ui {

class RunThroughputChart : public BenchChart {
    Q_OBJECT

public:
    explicit RunThroughputChart(QWidget* parent = nullptr);

    void setGroups(const QList<RunThroughputGroup>& groups, const QString& runsRoot);
    QList<RunThroughputGroup> groups() const { return groups_; }
    QStringList drawnLabels() const;  // "1.87 k images/s (2 runs)", top to bottom

protected:
    void restyle() override;

private:
    QList<RunThroughputGroup> groups_;
    QList<QCPBars*> bars_;
    QList<QCPItemText*> labels_;
};

}  // namespace cnnstudio::ui
