// SweepPlanner: the Hardware page's left column — what to measure, from what this machine
// offers: the network (a preset or the Design page's, which MainWindow hands in) and batch, the backends of this build (unavailable ones disabled, with
// the reason), CPU thread counts up to the cores, precisions and GPU counts for the GPU
// backends, nodes with their hostfile; the configurations this makes, listed (these scroll); Run
// and Cancel with the sweep's progress, always in view below them. Hardware discovery runs off the GUI thread. It edits a SweepPlan and
// asks for runs; BenchSweepRunner runs them.
#pragma once

#include <QFutureWatcher>
#include <QList>
#include <QWidget>

#include "cnnstudio/hardware.h"
#include "cnnstudio/ui/hardware/sweep_plan.h"

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QSpinBox;

namespace cnnstudio::ui {

class HostfileEditor;

class SweepPlanner : public QWidget {
    Q_OBJECT

public:
    explicit SweepPlanner(QWidget* parent = nullptr);

    SweepPlan plan() const;
    void setPlan(const SweepPlan& plan);
    // Uses this hardware instead of discovering it (tests, screenshots).
    void setHardware(const HardwareInfo& hardware);
    const HardwareInfo& hardware() const { return hardware_; }
    bool hasHardware() const { return haveHardware_; }
    // The Design page's network, offered first in the network list; the plan takes it when chosen.
    void setDesignedNetwork(const DesignedNetwork& network);
    QComboBox* networkChooser() const { return model_; }
    // Chooses the Design page's network in the list (the user's pick, for tests and the app).
    void chooseDesignedNetwork();

    QStringList problems() const { return problems_; }
    QListWidget* configurationList() const { return configurations_; }
    QPushButton* runButton() const { return run_; }
    QPushButton* cancelButton() const { return cancel_; }
    QCheckBox* backendBox(const QString& backend) const;
    QCheckBox* threadBox(int threads) const;
    QCheckBox* precisionBox(const QString& precision) const;
    QCheckBox* gpuCountBox(int gpus) const;

public slots:
    void setRunning(bool running);
    void showProgress(int index, int count, const QString& label);
    void showSweepEnded(const QString& summary);
    QLabel* statusLabel() const { return status_; }  // progress, then the summary of the sweep

signals:
    void planChanged();
    void runRequested();
    void cancelRequested();

private:
    void rebuildCountBoxes();
    void refresh();  // the configurations, problems and what is enabled

    HardwareInfo hardware_;
    bool haveHardware_ = false, running_ = false;
    QFutureWatcher<HardwareInfo> discovery_;
    QComboBox* model_;
    QLabel* networkNote_;   // what the Design page's network is measured as, when it is chosen
    DesignedNetwork designed_;
    QSpinBox* batch_;
    QSpinBox* steps_;
    QList<QCheckBox*> backends_, threads_, precisions_, gpuCounts_;
    QGridLayout* threadGrid_;
    QGridLayout* gpuGrid_;
    QLabel* gpuNote_;
    QSpinBox* nodes_;
    HostfileEditor* hostfile_;
    QListWidget* configurations_;
    QScrollArea* choicesScroll_;  // everything above the problems and the Run button
    QLabel* problemsLabel_;
    QLabel* machine_;
    QPushButton* run_;
    QPushButton* cancel_;
    QProgressBar* progress_;
    QLabel* status_;
    QStringList problems_;
    QList<int> pendingThreads_{1}, pendingGpuCounts_{1};  // from setPlan(), ticked once counts are known
};

}  // namespace cnnstudio::ui
