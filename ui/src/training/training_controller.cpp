#include "cnnstudio/ui/training/training_controller.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTemporaryDir>

#include "cnnstudio/error.h"
#include "cnnstudio/run_folder.h"

namespace cnnstudio::ui {

TrainingController::TrainingController(QObject* parent)
    : QObject(parent), workerProgram_(defaultWorkerProgram()) {}

TrainingController::~TrainingController() {
    if (process_ && process_->state() != QProcess::NotRunning) {
        process_->disconnect(this);
        killProcessGroup(*process_);
        process_->waitForFinished(3000);
    }
}

QString TrainingController::defaultWorkerProgram() {
    return QDir(QCoreApplication::applicationDirPath()).filePath("cnnstudio-train");
}

QString TrainingController::newRunDirectory(const QString& runsRoot, const QString& modelName) {
    QString model = modelName;
    model.replace(QRegularExpression("[^A-Za-z0-9_.-]+"), "-");
    if (model.isEmpty()) model = "run";
    const QString base = QDir(runsRoot).filePath(QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss") + '-' + model);
    QString candidate = base;
    for (int suffix = 2; QFileInfo::exists(candidate); ++suffix) candidate = base + '-' + QString::number(suffix);
    return candidate;
}

void TrainingController::start(const RunSettings& settings, const NetworkSpec& spec, const QString& runDir) {
    if (isRunning())
        throw Error("a training run is going already", runDirectory_.toStdString(), "stop it first");
    if (const QStringList problems = settings.problems(); !problems.isEmpty())
        throw Error(problems.join(' ').toStdString(), "run settings", "fix the settings on the Train page");
    auto scratch = std::make_unique<QTemporaryDir>();
    if (!scratch->isValid())
        throw Error("cannot make a temporary folder: " + scratch->errorString().toStdString(), "",
                    "check the free space in the temporary folder");
    const QString specFile = scratch->filePath(RunFolder::kSpecFileName);
    spec.save(specFile.toStdString());
    QString hostfile;
    if (settings.nodeCount > 1) {
        hostfile = scratch->filePath("hostfile");
        QFile file(hostfile);
        if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(settings.hostfileText.toUtf8()) < 0)
            throw Error("cannot write the hostfile: " + file.errorString().toStdString(), hostfile.toStdString());
    }
    scratch_ = std::move(scratch);
    launch(settings.workerArguments(specFile, runDir, hostfile), runDir, settings.visibleDevices());
}

void TrainingController::resume(const QString& runDir) {
    if (isRunning())
        throw Error("a training run is going already", runDirectory_.toStdString(), "stop it first");
    if (!QFileInfo::exists(QDir(runDir).filePath(RunFolder::kConfigFileName)))
        throw Error(std::string("this folder holds no ") + RunFolder::kConfigFileName, runDir.toStdString(),
                    "pick a run folder to resume");
    scratch_.reset();
    launch({"--resume", runDir, "--events", "-"}, runDir, {});
}

void TrainingController::launch(const QStringList& arguments, const QString& runDir, const QString& visibleDevices) {
    if (process_) {
        process_->disconnect(this);
        process_->deleteLater();
    }
    process_ = new QProcess(this);
    process_->setProgram(workerProgram_);
    process_->setArguments(arguments);
    if (!visibleDevices.isEmpty()) {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("CUDA_VISIBLE_DEVICES", visibleDevices);
        process_->setProcessEnvironment(environment);
    }
    // Its own process group: Kill ends the worker and everything it started (a distributed run's
    // mpirun and ranks, which also end when the launcher dies), not the launcher alone.
    startsOwnProcessGroup(*process_);
    connect(process_, &QProcess::readyReadStandardOutput, this, &TrainingController::readStandardOutput);
    connect(process_, &QProcess::readyReadStandardError, this, &TrainingController::readStandardError);
    connect(process_, &QProcess::finished, this, &TrainingController::handleExit);
    connect(process_, &QProcess::errorOccurred, this, &TrainingController::handleProcessError);
    connect(process_, &QProcess::started, this, [this] { emit runStarted(runDirectory_); });

    runDirectory_ = runDir;
    lastArguments_ = arguments;
    stdoutLines_.clear();
    stderrTail_.clear();
    finishedEvent_ = {};
    failedReason_.clear();
    sawFinished_ = sawFailed_ = killRequested_ = false;
    setState(State::Running);
    process_->start(QIODevice::ReadOnly);
}

void TrainingController::stop() {
    if (!process_ || process_->state() == QProcess::NotRunning) return;
    setState(State::Stopping);
    process_->terminate();
}

void TrainingController::kill() {
    if (!process_ || process_->state() == QProcess::NotRunning) return;
    killRequested_ = true;
    killProcessGroup(*process_);
}

void TrainingController::readStandardOutput() {
    for (const QByteArray& line : stdoutLines_.append(process_->readAllStandardOutput())) handleLine(line);
}

void TrainingController::readStandardError() {
    stderrTail_.append(process_->readAllStandardError());
}

void TrainingController::handleLine(const QByteArray& raw) {
    const QByteArray line = raw.trimmed();
    if (line.isEmpty()) return;
    const std::optional<nlohmann::json> object = parseEventLine(line.toStdString());
    if (!object) {
        emit outputLine(QString::fromUtf8(line));
        return;
    }
    const std::optional<Event> event = parseEvent(*object);
    if (!event) return;  // another schema version or an event this reader does not know
    if (const auto* finished = event->as<FinishedEvent>()) {
        sawFinished_ = true;
        finishedEvent_ = *finished;
    } else if (const auto* failed = event->as<FailedEvent>()) {
        sawFailed_ = true;
        failedReason_ = QString::fromStdString(failed->reason);
    }
    emit eventReceived(*event);
}

void TrainingController::handleExit(int exitCode, QProcess::ExitStatus status) {
    // Whatever is still buffered arrived before the exit: events first, then the verdict.
    readStandardOutput();
    if (const QByteArray rest = stdoutLines_.rest(); !rest.isEmpty()) handleLine(rest);
    readStandardError();
    stderrTail_.finish();
    scratch_.reset();
    setState(State::Idle);
    const QString tail = stderrTail_.lines().join('\n');
    if (sawFinished_) {
        emit runFinished(finishedEvent_);
    } else if (sawFailed_) {
        emit runFailed(failedReason_, tail);
    } else if (killRequested_) {
        emit runKilled(tail);
    } else if (status == QProcess::CrashExit) {
        emit runFailed(tr("The worker crashed before it finished."), tail);
    } else {
        emit runFailed(tr("The worker exited with code %1 without finishing the run.").arg(exitCode), tail);
    }
}

void TrainingController::handleProcessError(QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;  // crashes arrive through finished()
    scratch_.reset();
    setState(State::Idle);
    emit runFailed(tr("Could not start the worker %1: %2. Build the cnnstudio-train target; it must sit "
                      "next to the cnnstudio executable.")
                       .arg(workerProgram_, process_->errorString()),
                   {});
}

void TrainingController::setState(State state) {
    if (state_ == state) return;
    state_ = state;
    emit stateChanged(state);
}

}  // namespace cnnstudio::ui
