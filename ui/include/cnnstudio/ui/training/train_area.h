// TrainArea: the Train page — the next run's settings on the left with the Train button, the
// live TrainingDashboard on the right.
#pragma once

#include <QWidget>

class QPushButton;

namespace cnnstudio::ui {

class RunSettingsPanel;
class TrainingDashboard;

class TrainArea : public QWidget {
    Q_OBJECT

public:
    explicit TrainArea(QWidget* parent = nullptr);

    RunSettingsPanel* settingsPanel() const { return settings_; }
    TrainingDashboard* dashboard() const { return dashboard_; }
    QPushButton* trainButton() const { return train_; }

signals:
    void trainRequested();

private:
    RunSettingsPanel* settings_;
    TrainingDashboard* dashboard_;
    QPushButton* train_;
};

}  // namespace cnnstudio::ui
