#include "cnnstudio/ui/training/training_run.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalBlocker>

#include "cnnstudio/error.h"

namespace cnnstudio::ui {
namespace {

constexpr int knownSchema = 1;

std::optional<double> optionalNumber(const QJsonObject& event, const char* key) {
    const QJsonValue value = event.value(QLatin1String(key));
    if (!value.isDouble()) return std::nullopt;
    return value.toDouble();
}

QString csvNumber(double value) { return QString::number(value, 'g', 8); }

}  // namespace

TrainingRun::TrainingRun(QObject* parent) : QObject(parent) {}

void TrainingRun::clear() {
    state_ = State::Empty;
    runDirectory_.clear();
    modelName_.clear();
    datasetName_.clear();
    backend_.clear();
    failureReason_.clear();
    config_ = {};
    finished_ = {};
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

void TrainingRun::addEvent(const QJsonObject& event) {
    if (event.value("schema").toInt(-1) != knownSchema) return;
    const QString name = event.value("event").toString();

    if (name == "run_started") {
        state_ = State::Running;
        failureReason_.clear();
        finished_ = {};
        runDirectory_ = event.value("run_dir").toString();
        config_ = event.value("config").toObject();
        const QJsonObject dataset = event.value("dataset").toObject();
        datasetName_ = dataset.value("name").toString();
        classNames_.clear();
        for (const QJsonValue& className : dataset.value("classes").toArray()) classNames_ << className.toString();
        modelName_ = event.value("model").toObject().value("name").toString();
        backend_ = event.value("backend").toString(config_.value("backend").toString());
        totalEpochs_ = event.value("epochs").toInt();
        stepsPerEpoch_ = qint64(event.value("steps_per_epoch").toDouble());
        resumedFromStep_ = qint64(event.value("resumed_from_step").toDouble());
        runStartElapsed_ = -1;
        runStartStep_ = resumedFromStep_;
        // A resumed session continues the curves from its checkpoint: later points are replaced.
        while (!steps_.isEmpty() && steps_.last().step > resumedFromStep_) steps_.removeLast();
        while (!epochs_.isEmpty() && epochs_.last().step > resumedFromStep_) epochs_.removeLast();
        emit started();
    } else if (name == "step") {
        StepPoint point;
        point.epoch = event.value("epoch").toInt();
        point.step = qint64(event.value("step").toDouble());
        point.epochStep = qint64(event.value("epoch_step").toDouble());
        point.loss = event.value("loss").toDouble();
        point.learningRate = event.value("learning_rate").toDouble();
        point.imagesPerSecond = event.value("images_per_s").toDouble();
        point.elapsedSeconds = event.value("elapsed_s").toDouble();
        point.epochPosition = stepsPerEpoch_ > 0 ? point.epoch - 1 + double(point.epochStep) / double(stepsPerEpoch_)
                                                 : double(point.step);
        if (runStartElapsed_ < 0) {
            runStartElapsed_ = point.elapsedSeconds;
            runStartStep_ = point.step;
        }
        steps_.append(point);
        emit stepAdded();
    } else if (name == "epoch") {
        EpochPoint point;
        point.epoch = event.value("epoch").toInt();
        point.step = qint64(event.value("step").toDouble());
        point.trainLoss = event.value("train_loss").toDouble();
        point.trainAccuracy = event.value("train_accuracy").toDouble();
        point.validationLoss = optionalNumber(event, "validation_loss");
        point.validationAccuracy = optionalNumber(event, "validation_accuracy");
        point.learningRate = event.value("learning_rate").toDouble();
        point.epochSeconds = event.value("epoch_time_s").toDouble();
        point.etaSeconds = event.value("eta_s").toDouble(-1);
        point.imagesPerSecond = event.value("images_per_s").toDouble();
        point.best = event.value("best").toBool();
        epochs_.append(point);
        if (const QJsonArray rows = event.value("confusion_matrix").toArray(); !rows.isEmpty()) {
            confusionMatrix_.clear();
            for (const QJsonValue& row : rows) {
                QList<qint64> cells;
                for (const QJsonValue& cell : row.toArray()) cells << qint64(cell.toDouble());
                confusionMatrix_ << cells;
            }
        }
        emit epochAdded();
    } else if (name == "finished") {
        state_ = State::Finished;
        finished_ = event;
        emit ended();
    } else if (name == "failed") {
        state_ = State::Failed;
        failureReason_ = event.value("reason").toString();
        emit ended();
    }
}

int TrainingRun::loadEventsFile(const QString& path) {
    const QString file = QFileInfo(path).isDir() ? path + "/events.jsonl" : path;
    QFile input(file);
    if (!input.open(QIODevice::ReadOnly))
        throw Error("cannot read the event log: " + input.errorString().toStdString(), file.toStdString(),
                    "pick a run folder that holds an events.jsonl");
    int malformed = 0;
    {
        const QSignalBlocker block(this);
        clear();
        while (!input.atEnd()) {
            const QByteArray line = input.readLine().trimmed();
            if (line.isEmpty()) continue;
            QJsonParseError error;
            const QJsonDocument document = QJsonDocument::fromJson(line, &error);
            if (error.error != QJsonParseError::NoError || !document.isObject()) {
                ++malformed;
                continue;
            }
            addEvent(document.object());
        }
        // The folder it was read from, wherever the run was recorded: runs can be moved.
        runDirectory_ = QFileInfo(file).absolutePath();
    }
    emit reloaded();
    return malformed;
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
    if (const QJsonValue best = finished_.value("best_validation_accuracy"); best.isDouble()) return best.toDouble();
    std::optional<double> best;
    for (const EpochPoint& epoch : epochs_)
        if (epoch.validationAccuracy && (!best || *epoch.validationAccuracy > *best)) best = epoch.validationAccuracy;
    return best;
}

std::optional<double> TrainingRun::testAccuracy() const {
    if (const QJsonValue test = finished_.value("test_accuracy"); test.isDouble()) return test.toDouble();
    return std::nullopt;
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
