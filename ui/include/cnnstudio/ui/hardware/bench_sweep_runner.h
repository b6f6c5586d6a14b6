// BenchSweepRunner: runs a sweep of the Hardware page in the headless benchmark, `cnnstudio-bench`
// (found next to the cnnstudio executable): one process measuring every configuration (one
// `--config` each), started with QProcess and an argument list, never a shell, as the leader of
// its own process group, so that Cancel ends it and everything it started (mpirun and its
// ranks) at once. It reads the JSON-lines progress on standard output (`--progress-events`),
// keeps the tail of standard error for a failure, and at the end reads the report the benchmark
// rewrites after each configuration (through cnnstudio/bench_report.h): what it measured is
// there, and the configurations it never reached are added as cancelled (after a Cancel) or
// failed (with the exit and standard error's tail). The GUI never runs the math itself.
#pragma once

#include <memory>

#include <QObject>
#include <QProcess>
#include <QStringList>

#include "cnnstudio/bench_report.h"
#include "cnnstudio/ui/common/worker_process.h"
#include "cnnstudio/ui/hardware/sweep_plan.h"

class QTemporaryDir;

namespace cnnstudio::ui {

class BenchSweepRunner : public QObject {
    Q_OBJECT

public:
    static constexpr int stderrLinesKept = 30;

    explicit BenchSweepRunner(QObject* parent = nullptr);
    ~BenchSweepRunner() override;  // ends a sweep still running, its process group included

    // applicationDirPath()/cnnstudio-bench unless set.
    static QString defaultBenchProgram();
    void setBenchProgram(const QString& program) { benchProgram_ = program; }
    QString benchProgram() const { return benchProgram_; }

    // Starts measuring every configuration of `plan`; `hardware` describes this machine in the
    // report when the benchmark did not get as far as writing one. Throws Error, changing
    // nothing, when a sweep is running or the plan has problems on `hardware`.
    void start(const SweepPlan& plan, const HardwareInfo& hardware);
    // Kills the benchmark's process group; the configurations not finished are recorded as cancelled.
    void cancel();

    bool isRunning() const { return running_; }
    int configurationCount() const { return int(queue_.size()); }
    QStringList lastArguments() const { return lastArguments_; }
    // Where cnnstudio-bench kept its copy of the last finished sweep (the per-user hardware
    // folder, for the Train page's predictions); empty when it kept none.
    QString savedCopy() const { return savedCopy_; }
    // The running benchmark's process id (also its process group's); 0 when none runs.
    qint64 processId() const { return process_ ? process_->processId() : 0; }

signals:
    // Configuration `index` of `count` (0-based), labelled `label`, is being measured.
    void progress(int index, int count, const QString& label);
    // The sweep ended (completed, some failed, or cancelled): every configuration is in the report.
    void finished(const cnnstudio::BenchReport& report, bool cancelled);

private:
    void readStandardOutput();
    void readStandardError();
    void handleLine(const QByteArray& line);
    void handleExit(int exitCode, QProcess::ExitStatus status);
    void handleProcessError(QProcess::ProcessError error);
    // The report of the benchmark, completed with the configurations it did not reach.
    void finish(const QString& unreachedReason);

    QString benchProgram_;
    QProcess* process_ = nullptr;
    std::unique_ptr<QTemporaryDir> scratch_;  // the report being written and the hostfile
    SweepPlan plan_;
    HardwareInfo hardware_;
    QList<SweepConfiguration> queue_;
    bool running_ = false, cancelRequested_ = false;
    QString reportFile_, savedCopy_;
    QStringList lastArguments_;
    LineSplitter stdoutLines_;
    StderrTail stderrTail_{stderrLinesKept};
};

}  // namespace cnnstudio::ui
