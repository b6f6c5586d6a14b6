// TrainArea: the Train page — the next run's settings on the left with the Train button, the
// live TrainingDashboard on the right, both following the TrainingSession: the button is off
// while a run trains, the dashboard's Stop and Kill act on the session's run.
#pragma once

#include <QWidget>

class QPushButton;

namespace cnnstudio::ui {

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

public slots:
    // Kill loses the progress since the last checkpoint, so it asks first.
    void killAfterAsking();

signals:
    void trainRequested();

private:
    void refreshRunControls();

    TrainingSession* session_;
    RunSettingsPanel* settings_;
    TrainingDashboard* dashboard_;
    QPushButton* train_;
};

}  // namespace cnnstudio::ui
