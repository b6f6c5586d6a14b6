// RunHistoryArea: the Run history page — the RunHistoryPanel listing the runs folder on the left,
// a TrainingDashboard on the right replaying the run opened from it, with a second run's curves
// overlaid when two are compared. Resuming a run is the training session's business: the panel's
// resumeRequested goes to it through the window.
#pragma once

#include <QWidget>

namespace cnnstudio::ui {

class RunHistoryPanel;
class TrainingDashboard;
class TrainingRun;

class RunHistoryArea : public QWidget {
    Q_OBJECT

public:
    explicit RunHistoryArea(QWidget* parent = nullptr);
    ~RunHistoryArea() override;

    RunHistoryPanel* panel() const { return panel_; }
    TrainingDashboard* dashboard() const { return dashboard_; }

    // Replays a recorded run in the dashboard and selects it in the list. False, with a message
    // box unless quiet, when it cannot be read.
    bool openRun(const QString& runDirectory, bool quiet = false);
    // The dashboard shows the first run with the second's curves overlaid.
    void compareRuns(const QString& first, const QString& second);

signals:
    void message(const QString& text);  // for the status bar: lines of an event log skipped

private:
    RunHistoryPanel* panel_;
    TrainingDashboard* dashboard_;
    TrainingRun* openedRun_;
    TrainingRun* comparisonRun_;
};

}  // namespace cnnstudio::ui
