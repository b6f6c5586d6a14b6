// HardwarePicker: where a run trains. The backends of this build (the unavailable ones shown
// disabled, with the reason), the GPUs this machine has (name and memory, tick the ones to use),
// the GPU count, CPU threads and ranks, precision (GPU backends only), the node count and the
// hostfile of a multi-node run. Hardware discovery runs off the GUI thread.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include "cnnstudio/hardware.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QListWidget;
class QSpinBox;

namespace cnnstudio::ui {

class HostfileEditor;
struct RunSettings;

class HardwarePicker : public QWidget {
    Q_OBJECT

public:
    explicit HardwarePicker(QWidget* parent = nullptr);

    // Reads and writes the hardware part of a RunSettings, leaving the rest alone.
    void applyTo(RunSettings& settings) const;
    void load(const RunSettings& settings);

    // Uses this hardware instead of discovering it (tests, screenshots).
    void setHardware(const HardwareInfo& hardware);
    const HardwareInfo& hardware() const { return hardware_; }

signals:
    void changed();

private:
    void updateEnabledState();
    void fillGpuList();

    HardwareInfo hardware_;
    QFormLayout* form_;
    QFutureWatcher<HardwareInfo> discovery_;
    QComboBox* backend_;
    QLabel* backendNote_;
    QComboBox* precision_;
    QListWidget* gpus_;
    QLabel* gpuNote_;
    QSpinBox* gpuCount_;
    QSpinBox* threads_;
    QSpinBox* cpuRanks_;
    QSpinBox* nodes_;
    HostfileEditor* hostfile_;
    QLabel* machine_;
    QList<int> pendingGpuIndices_;  // from load(), ticked once discovery lists the GPUs
};

}  // namespace cnnstudio::ui
