// TrainingDashboard: a run as it trains (or as it trained, replayed) — loss and accuracy curves
// (train per step and per epoch, validation per epoch) in QCustomPlot, the latest validation
// confusion matrix, throughput, learning rate and a progress bar with the time left. The curves
// redraw at most ten times a second however fast events come. Any number of other runs can be
// overlaid for comparison, each in its own colour (validation solid, train dashed); the legends
// sit under the plots, never over the data. It observes a TrainingRun; Stop, Kill and Resume are requests
// for whoever runs the worker.
#pragma once

#include <array>

#include <QList>
#include <QWidget>

class QCheckBox;
class QCPGraph;
class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTimer;

namespace cnnstudio::ui {

class ConfusionMatrixPlot;
class TrainingRun;

class TrainingDashboard : public QWidget {
    Q_OBJECT

public:
    enum class Curve { StepLoss, EpochTrainLoss, EpochValidationLoss, EpochTrainAccuracy, EpochValidationAccuracy };

    explicit TrainingDashboard(QWidget* parent = nullptr);

    void setRun(TrainingRun* run);           // not owned; null shows nothing
    // Overlaid on the run, each in its own colour; an empty list removes the overlays.
    void setComparisons(const QList<TrainingRun*>& runs);
    int comparisonCount() const { return int(compared_.size()); }
    TrainingRun* run() const { return run_; }
    void setRunControlsVisible(bool visible);  // Stop, Kill and Resume, for the live dashboard
    // What the header says while no run is shown: each page says what brings one up there.
    void setEmptyText(const QString& text);
    // Whether the run shown can be resumed from a checkpoint: Resume is offered only then.
    void setResumable(bool resumable);
    void setRunning(bool running, bool stopping = false);
    // Shows why a run failed, with the worker's standard error tail; empty reason hides it.
    void showFailure(const QString& reason, const QString& stderrTail);

    QCustomPlot* lossPlot() const { return lossPlot_; }
    QCustomPlot* accuracyPlot() const { return accuracyPlot_; }
    ConfusionMatrixPlot* confusionMatrix() const { return matrix_; }
    QCPGraph* curve(Curve curve) const;
    // The curve of the index-th compared run; null for StepLoss (compared runs show epochs only).
    QCPGraph* comparisonCurve(int index, Curve curve) const;
    QString statusText() const;

    // Write both plots into one file, the loss above the accuracy (PNG or PDF by the extension),
    // and the per-epoch metrics. Throw Error when a file cannot be written.
    void exportPlots(const QString& path);
    void exportMetricsCsv(const QString& path);

public slots:
    void refreshNow();  // redraw everything at once, skipping the throttle

signals:
    void stopRequested();
    void killRequested();
    void resumeRequested();
    void message(const QString& text);  // for the status bar: what an export wrote

protected:
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    static constexpr int curveCount = 5;
    using CurveSet = std::array<QCPGraph*, curveCount>;  // indexed by Curve
    struct ComparedRun {
        TrainingRun* run;
        CurveSet curves;
    };

    void removeComparisons();
    void scheduleRefresh();
    void refreshComparisonNote();
    void refreshCurves();
    void refreshMatrix();
    void refreshStatus();
    void applyPalette();
    void chooseExportFile();
    void chooseCsvFile();

    TrainingRun* run_ = nullptr;
    CurveSet mainCurves_{};
    QList<ComparedRun> compared_;
    QTimer* replotTimer_;
    QLabel* status_;
    QProgressBar* progress_;
    QLabel* throughput_;
    QLabel* learningRate_;
    QLabel* best_;
    QLabel* comparisonNote_;
    QPushButton* stop_;
    QPushButton* kill_;
    QPushButton* resume_;
    QWidget* failureBox_;
    QLabel* failureReason_;
    QPlainTextEdit* failureLog_;
    QCustomPlot* lossPlot_;
    QCustomPlot* accuracyPlot_;
    QCheckBox* normalised_;
    ConfusionMatrixPlot* matrix_;
    QLabel* matrixTitle_;
    QWidget* matrixPane_;  // the title, the normalise toggle and the matrix
    QString emptyText_ = tr("No run yet: design a network, choose the settings and press Train.");
    bool running_ = false;
    bool runControlsVisible_ = false;
    bool resumable_ = false;
};

}  // namespace cnnstudio::ui
