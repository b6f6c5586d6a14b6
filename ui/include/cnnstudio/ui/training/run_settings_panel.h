// RunSettingsPanel: the settings of the next training run on three pages — the data set
// (DatasetPicker, with its preview), the training hyper-parameters and the hardware
// (HardwarePicker) — and, under them, what is wrong with them, if anything. It edits a RunSettings.
#pragma once

#include <QWidget>

#include "cnnstudio/ui/training/run_settings.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTabWidget;

namespace cnnstudio::ui {

class AugmentationEditor;
class DatasetPicker;
class HardwarePicker;

class RunSettingsPanel : public QWidget {
    Q_OBJECT

public:
    explicit RunSettingsPanel(QWidget* parent = nullptr);

    RunSettings settings() const;
    void setSettings(const RunSettings& settings);
    QStringList problems() const { return settings().problems(); }

    HardwarePicker* hardwarePicker() const { return hardware_; }
    QTabWidget* pages() const { return pages_; }  // Data set, Training, Hardware
    DatasetPicker* datasetPicker() const { return dataset_; }

signals:
    void settingsChanged();

private:
    void refreshProblems();
    void refreshOptimiserRows();
    void refreshDistillationRows();
    QWidget* makeTrainingPage();

    QTabWidget* pages_;
    HardwarePicker* hardware_;
    DatasetPicker* dataset_;
    QSpinBox* batch_;
    QSpinBox* epochs_;
    QComboBox* optimizer_;
    QDoubleSpinBox* learningRate_;
    QComboBox* schedule_;
    AugmentationEditor* augmentation_;
    QSpinBox* seed_;
    QSpinBox* limit_;
    QDoubleSpinBox* momentum_;
    QDoubleSpinBox* weightDecay_;
    QSpinBox* warmupEpochs_;
    QDoubleSpinBox* labelSmoothing_;
    QComboBox* classWeights_;
    QLineEdit* teachers_;
    QDoubleSpinBox* distillWeight_;
    QDoubleSpinBox* distillTemperature_;
    QSpinBox* earlyStop_;
    QSpinBox* logEvery_;
    QCheckBox* scaleLearningRate_;
    QCheckBox* skipBad_;
    QLabel* problems_;
    bool loading_ = false;
};

}  // namespace cnnstudio::ui
