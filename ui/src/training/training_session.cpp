#include "cnnstudio/ui/training/training_session.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStringList>

#include "cnnstudio/error.h"
#include "cnnstudio/event_reader.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/ui/training/training_controller.h"
#include "cnnstudio/ui/training/training_run.h"
#include "training/failed_event.h"

namespace cnnstudio::ui {
namespace {

// "node: message" per problem, one a line, as the Design page's problems list shows them.
QString problemLines(const ShapeReport& report) {
    QStringList lines;
    for (const auto& [node, message] : report.problems)
        lines << (node.empty() ? QString::fromStdString(message)
                               : QStringLiteral("%1: %2").arg(QString::fromStdString(node), QString::fromStdString(message)));
    return lines.join('\n');
}

// True when the folder's event log ends with `finished` or `failed`.
bool hasFinalEvent(const QString& eventsFile) {
    const EventLog log = readEvents(eventsFile.toStdString());
    return !log.events.empty() && (log.events.back().as<FinishedEvent>() || log.events.back().as<FailedEvent>());
}

// A worker killed in the middle of a line leaves it unterminated: the next event starts its own.
void endWithNewline(const QString& eventsFile) {
    QFile file(eventsFile);
    if (!file.open(QIODevice::ReadWrite) || file.size() == 0) return;
    file.seek(file.size() - 1);
    if (file.read(1) != "\n") file.write("\n");
}

// The last line the worker wrote on standard error that says something.
QString lastMessage(const QString& stderrTail) {
    const QStringList lines = stderrTail.split('\n', Qt::SkipEmptyParts);
    return lines.isEmpty() ? QString() : lines.last().trimmed();
}

}  // namespace

TrainingSession::TrainingSession(QObject* parent)
    : QObject(parent), controller_(new TrainingController(this)), liveRun_(new TrainingRun(this)) {
    connect(controller_, &TrainingController::eventReceived, liveRun_, &TrainingRun::addEvent);
    connect(controller_, &TrainingController::runFailed, this, &TrainingSession::endWithoutFinalEvent);
    connect(controller_, &TrainingController::runKilled, this, &TrainingSession::endKilledByUser);
    connect(controller_, &TrainingController::runFinished, this,
            [this] { emit runEnded(controller_->runDirectory()); });
}

bool TrainingSession::isRunning() const { return controller_->isRunning(); }

std::optional<TrainingSession::Refusal> TrainingSession::start(const RunSettings& settings, const NetworkSpec& spec,
                                                               const ShapeReport& report, const NetworkFit& fit,
                                                               const QString& runsRoot) {
    if (const QStringList problems = settings.problems(); !problems.isEmpty())
        return Refusal{Refusal::Page::Train, tr("Cannot train yet"), problems.join('\n')};
    // The refusal brings up the Design page itself, so the message sends the user to no page.
    if (!report.ok())
        return Refusal{Refusal::Page::Design, tr("The network has problems"),
                       tr("Fix these problems in the network first:\n%1").arg(problemLines(report))};
    if (!fit.canTrain()) return Refusal{Refusal::Page::Design, tr("The network does not fit the data set"), fit.refusal};
    if (!fit.memoryRefusal.isEmpty())
        return Refusal{Refusal::Page::Train, tr("The batch does not fit in memory"), fit.memoryRefusal};
    const QString runDirectory =
        TrainingController::newRunDirectory(runsRoot, QString::fromStdString(spec.name));
    liveRun_->clear();
    launchedSpec_ = spec;
    emit launching();
    try {
        controller_->start(settings, spec, runDirectory);
    } catch (const Error& error) {
        return Refusal{Refusal::Page::None, tr("Cannot train"), QString::fromStdString(error.what())};
    }
    return std::nullopt;
}

std::optional<TrainingSession::Refusal> TrainingSession::resume(const QString& runDirectory) {
    if (isRunning()) return Refusal{Refusal::Page::None, tr("Resume"), tr("A run is training already: stop it first.")};
    try {
        liveRun_->loadEventsFile(runDirectory);
        launchedSpec_ = {};
        emit launching();
        controller_->resume(runDirectory);
    } catch (const Error& error) {
        return Refusal{Refusal::Page::None, tr("Resume"), QString::fromStdString(error.what())};
    }
    return std::nullopt;
}

void TrainingSession::endWithoutFinalEvent(const QString& reason, const QString& stderrTail) {
    const QString detail = lastMessage(stderrTail);
    const QString fullReason = detail.isEmpty() ? reason : tr("%1 Its last message: %2").arg(reason, detail);
    liveRun_->endWithoutFinalEvent(fullReason);
    const QString runDirectory = controller_->runDirectory();
    try {
        recordEndOfRun(runDirectory, fullReason, false);
    } catch (const Error& error) {
        emit message(tr("Could not record the failure in %1: %2").arg(runDirectory, QString::fromStdString(error.what())));
    }
    emit runEnded(runDirectory);
}

void TrainingSession::endKilledByUser() {
    liveRun_->endKilledByUser();
    const QString runDirectory = controller_->runDirectory();
    try {
        recordEndOfRun(runDirectory, tr("You killed the worker; the run resumes from its last checkpoint."), true);
    } catch (const Error& error) {
        emit message(tr("Could not record the kill in %1: %2").arg(runDirectory, QString::fromStdString(error.what())));
    }
    emit runEnded(runDirectory);
}

// A run the worker left without a final event (killed, crashed, or a launch that failed before
// the run began) still gets a `failed` event in its folder, so Run history lists it as failed
// with the reason, or as killed when the user killed it (the event's killed_by_user). A launch
// that failed early made no folder: it is made here, with the network it was to train.
void TrainingSession::recordEndOfRun(const QString& runDirectory, const QString& reason, bool killedByUser) {
    if (runDirectory.isEmpty()) return;
    const QString eventsFile = QDir(runDirectory).filePath(RunFolder::kEventsFileName);
    if (QFileInfo::exists(eventsFile)) {
        if (hasFinalEvent(eventsFile)) return;
        endWithNewline(eventsFile);
    } else {
        if (launchedSpec_.nodes.empty()) return;  // a resume of a folder without events: nothing to add to
        RunFolder::create(runDirectory.toStdString()).writeSpec(launchedSpec_);
    }
    appendFailedEvent(eventsFile.toStdString(), reason.toStdString(), liveRun_->currentStep(), liveRun_->currentEpoch(),
                      killedByUser);
}

void TrainingSession::stop() { controller_->stop(); }

void TrainingSession::kill() { controller_->kill(); }

}  // namespace cnnstudio::ui
