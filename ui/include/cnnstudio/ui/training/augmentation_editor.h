// AugmentationEditor: the --augment text of the next run, as a line to type or pick (common
// choices in a list) and as one control per transform (flip, crop, rotation, zoom range, shift,
// erasing, border, mixup, cutmix, brightness, contrast). The text is the value: editing a
// control rewrites it (datasets::toString), typing text that parses moves the controls; text
// that does not parse stays as typed, for RunSettings::problems to name.
#pragma once

#include <QWidget>

#include "cnnstudio/datasets/augmentation.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace cnnstudio::ui {

class AugmentationEditor : public QWidget {
    Q_OBJECT

public:
    explicit AugmentationEditor(QWidget* parent = nullptr);

    QString text() const;
    void setText(const QString& text);

signals:
    void changed();

private:
    void showConfig(const datasets::AugmentationConfig& config);  // controls follow the config
    datasets::AugmentationConfig configFromControls() const;
    void controlsEdited();
    void textEdited(const QString& text);

    QComboBox* text_;
    QCheckBox* flip_;
    QSpinBox* crop_;
    QDoubleSpinBox* rotate_;
    QDoubleSpinBox* scaleLow_;
    QDoubleSpinBox* scaleHigh_;
    QDoubleSpinBox* shift_;
    QDoubleSpinBox* erase_;
    QCheckBox* eraseNoise_;
    QCheckBox* replicateBorder_;
    QDoubleSpinBox* mixup_;
    QDoubleSpinBox* cutmix_;
    QDoubleSpinBox* brightness_;
    QDoubleSpinBox* contrast_;
    bool updating_ = false;  // the controls or the text are being set from the other side
};

}  // namespace cnnstudio::ui
