#include "cnnstudio/ui/training/training_session.h"

#include <QStringList>

#include "cnnstudio/error.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/ui/training/training_controller.h"
#include "cnnstudio/ui/training/training_run.h"

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

}  // namespace

TrainingSession::TrainingSession(QObject* parent)
    : QObject(parent), controller_(new TrainingController(this)), liveRun_(new TrainingRun(this)) {
    connect(controller_, &TrainingController::eventReceived, liveRun_, &TrainingRun::addEvent);
}

bool TrainingSession::isRunning() const { return controller_->isRunning(); }

std::optional<TrainingSession::Refusal> TrainingSession::start(const RunSettings& settings, const NetworkSpec& spec,
                                                               const ShapeReport& report, const QString& runsRoot) {
    if (const QStringList problems = settings.problems(); !problems.isEmpty())
        return Refusal{Refusal::Page::Train, tr("Cannot train yet"), problems.join('\n')};
    if (!report.ok())
        return Refusal{Refusal::Page::Design, tr("The network has problems"),
                       tr("Fix these on the Design page first:\n%1").arg(problemLines(report))};
    const QString runDirectory =
        TrainingController::newRunDirectory(runsRoot, QString::fromStdString(spec.name));
    liveRun_->clear();
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
        emit launching();
        controller_->resume(runDirectory);
    } catch (const Error& error) {
        return Refusal{Refusal::Page::None, tr("Resume"), QString::fromStdString(error.what())};
    }
    return std::nullopt;
}

void TrainingSession::stop() { controller_->stop(); }

void TrainingSession::kill() { controller_->kill(); }

}  // namespace cnnstudio::ui
