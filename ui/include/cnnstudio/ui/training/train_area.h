// TrainArea: the Train page — the next run's settings on the left with, above the Train button,
// what the run will change in the network to fit the data set (NetworkFitNotice) and its
// predicted run time (RunTimeEstimate, with a few seconds' probe when nothing predicts it); the live
// TrainingDashboard on the right. Both follow the TrainingSession: the button is off while a run
// trains, the dashboard's Stop and Kill act on the session's run.
#pragma once

#include <map>
#include <optional>

#include <QWidget>

#include "cnnstudio/spec.h"
#include "cnnstudio/ui/training/network_fit.h"
#include "cnnstudio/ui/training/run_settings.h"
#include "cnnstudio/ui/training/run_time_estimate.h"

class QLabel;
class QPushButton;

namespace cnnstudio::ui {

class NetworkFitNotice;
class RunSettingsPanel;
class TrainingDashboard;
class TrainingSession;

class TrainArea : public QWidget {
    Q_OBJECT

public:
    explicit TrainArea(TrainingSession* session, QWidget* parent = nullptr);

    TrainingSession* session() const { return session_; }
    RunSettingsPanel* settingsPanel() const { return settings_; }
    TrainingDashboard* dashboard() const { return dashboard_; }
    QPushButton* trainButton() const { return train_; }
    NetworkFitNotice* fitNotice() const { return fitNotice_; }

    // The network the next run trains (the Design page's); the fit to the data set follows it.
    void setNetwork(const NetworkSpec& spec);
    NetworkFit networkFit() const { return fit_; }

    // The predicted run time as shown, and the settings to train with: the panel's, carrying
    // that prediction for the worker to record.
    const RunTimeEstimate& runTimeEstimate() const { return estimate_; }
    RunSettings settingsForRun() const;
    QLabel* predictionLabel() const { return prediction_; }
    QPushButton* measureButton() const { return measure_; }
    RunTimeProbe* runTimeProbe() const { return probe_; }
    // Where this machine's benchmark reports are read from (hardwareReportFolder() by default);
    // its probes/ keeps the probes of this page across sessions.
    void setHardwareReportFolder(const std::filesystem::path& folder);

public slots:
    void refreshPrediction();

    // Kill loses the progress since the last checkpoint, so it asks first.
    void killAfterAsking();

signals:
    void trainRequested();
    void networkFitChanged();  // the network or the data set changed: networkFit() is new
    void resumeRequested(const QString& runDirectory);  // the run last trained here, from its checkpoint

private:
    void refreshRunControls();
    void refreshFit();
    // The network the run trains: the drawn one fitted to the data set, once that fit is known.
    NetworkSpec trainedNetwork() const;
    // This session's probe, else one kept on disk (read once, then remembered with this session's).
    std::optional<BenchReport> probeOf(const QString& key);
    void keepProbe(const BenchReport& report);

    TrainingSession* session_;
    RunSettingsPanel* settings_;
    TrainingDashboard* dashboard_;
    QPushButton* train_;
    NetworkFitNotice* fitNotice_;
    void startProbe();

    NetworkSpec network_;
    NetworkFit fit_;
    QLabel* prediction_;
    QPushButton* measure_;
    RunTimeProbe* probe_;
    std::filesystem::path reportFolder_;
    QString resumableRun_;  // the folder of the run last trained here, when it can be resumed
    QString runningProbeKey_;  // probeKey() of the settings the running probe measures
    std::map<QString, BenchReport> sessionProbes_;  // by probeKey(): this session's probes and kept ones read
    RunTimeEstimate estimate_;
};

}  // namespace cnnstudio::ui
