// RunHistoryArea: the Run history page — the RunHistoryPanel listing the runs folder on the left,
// a TrainingDashboard on the right replaying the run opened from it, with the curves of any
// number of other runs overlaid when runs are compared. Resuming a run is the training session's
// business: the panel's resumeRequested goes to it through the window, which tells this page when
// a run starts or ends, so that the list and the replay never show a run as it was.
#pragma once

#include <QList>
#include <QStringList>
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
    // The dashboard shows the first run with the others' curves overlaid, each in its own colour.
    void compareRuns(const QStringList& runDirectories);
    QStringList shownRuns() const;  // the opened run, then the compared ones

public slots:
    // The run in this folder started training (training is true) or ended: the list is read
    // again, and the replay too when it shows that run.
    void runChanged(const QString& runDirectory, bool training);

signals:
    void message(const QString& text);  // for the status bar: lines of an event log skipped

private:
    void clearComparisons();

    RunHistoryPanel* panel_;
    TrainingDashboard* dashboard_;
    TrainingRun* openedRun_;
    QList<TrainingRun*> comparedRuns_;
};

}  // namespace cnnstudio::ui
