#include "cnnstudio/ui/training/augmentation_editor.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>

#include "cnnstudio/error.h"

namespace cnnstudio::ui {

AugmentationEditor::AugmentationEditor(QWidget* parent) : QWidget(parent) {
    // Controls emit while they are set up (a new minimum moves a value), before all exist.
    updating_ = true;
    text_ = new QComboBox(this);
    text_->setObjectName("augmentation");
    text_->setEditable(true);
    text_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    text_->setMinimumContentsLength(12);
    for (const char* choice : {"none", "default", "crop=4,flip", "crop=4,flip,rotate=10,scale=0.8-1.2,shift=0.1",
                               "crop=4,flip,rotate=10,scale=0.8-1.2,shift=0.1,erase=0.25",
                               "flip,rotate=10,scale=0.8-1.2,shift=0.1,mixup=0.2",
                               "flip,rotate=10,scale=0.8-1.2,shift=0.1,cutmix=1",
                               "crop=4,flip,brightness=0.2,contrast=0.2"})
        text_->addItem(QString::fromLatin1(choice));
    text_->setToolTip(tr("none, default, or a comma list of crop=P, flip, rotate=DEG, scale=LO-HI, shift=FRACTION, "
                         "erase=P, erase-fill=noise, border=replicate, mixup=ALPHA, cutmix=ALPHA, brightness=B, "
                         "contrast=C. Done on the training backend after upload; validation and test images are "
                         "never augmented."));

    auto spin = [this](const char* name, double maximum, double step, int decimals, const QString& tip) {
        auto* box = new QDoubleSpinBox(this);
        box->setObjectName(name);
        box->setRange(0, maximum);
        box->setSingleStep(step);
        box->setDecimals(decimals);
        box->setToolTip(tip);
        connect(box, &QDoubleSpinBox::valueChanged, this, &AugmentationEditor::controlsEdited);
        return box;
    };
    auto check = [this](const char* name, const QString& label, const QString& tip) {
        auto* box = new QCheckBox(label, this);
        box->setObjectName(name);
        box->setToolTip(tip);
        connect(box, &QCheckBox::toggled, this, &AugmentationEditor::controlsEdited);
        return box;
    };
    flip_ = check("augmentFlip", tr("Mirror left-right"), tr("Each image is mirrored with probability 1/2"));
    crop_ = new QSpinBox(this);
    crop_->setObjectName("augmentCrop");
    crop_->setRange(0, 64);
    crop_->setSuffix(tr(" px"));
    crop_->setSpecialValueText(tr("off"));
    crop_->setToolTip(tr("Shift by a whole number of pixels, up to this many, on each axis"));
    connect(crop_, &QSpinBox::valueChanged, this, &AugmentationEditor::controlsEdited);
    rotate_ = spin("augmentRotate", 180, 1, 1, tr("Rotate by up to this many degrees either way"));
    rotate_->setSuffix(tr("°"));
    scaleLow_ = spin("augmentScaleLow", 10, 0.05, 2, tr("The smallest zoom (1: none)"));
    scaleHigh_ = spin("augmentScaleHigh", 10, 0.05, 2, tr("The largest zoom (1: none)"));
    scaleLow_->setMinimum(0.1);
    scaleHigh_->setMinimum(0.1);
    shift_ = spin("augmentShift", 0.5, 0.01, 2, tr("Shift by up to this share of the width and height"));
    erase_ = spin("augmentErase", 1, 0.05, 2, tr("The probability of erasing a rectangle of 2% to 33% of the image"));
    eraseNoise_ = check("augmentEraseNoise", tr("Fill erased rectangles with noise"),
                        tr("Unit-variance noise instead of 0 (the training mean)"));
    replicateBorder_ = check("augmentReplicateBorder", tr("Replicate the edge pixels"),
                             tr("Pixels moved in from outside the image repeat its edge instead of reading 0 "
                                "(the training mean)"));
    mixup_ = spin("augmentMixup", 10, 0.1, 2, tr("Blend pairs of images, lambda ~ Beta(alpha, alpha); 0: off"));
    cutmix_ = spin("augmentCutmix", 10, 0.1, 2, tr("Paste a rectangle of another image, its area ~ Beta(alpha, alpha); 0: off"));
    brightness_ = spin("augmentBrightness", 1, 0.05, 2, tr("Add up to this share of the full range; 0: off"));
    contrast_ = spin("augmentContrast", 1, 0.05, 2, tr("Scale the contrast by up to this share either way; 0: off"));

    auto* zoom = new QHBoxLayout;
    zoom->addWidget(scaleLow_);
    zoom->addWidget(scaleHigh_);
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    // The check boxes span the editor, so that they line up with those of the form around it
    // and their labels do not widen the settings column.
    form->addRow(text_);
    form->addRow(flip_);
    form->addRow(tr("Crop shift"), crop_);
    form->addRow(tr("Rotation"), rotate_);
    form->addRow(tr("Zoom from, to"), zoom);
    form->addRow(tr("Shift"), shift_);
    form->addRow(tr("Erasing"), erase_);
    form->addRow(eraseNoise_);
    form->addRow(replicateBorder_);
    form->addRow(tr("Mixup alpha"), mixup_);
    form->addRow(tr("CutMix alpha"), cutmix_);
    form->addRow(tr("Brightness"), brightness_);
    form->addRow(tr("Contrast"), contrast_);

    connect(text_, &QComboBox::currentTextChanged, this, &AugmentationEditor::textEdited);
    updating_ = false;
    setText(QStringLiteral("none"));
}

QString AugmentationEditor::text() const { return text_->currentText().trimmed(); }

void AugmentationEditor::setText(const QString& text) {
    {
        const QSignalBlocker blocker(text_);
        text_->setCurrentText(text);
    }
    textEdited(text);
}

void AugmentationEditor::textEdited(const QString& text) {
    if (updating_) return;
    try {
        showConfig(datasets::parseAugmentation(text.toStdString()));
    } catch (const Error&) {
        // Left as typed: the settings' problems name what is wrong with it.
    }
    emit changed();
}

void AugmentationEditor::controlsEdited() {
    if (updating_) return;
    updating_ = true;
    text_->setCurrentText(QString::fromStdString(datasets::toString(configFromControls())));
    updating_ = false;
    emit changed();
}

void AugmentationEditor::showConfig(const datasets::AugmentationConfig& config) {
    updating_ = true;
    flip_->setChecked(config.horizontalFlip);
    crop_->setValue(config.cropPadding);
    rotate_->setValue(config.rotationDegrees);
    scaleLow_->setValue(config.scaleLow);
    scaleHigh_->setValue(config.scaleHigh);
    shift_->setValue(config.shift);
    erase_->setValue(config.eraseProbability);
    eraseNoise_->setChecked(config.eraseFill == EraseFill::Noise);
    replicateBorder_->setChecked(config.border == AugmentBorder::Replicate);
    mixup_->setValue(config.mixupAlpha);
    cutmix_->setValue(config.cutmixAlpha);
    brightness_->setValue(config.brightness);
    contrast_->setValue(config.contrast);
    updating_ = false;
}

datasets::AugmentationConfig AugmentationEditor::configFromControls() const {
    datasets::AugmentationConfig config;
    config.horizontalFlip = flip_->isChecked();
    config.cropPadding = crop_->value();
    config.rotationDegrees = float(rotate_->value());
    // A zoom range typed upside down is read the right way round.
    config.scaleLow = float(std::min(scaleLow_->value(), scaleHigh_->value()));
    config.scaleHigh = float(std::max(scaleLow_->value(), scaleHigh_->value()));
    config.shift = float(shift_->value());
    config.eraseProbability = float(erase_->value());
    config.eraseFill = eraseNoise_->isChecked() ? EraseFill::Noise : EraseFill::Zero;
    config.border = replicateBorder_->isChecked() ? AugmentBorder::Replicate : AugmentBorder::Constant;
    config.mixupAlpha = float(mixup_->value());
    config.cutmixAlpha = float(cutmix_->value());
    config.brightness = float(brightness_->value());
    config.contrast = float(contrast_->value());
    return config;
}

}  // namespace cnnstudio::ui
