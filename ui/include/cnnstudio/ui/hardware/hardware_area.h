// HardwareArea: the Hardware page. On the left the SweepPlanner (what to measure, Run, Cancel,
// progress), driving a BenchSweepRunner (cnnstudio-bench in its own processes); on the right the
// reports on show — a sweep just run, reports opened from files, reports of other machines
// overlaid — as the speedup chart over a baseline the user picks, the scaling chart, where a
// step's time goes, the table of numbers, and the throughput of the finished training runs of
// the runs folder. Reports save and open as JSON (cnnstudio/bench_report.h); charts export as
// PNG or PDF, the table as CSV.
#pragma once

#include <QString>
#include <QWidget>

#include "cnnstudio/bench_report.h"
#include "cnnstudio/ui/hardware/hardware_comparison.h"

class QComboBox;
class QLabel;
class QTabWidget;
class QToolButton;

namespace cnnstudio::ui {

class BenchResultsTable;
class BenchSweepRunner;
class RunThroughputChart;
class ScalingChart;
class SpeedupChart;
class SweepPlanner;
class TimeBreakdownChart;

class HardwareArea : public QWidget {
    Q_OBJECT

public:
    explicit HardwareArea(QWidget* parent = nullptr);

    HardwareComparison* comparison() const { return comparison_; }
    SweepPlanner* planner() const { return planner_; }
    BenchSweepRunner* runner() const { return runner_; }
    SpeedupChart* speedupChart() const { return speedup_; }
    ScalingChart* scalingChart() const { return scaling_; }
    TimeBreakdownChart* timeBreakdownChart() const { return breakdown_; }
    BenchResultsTable* resultsTable() const { return table_; }
    RunThroughputChart* runThroughputChart() const { return runs_; }
    QComboBox* baselineChooser() const { return baseline_; }
    QComboBox* scalingAxisChooser() const { return scalingAxis_; }
    QTabWidget* views() const { return views_; }

    // The per-user hardware folder (cnnstudio::hardwareReportFolder()), where cnnstudio-bench keeps
    // a copy of each finished sweep; the Open and Overlay dialogs start there.
    QString reportFolder() const { return reportFolder_; }
    // The runs folder whose finished runs the "Training runs" view measures; read off the GUI thread.
    void setRunsRoot(const QString& runsRoot);
    bool isScanningRuns() const { return scanningRuns_; }

    // Open a report alone / beside the others; false, after a message box unless quiet, when it cannot be read.
    bool openReport(const QString& path, bool quiet = false);
    bool overlayReport(const QString& path, bool quiet = false);
    // Charts (PNG or PDF by the suffix) and the table (CSV). Throw Error naming the file.
    void exportCharts(const QString& path);
    void exportTable(const QString& path);

public slots:
    void runSweep();
    void cancelSweep();
    void refreshRuns();

signals:
    void message(const QString& text);

private:
    QWidget* createToolRow();
    void chooseReportToOpen(bool overlay);
    void chooseReportFile();
    void chooseChartsFile();
    void chooseTableFile();
    void renameMachine();
    void refreshViews();
    void refreshBaselineChoices();
    void sweepEnded(const BenchReport& report, bool cancelled);
    void showError(const QString& title, const QString& text);

    HardwareComparison* comparison_;
    BenchSweepRunner* runner_;
    SweepPlanner* planner_;
    SpeedupChart* speedup_;
    ScalingChart* scaling_;
    TimeBreakdownChart* breakdown_;
    BenchResultsTable* table_;
    RunThroughputChart* runs_;
    QComboBox* baseline_;
    QComboBox* scalingAxis_;
    QLabel* summary_;
    QTabWidget* views_;
    QToolButton* saveButton_ = nullptr;
    QToolButton* exportButton_ = nullptr;
    QToolButton* renameButton_ = nullptr;
    QString reportFolder_;
    QString runsRoot_;
    bool scanningRuns_ = false, rescanWanted_ = false;
};

}  // namespace cnnstudio::ui
