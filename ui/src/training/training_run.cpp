#include "cnnstudio/ui/training/training_run.h"

#include <QDir>
#include <QFileInfo>
#include <QSignalBlocker>

#include "cnnstudio/run_folder.h"

namespace cnnstudio::ui {
namespace {

QString csvNumber(double value) { return QString::number(value, 'g', 8); }

// The run's backend: the event names it; a log from before it did has it in the config.
QString backendOf(const RunStartedEvent& event) {
    if (!event.backend.empty()) return QString::fromStdString(event.backend);
    const auto configured = event.config.find("backend");
    return configured != event.config.end() && configured->is_string()
               ? QString::fromStdString(configured->get<std::string>())
               : QString();
}

}  // namespace

TrainingRun::TrainingRun(QObject* parent) : QObject(parent) {}

void TrainingRun::clear() {
    state_ = State::Empty;
    runDirectory_.clear();
    modelName_.clear();
    datasetName_.clear();
    backend_.clear();
    failureReason_.clear();
    finished_.reset();
    classNames_.clear();
    totalEpochs_ = 0;
    stepsPerEpoch_ = resumedFromStep_ = 0;
    runStartElapsed_ = -1;
    runStartStep_ = 0;
    steps_.clear();
    epochs_.clear();
    confusionMatrix_.clear();
    emit cleared();
}

void TrainingRun::addEvent(const cnnstudio::Event& event) {
    if (const auto* started = event.as<RunStartedEvent>()) startSession(*started);
    else if (const auto* step = event.as<StepEvent>()) addStep(*step);
    else if (const auto* epoch = event.as<EpochEvent>()) addEpoch(*epoch);
    else if (const auto* finished = event.as<FinishedEvent>()) finish(*finished);
    else if (const auto* failed = event.as<FailedEvent>()) fail(*failed);
}

void TrainingRun::startSession(const RunStartedEvent& event) {
    state_ = State::Running;
    failureReason_.clear();
    finished_.reset();
    runDirectory_ = QString::fromStdString(event.runDir);
    datasetName_ = QString::fromStdString(event.dataset.name);
    classNames_.clear();
    for (const std::string& className : event.dataset.classes) classNames_ << QString::fromStdString(className);
    modelName_ = QString::fromStdString(event.model.name);
    backend_ = backendOf(event);
    totalEpochs_ = event.epochs;
    stepsPerEpoch_ = event.stepsPerEpoch;
    resumedFromStep_ = event.resumedFromStep;
    predictedTotalSeconds_.reset();
    if (const auto prediction = event.config.find("prediction");
        prediction != event.config.end() && prediction->is_object() && prediction->value("total_s", 0.0) > 0)
        predictedTotalSeconds_ = prediction->value("total_s", 0.0);
    runStartElapsed_ = -1;
    runStartStep_ = resumedFromStep_;
    // A resumed session continues the curves from its checkpoint: later points are replaced.
    while (!steps_.isEmpty() && steps_.last().step > resumedFromStep_) steps_.removeLast();
    while (!epochs_.isEmpty() && epochs_.last().step > resumedFromStep_) epochs_.removeLast();
    emit started();
}

void TrainingRun::addStep(const StepEvent& event) {
    StepPoint point;
    static_cast<StepEvent&>(point) = event;
    point.epochPosition = stepsPerEpoch_ > 0 ? point.epoch - 1 + double(point.epochStep) / double(stepsPerEpoch_)
                                             : double(point.step);
    if (runStartElapsed_ < 0) {
        runStartElapsed_ = point.elapsedSeconds;
        runStartStep_ = point.step;
    }
    steps_.append(point);
    emit stepAdded();
}

void TrainingRun::addEpoch(const EpochEvent& event) {
    epochs_.append(event);
    if (!event.confusionMatrix.empty()) {
        confusionMatrix_.clear();
        for (const std::vector<long long>& row : event.confusionMatrix)
            confusionMatrix_ << QList<qint64>(row.begin(), row.end());
    }
    emit epochAdded();
}

void TrainingRun::finish(const FinishedEvent& event) {
    state_ = State::Finished;
    finished_ = event;
    emit ended();
}

void TrainingRun::fail(const FailedEvent& event) {
    state_ = event.killedByUser ? State::Killed : State::Failed;
    failureReason_ = event.killedByUser ? QString() : QString::fromStdString(event.reason);
    emit ended();
}

void TrainingRun::endWithoutFinalEvent(const QString& reason) {
    if (hasEnded()) return;
    state_ = State::Failed;
    failureReason_ = reason;
    emit ended();
}

void TrainingRun::endKilledByUser() {
    if (hasEnded()) return;
    state_ = State::Killed;
    emit ended();
}

bool TrainingRun::hasEnded() const {
    return state_ == State::Finished || state_ == State::Failed || state_ == State::Killed;
}

int TrainingRun::loadEventsFile(const QString& path) {
    const QString file = QFileInfo(path).isDir() ? QDir(path).filePath(RunFolder::kEventsFileName) : path;
    const EventLog log = readEvents(file.toStdString());
    {
        const QSignalBlocker block(this);
        clear();
        for (const cnnstudio::Event& event : log.events) addEvent(event);
        // The folder it was read from, wherever the run was recorded: runs can be moved.
        runDirectory_ = QFileInfo(file).absolutePath();
    }
    emit reloaded();
    return log.malformedLines;
}

QString TrainingRun::displayName() const {
    if (!runDirectory_.isEmpty()) return QFileInfo(runDirectory_).fileName();
    return modelName_;
}

qint64 TrainingRun::currentStep() const {
    qint64 step = resumedFromStep_;
    if (!steps_.isEmpty()) step = std::max(step, steps_.last().step);
    if (!epochs_.isEmpty()) step = std::max(step, epochs_.last().step);
    return step;
}

int TrainingRun::currentEpoch() const {
    if (!steps_.isEmpty() && (epochs_.isEmpty() || steps_.last().step > epochs_.last().step))
        return steps_.last().epoch;
    return epochs_.isEmpty() ? 0 : epochs_.last().epoch;
}

double TrainingRun::imagesPerSecond() const {
    if (!steps_.isEmpty() && (epochs_.isEmpty() || steps_.last().step >= epochs_.last().step))
        return steps_.last().imagesPerSecond;
    return epochs_.isEmpty() ? 0 : epochs_.last().imagesPerSecond;
}

double TrainingRun::learningRate() const {
    if (!steps_.isEmpty() && (epochs_.isEmpty() || steps_.last().step >= epochs_.last().step))
        return steps_.last().learningRate;
    return epochs_.isEmpty() ? 0 : epochs_.last().learningRate;
}

double TrainingRun::etaSeconds() const {
    if (state_ == State::Finished) return 0;
    if (state_ != State::Running || totalSteps() <= 0) return -1;
    const qint64 remaining = std::max<qint64>(0, totalSteps() - currentStep());
    // The pace of this session's steps so far, which leaves start-up time out.
    if (!steps_.isEmpty() && runStartElapsed_ >= 0 && steps_.last().step > runStartStep_) {
        const double secondsPerStep =
            (steps_.last().elapsedSeconds - runStartElapsed_) / double(steps_.last().step - runStartStep_);
        return secondsPerStep * double(remaining);
    }
    if (!epochs_.isEmpty() && epochs_.last().etaSeconds >= 0) return epochs_.last().etaSeconds;
    if (!steps_.isEmpty() && steps_.last().step > resumedFromStep_)
        return steps_.last().elapsedSeconds / double(steps_.last().step - resumedFromStep_) * double(remaining);
    return -1;
}

std::optional<double> TrainingRun::bestValidationAccuracy() const {
    if (finished_ && finished_->bestValidationAccuracy) return finished_->bestValidationAccuracy;
    std::optional<double> best;
    for (const EpochPoint& epoch : epochs_)
        if (epoch.validationAccuracy && (!best || *epoch.validationAccuracy > *best)) best = epoch.validationAccuracy;
    return best;
}

std::optional<double> TrainingRun::testAccuracy() const {
    return finished_ ? finished_->testAccuracy : std::nullopt;
}

QString TrainingRun::epochsCsv() const {
    QString csv = "epoch,step,train_loss,train_accuracy,validation_loss,validation_accuracy,learning_rate,"
                  "images_per_s,epoch_time_s\n";
    for (const EpochPoint& epoch : epochs_) {
        csv += QStringList{QString::number(epoch.epoch),
                           QString::number(epoch.step),
                           csvNumber(epoch.trainLoss),
                           csvNumber(epoch.trainAccuracy),
                           epoch.validationLoss ? csvNumber(*epoch.validationLoss) : QString(),
                           epoch.validationAccuracy ? csvNumber(*epoch.validationAccuracy) : QString(),
                           csvNumber(epoch.learningRate),
                           csvNumber(epoch.imagesPerSecond),
                           csvNumber(epoch.epochSeconds)}
                   .join(',');
        csv += '\n';
    }
    return csv;
}

}  // namespace cnnstudio::ui
