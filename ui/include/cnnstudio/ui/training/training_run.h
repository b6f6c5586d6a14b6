// TrainingRun: one run as its events describe it — the loss and accuracy series, the latest
// confusion matrix, progress and the way it ended. Fed live by the TrainingController or
// replayed from a run folder's events.jsonl; the dashboard and the run history read it. The
// events come typed from the engine's one reader (cnnstudio/event_reader.h).
#pragma once

#include <optional>

#include <QList>
#include <QObject>
#include <QStringList>

#include "cnnstudio/event_reader.h"

namespace cnnstudio::ui {

struct StepPoint : StepEvent {
    double epochPosition = 0;  // epoch - 1 + epochStep / stepsPerEpoch: where it sits on the x axis
};

using EpochPoint = EpochEvent;

class TrainingRun : public QObject {
    Q_OBJECT

public:
    enum class State { Empty, Running, Finished, Failed, Killed };

    explicit TrainingRun(QObject* parent = nullptr);

    void clear();
    void addEvent(const cnnstudio::Event& event);
    // The worker ended without a final event (crashed, or a launch that failed before the run
    // began): the run ends as failed, for `reason`. Nothing when the run has ended already.
    void endWithoutFinalEvent(const QString& reason);
    // The user killed the worker before its final event: the run ends as killed (Killed).
    void endKilledByUser();
    // Replays a run: `path` is a run folder or an events.jsonl file. Throws Error when it cannot
    // be read; returns how many lines held no event (a truncated last line after a crash).
    int loadEventsFile(const QString& path);

    State state() const { return state_; }
    bool hasEnded() const;  // finished, failed or killed
    QString runDirectory() const { return runDirectory_; }
    QString displayName() const;  // the run folder's name, else the model's
    QString modelName() const { return modelName_; }
    QString datasetName() const { return datasetName_; }
    QString backend() const { return backend_; }
    QStringList classNames() const { return classNames_; }
    int totalEpochs() const { return totalEpochs_; }
    qint64 stepsPerEpoch() const { return stepsPerEpoch_; }
    qint64 totalSteps() const { return qint64(totalEpochs_) * stepsPerEpoch_; }
    qint64 resumedFromStep() const { return resumedFromStep_; }
    qint64 currentStep() const;
    int currentEpoch() const;
    const QList<StepPoint>& steps() const { return steps_; }
    const QList<EpochPoint>& epochs() const { return epochs_; }
    // The latest validation confusion matrix: rows = true class, columns = predicted.
    const QList<QList<qint64>>& confusionMatrix() const { return confusionMatrix_; }
    double imagesPerSecond() const;       // the latest figure
    double learningRate() const;          // the latest figure
    double etaSeconds() const;            // -1 when unknown
    // How the run ended; none unless state() is Finished.
    const std::optional<FinishedEvent>& finishedEvent() const { return finished_; }
    // The run time the Train page predicted before the run (config.json's prediction.total_s).
    std::optional<double> predictedTotalSeconds() const { return predictedTotalSeconds_; }
    QString failureReason() const { return failureReason_; }
    std::optional<double> bestValidationAccuracy() const;
    std::optional<double> testAccuracy() const;

    // One line per epoch: epoch, step, train and validation loss and accuracy, learning rate,
    // images/s, epoch seconds. Empty validation cells when the run had no validation split.
    QString epochsCsv() const;

signals:
    void cleared();
    void started();
    void stepAdded();
    void epochAdded();
    void ended();
    void reloaded();  // loadEventsFile() replaced everything (no per-event signals during a replay)

private:
    void startSession(const RunStartedEvent& event);
    void addStep(const StepEvent& event);
    void addEpoch(const EpochEvent& event);
    void finish(const FinishedEvent& event);
    void fail(const FailedEvent& event);

    State state_ = State::Empty;
    QString runDirectory_, modelName_, datasetName_, backend_, failureReason_;
    std::optional<FinishedEvent> finished_;
    std::optional<double> predictedTotalSeconds_;
    QStringList classNames_;
    int totalEpochs_ = 0;
    qint64 stepsPerEpoch_ = 0, resumedFromStep_ = 0;
    double runStartElapsed_ = -1;  // elapsed_s of this session's first step, for the ETA
    qint64 runStartStep_ = 0;
    QList<StepPoint> steps_;
    QList<EpochPoint> epochs_;
    QList<QList<qint64>> confusionMatrix_;
};

}  // namespace cnnstudio::ui
