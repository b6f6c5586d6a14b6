#include "cnnstudio/ui/hardware/bench_sweep_runner.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include "cnnstudio/error.h"

namespace cnnstudio::ui {
namespace {

// The record of a configuration the benchmark did not report (it never got there).
BenchConfiguration unreached(const SweepConfiguration& configuration, int batch, BenchStatus status,
                             const QString& error) {
    BenchConfiguration record;
    record.label = configuration.label().toStdString();
    record.backend = configuration.backend.toStdString();
    record.precision = configuration.precision.toStdString();
    record.threads = configuration.threads;
    record.batch = batch;
    record.ranks = configuration.isGpu() ? configuration.gpus * configuration.nodes : 1;
    record.nodes = configuration.nodes;
    record.devices = configuration.isGpu() ? "gpu" : "cpu";
    record.status = status;
    record.error = error.toStdString();
    return record;
}

}  // namespace

BenchSweepRunner::BenchSweepRunner(QObject* parent) : QObject(parent), benchProgram_(defaultBenchProgram()) {}

BenchSweepRunner::~BenchSweepRunner() {
    if (process_ && process_->state() != QProcess::NotRunning) {
        process_->disconnect(this);
        killProcessGroup(*process_);
        process_->waitForFinished(3000);
    }
}

QString BenchSweepRunner::defaultBenchProgram() {
    return QDir(QCoreApplication::applicationDirPath()).filePath("cnnstudio-bench");
}

void BenchSweepRunner::start(const SweepPlan& plan, const HardwareInfo& hardware) {
    if (running_) throw Error("a sweep is running already", "Hardware page", "cancel it or wait for it to end");
    if (const QStringList problems = plan.problems(hardware); !problems.isEmpty())
        throw Error(problems.join(' ').toStdString(), "sweep configurations", "change the choices on the Hardware page");
    auto scratch = std::make_unique<QTemporaryDir>();
    if (!scratch->isValid())
        throw Error("cannot make a temporary folder: " + scratch->errorString().toStdString(), "",
                    "check the free space in the temporary folder");
    QString hostfile;
    if (plan.nodes > 1) {
        hostfile = scratch->filePath("hostfile");
        QFile file(hostfile);
        if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(plan.hostfileText.toUtf8()) < 0)
            throw Error("cannot write the hostfile: " + file.errorString().toStdString(), hostfile.toStdString());
    }
    QString designedSpecFile;
    if (plan.designed) {
        designedSpecFile = scratch->filePath("designed-network.json");
        plan.designed->spec.save(designedSpecFile.toStdString());
    }
    scratch_ = std::move(scratch);
    plan_ = plan;
    hardware_ = hardware;
    queue_ = plan.configurations();
    reportFile_ = scratch_->filePath("report.json");
    lastArguments_ = plan.benchArguments(reportFile_, hostfile, designedSpecFile);
    cancelRequested_ = false;
    savedCopy_.clear();
    running_ = true;
    stdoutLines_.clear();
    stderrTail_.clear();

    if (process_) {
        process_->disconnect(this);
        process_->deleteLater();
    }
    process_ = new QProcess(this);
    process_->setProgram(benchProgram_);
    process_->setArguments(lastArguments_);
    // Its own process group, so that Cancel reaches mpirun's ranks too.
    startsOwnProcessGroup(*process_);
    connect(process_, &QProcess::readyReadStandardOutput, this, &BenchSweepRunner::readStandardOutput);
    connect(process_, &QProcess::readyReadStandardError, this, &BenchSweepRunner::readStandardError);
    connect(process_, &QProcess::finished, this, &BenchSweepRunner::handleExit);
    connect(process_, &QProcess::errorOccurred, this, &BenchSweepRunner::handleProcessError);
    emit progress(0, int(queue_.size()), queue_.isEmpty() ? QString() : queue_.first().label());
    process_->start(QIODevice::ReadOnly);
}

void BenchSweepRunner::cancel() {
    if (!running_) return;
    cancelRequested_ = true;
    if (process_ && process_->state() != QProcess::NotRunning) killProcessGroup(*process_);
}

void BenchSweepRunner::readStandardOutput() {
    for (const QByteArray& line : stdoutLines_.append(process_->readAllStandardOutput())) handleLine(line);
}

void BenchSweepRunner::readStandardError() {
    stderrTail_.append(process_->readAllStandardError());
}

void BenchSweepRunner::handleLine(const QByteArray& raw) {
    const QByteArray line = raw.trimmed();
    if (!line.startsWith('{')) return;  // the table cnnstudio-bench prints for people
    const nlohmann::json event = nlohmann::json::parse(line.toStdString(), nullptr, false);
    if (!event.is_object()) return;
    if (event.value("event", "") == "bench_finished") {
        savedCopy_ = QString::fromStdString(event.value("saved_copy", ""));
        return;
    }
    if (event.value("event", "") != "bench_progress") return;
    const int index = event.value("index", 0), count = event.value("count", int(queue_.size()));
    emit progress(index, count, QString::fromStdString(event.value("label", "")));
}

void BenchSweepRunner::handleExit(int exitCode, QProcess::ExitStatus status) {
    readStandardOutput();
    readStandardError();
    const QString tail = stderrTail_.finish().join('\n').trimmed();
    if (cancelRequested_) finish(tr("cancelled before it finished"));
    else if (status == QProcess::CrashExit) finish(tr("cnnstudio-bench crashed before it got here. %1").arg(tail));
    else if (exitCode != 0) finish(tr("cnnstudio-bench exited with code %1 before it got here. %2").arg(exitCode).arg(tail));
    else finish(tr("cnnstudio-bench ended without measuring it. %1").arg(tail));
}

void BenchSweepRunner::handleProcessError(QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;  // crashes arrive through finished()
    finish(tr("Could not start the benchmark %1: %2. Build the cnnstudio-bench target; it must sit next to the "
              "cnnstudio executable.")
               .arg(benchProgram_, process_->errorString()));
}

void BenchSweepRunner::finish(const QString& unreachedReason) {
    // The benchmark rewrites its report after every configuration: what is there was measured.
    BenchReport report;
    QString unreadable;
    if (QFileInfo::exists(reportFile_)) {
        try {
            report = loadBenchReport(reportFile_.toStdString());
        } catch (const std::exception& error) {
            unreadable = tr("its report could not be read: %1").arg(QString::fromUtf8(error.what()));
        }
    }
    if (report.created.empty()) {
        report.created = utcSecondsTimestamp();
        report.machine = describeMachine(hardware_);
        report.network.name = plan_.networkName().toStdString();
        report.tool.program = "cnnstudio-bench";
    }
    report.tool.command = (QFileInfo(benchProgram_).fileName() + ' ' + lastArguments_.join(' ')).toStdString();
    const bool cancelled = cancelRequested_;
    for (qsizetype i = qsizetype(report.configurations.size()); i < queue_.size(); ++i)
        report.configurations.push_back(unreached(queue_[i], plan_.batch,
                                                  cancelled ? BenchStatus::Cancelled : BenchStatus::Failed,
                                                  unreadable.isEmpty() ? unreachedReason.trimmed() : unreadable));
    running_ = false;
    scratch_.reset();
    emit finished(report, cancelled);
}

}  // namespace cnnstudio::ui
