// TrainingController: runs one training run in the headless worker, `cnnstudio-train` (found next
// to the cnnstudio executable), with QProcess and an argument list — never a shell. It reads the
// worker's JSON Lines events from standard output as they come (partial lines wait for the rest),
// parses them with the engine's event reader (cnnstudio/event_reader.h) and emits one signal per
// event; it keeps the last 50 lines of standard error to show with a failure. Stop asks the
// worker to finish its step and checkpoint (SIGTERM); Kill ends it at once, with everything it
// started (the worker leads its own process group). Several GPUs or nodes are the worker's
// business (--gpus N, --nodes M --hostfile F).
#pragma once

#include <memory>

#include <QObject>
#include <QProcess>
#include <QStringList>

#include "cnnstudio/event_reader.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/common/worker_process.h"
#include "cnnstudio/ui/training/run_settings.h"

class QTemporaryDir;

namespace cnnstudio::ui {

class TrainingController : public QObject {
    Q_OBJECT

public:
    enum class State { Idle, Running, Stopping };
    static constexpr int stderrLinesKept = 50;

    explicit TrainingController(QObject* parent = nullptr);
    ~TrainingController() override;  // kills a worker still running

    // applicationDirPath()/cnnstudio-train unless set.
    static QString defaultWorkerProgram();
    void setWorkerProgram(const QString& program) { workerProgram_ = program; }
    QString workerProgram() const { return workerProgram_; }

    // A fresh folder name under runsRoot: "<yyyyMMdd-HHmmss>-<model>", made unique.
    static QString newRunDirectory(const QString& runsRoot, const QString& modelName);

    // Starts a run of `spec` with `settings`, writing into runDir (created by the worker).
    // Throws Error, changing nothing, when a run is going already or the settings have problems.
    void start(const RunSettings& settings, const NetworkSpec& spec, const QString& runDir);
    // Continues a stopped run from its latest checkpoint; the worker reads the run's config.
    void resume(const QString& runDir);
    void stop();  // graceful: the worker writes a checkpoint and a `finished` event ("stopped")
    void kill();  // immediate

    State state() const { return state_; }
    bool isRunning() const { return state_ != State::Idle; }
    QString runDirectory() const { return runDirectory_; }
    QStringList lastArguments() const { return lastArguments_; }
    QStringList stderrTail() const { return stderrTail_.lines(); }

signals:
    void stateChanged(State state);
    void runStarted(const QString& runDirectory);  // the process is up
    void eventReceived(const cnnstudio::Event& event);
    void outputLine(const QString& line);  // a line of standard output that is not an event
    void runFinished(const cnnstudio::FinishedEvent& finishedEvent);
    // A `failed` event, a crash or an exit without `finished`: why, and standard error's tail.
    void runFailed(const QString& reason, const QString& stderrTail);
    // kill() ended the worker before it wrote `finished` or `failed`.
    void runKilled(const QString& stderrTail);

private:
    void launch(const QStringList& arguments, const QString& runDir, const QString& visibleDevices);
    void readStandardOutput();
    void readStandardError();
    void handleLine(const QByteArray& line);
    void handleExit(int exitCode, QProcess::ExitStatus status);
    void handleProcessError(QProcess::ProcessError error);
    void setState(State state);

    QString workerProgram_;
    QProcess* process_ = nullptr;
    std::unique_ptr<QTemporaryDir> scratch_;  // the spec and hostfile handed to the worker
    State state_ = State::Idle;
    QString runDirectory_;
    QStringList lastArguments_;
    LineSplitter stdoutLines_;
    StderrTail stderrTail_{stderrLinesKept};
    FinishedEvent finishedEvent_;
    QString failedReason_;
    bool sawFinished_ = false, sawFailed_ = false, killRequested_ = false;
};

}  // namespace cnnstudio::ui
