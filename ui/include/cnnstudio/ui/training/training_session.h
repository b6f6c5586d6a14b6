// TrainingSession: the life of the run being trained — start a new run of the designed network,
// resume a stopped one, stop it gracefully or kill it — around one TrainingController (the
// worker process) and the live TrainingRun it feeds. It has no widgets: the Train page and the
// window's Run menu drive it, and so can tests.
#pragma once

#include <optional>

#include <QObject>
#include <QString>

#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/training/network_fit.h"
#include "cnnstudio/ui/training/run_settings.h"

namespace cnnstudio::ui {

class TrainingController;
class TrainingRun;

class TrainingSession : public QObject {
    Q_OBJECT

public:
    // Why a run did not start: what to tell the user and, when the fix is on a page, which one.
    struct Refusal {
        enum class Page { None, Design, Train };
        Page fixOn = Page::None;
        QString title, message;
    };

    explicit TrainingSession(QObject* parent = nullptr);

    TrainingController* controller() const { return controller_; }
    TrainingRun* liveRun() const { return liveRun_; }
    bool isRunning() const;

    // Starts `spec` (analysed as `report`, fitted to the data set as `fit`) with `settings` in a
    // fresh folder under runsRoot. Nothing when it started; otherwise why not, with nothing changed.
    std::optional<Refusal> start(const RunSettings& settings, const NetworkSpec& spec, const ShapeReport& report,
                                 const NetworkFit& fit, const QString& runsRoot);
    // Continues a stopped or failed run: its recorded events are replayed into the live run first,
    // so the curves go on from where they were.
    std::optional<Refusal> resume(const QString& runDirectory);
    void stop();  // the worker writes a checkpoint and ends the run as "stopped"
    void kill();  // the worker ends at once; the run keeps its last checkpoint

signals:
    // A run (new or resumed) is about to launch: the live run holds what is known of it already.
    void launching();
    // The run in this folder ended, however it ended; its record on disk is complete.
    void runEnded(const QString& runDirectory);
    void message(const QString& text);  // for the status bar

private:
    void endWithoutFinalEvent(const QString& reason, const QString& stderrTail);
    void endKilledByUser();
    void recordEndOfRun(const QString& runDirectory, const QString& reason, bool killedByUser);

    TrainingController* controller_;
    TrainingRun* liveRun_;
    NetworkSpec launchedSpec_;  // the network of the run started last; empty for a resumed one
};

}  // namespace cnnstudio::ui
