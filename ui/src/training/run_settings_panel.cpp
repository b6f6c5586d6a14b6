#include "cnnstudio/ui/training/run_settings_panel.h"

#include <climits>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include "cnnstudio/datasets/augmentation.h"
#include "cnnstudio/error.h"
#include "cnnstudio/ui/training/dataset_picker.h"
#include "cnnstudio/ui/training/hardware_picker.h"
#include "common/layer_colors.h"

namespace cnnstudio::ui {

RunSettingsPanel::RunSettingsPanel(QWidget* parent) : QWidget(parent) {
    // Three pages, each fitting the panel's width without a horizontal scroll bar.
    auto scrolled = [](QWidget* page) {
        auto* scroll = new QScrollArea;
        scroll->setWidget(page);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        return scroll;
    };
    auto* hardwarePage = new QWidget;
    hardware_ = new HardwarePicker(hardwarePage);
    auto* hardwareLayout = new QVBoxLayout(hardwarePage);
    hardwareLayout->addWidget(hardware_);
    hardwareLayout->addStretch(1);

    auto* trainingBox = new QWidget;
    auto* form = new QFormLayout(trainingBox);
    batch_ = new QSpinBox(trainingBox);
    batch_->setObjectName("batchSize");
    batch_->setRange(1, 65536);
    batch_->setToolTip(tr("Images per step on each rank"));
    epochs_ = new QSpinBox(trainingBox);
    epochs_->setObjectName("epochs");
    epochs_->setRange(1, 100000);
    optimizer_ = new QComboBox(trainingBox);
    optimizer_->setObjectName("optimizer");
    optimizer_->addItem(tr("SGD with momentum"), "sgd");
    optimizer_->addItem(tr("Adam"), "adam");
    optimizer_->addItem(tr("AdamW (decoupled weight decay)"), "adamw");
    learningRate_ = new QDoubleSpinBox(trainingBox);
    learningRate_->setObjectName("learningRate");
    learningRate_->setDecimals(6);
    learningRate_->setRange(0.000001, 10.0);
    learningRate_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    schedule_ = new QComboBox(trainingBox);
    schedule_->setObjectName("schedule");
    schedule_->addItem(tr("constant"), "constant");
    schedule_->addItem(tr("step decay"), "step");
    schedule_->addItem(tr("cosine"), "cosine");
    schedule_->addItem(tr("reduce on plateau"), "plateau");
    augmentation_ = new QComboBox(trainingBox);
    augmentation_->setObjectName("augmentation");
    augmentation_->setEditable(true);
    augmentation_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    augmentation_->setMinimumContentsLength(12);
    // Offer only what this build can do (rotate and scale need OpenCV).
    for (const char* choice : {"none", "default", "crop=4,flip", "crop=4,flip,brightness=0.2,contrast=0.2",
                               "crop=4,flip,rotate=10,scale=0.1",
                               "crop=4,flip,rotate=10,scale=0.1,brightness=0.2,contrast=0.2"}) {
        try {
            datasets::parseAugmentation(choice);
            augmentation_->addItem(QString::fromLatin1(choice));
        } catch (const Error&) {
            continue;  // not in this build: left out of the list, and said so if typed
        }
    }
    augmentation_->setToolTip(tr("none, default, or a comma list of crop=P, flip, rotate=DEG, scale=S, "
                                 "brightness=B, contrast=C"));
    seed_ = new QSpinBox(trainingBox);
    seed_->setObjectName("seed");
    seed_->setRange(0, INT_MAX);
    limit_ = new QSpinBox(trainingBox);
    limit_->setObjectName("limit");
    limit_->setRange(0, INT_MAX);
    limit_->setSpecialValueText(tr("all images"));
    limit_->setSingleStep(1000);
    limit_->setToolTip(tr("Train on the first N training images only, for a quick try"));
    form->addRow(tr("Batch size"), batch_);
    form->addRow(tr("Epochs"), epochs_);
    form->addRow(tr("Optimiser"), optimizer_);
    form->addRow(tr("Learning rate"), learningRate_);
    form->addRow(tr("Schedule"), schedule_);
    form->addRow(tr("Augmentation"), augmentation_);
    form->addRow(tr("Seed"), seed_);
    form->addRow(tr("Training images"), limit_);

    auto* datasetPage = new QWidget;
    dataset_ = new DatasetPicker(datasetPage);
    auto* datasetLayout = new QVBoxLayout(datasetPage);
    datasetLayout->addWidget(dataset_);
    datasetLayout->addStretch(1);

    problems_ = new QLabel(this);
    problems_->setObjectName("settingsProblems");
    problems_->setWordWrap(true);

    pages_ = new QTabWidget(this);
    pages_->setObjectName("settingsPages");
    pages_->addTab(scrolled(datasetPage), tr("Data set"));
    pages_->addTab(scrolled(trainingBox), tr("Training"));
    pages_->addTab(scrolled(hardwarePage), tr("Hardware"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(pages_, 1);
    layout->addWidget(problems_);

    auto changed = [this] {
        if (loading_) return;
        refreshProblems();
        emit settingsChanged();
    };
    connect(hardware_, &HardwarePicker::changed, this, changed);
    connect(dataset_, &DatasetPicker::changed, this, changed);
    for (QSpinBox* box : {batch_, epochs_, seed_, limit_}) connect(box, &QSpinBox::valueChanged, this, changed);
    connect(learningRate_, &QDoubleSpinBox::valueChanged, this, changed);
    for (QComboBox* box : {optimizer_, schedule_}) connect(box, &QComboBox::currentIndexChanged, this, changed);
    connect(augmentation_, &QComboBox::currentTextChanged, this, changed);

    setSettings(RunSettings{});
}

RunSettings RunSettingsPanel::settings() const {
    RunSettings settings;
    hardware_->applyTo(settings);
    settings.dataset = dataset_->datasetSpec();
    settings.batchSize = batch_->value();
    settings.epochs = epochs_->value();
    settings.optimizer = optimizer_->currentData().toString();
    settings.learningRate = learningRate_->value();
    settings.schedule = schedule_->currentData().toString();
    settings.augmentation = augmentation_->currentText().trimmed();
    settings.seed = seed_->value();
    settings.limit = limit_->value();
    return settings;
}

void RunSettingsPanel::setSettings(const RunSettings& settings) {
    loading_ = true;
    hardware_->load(settings);
    dataset_->setDatasetSpec(settings.dataset);
    batch_->setValue(settings.batchSize);
    epochs_->setValue(settings.epochs);
    optimizer_->setCurrentIndex(std::max(0, optimizer_->findData(settings.optimizer)));
    learningRate_->setValue(settings.learningRate);
    schedule_->setCurrentIndex(std::max(0, schedule_->findData(settings.schedule)));
    augmentation_->setCurrentText(settings.augmentation);
    seed_->setValue(settings.seed);
    limit_->setValue(settings.limit);
    loading_ = false;
    refreshProblems();
    emit settingsChanged();
}

void RunSettingsPanel::refreshProblems() {
    const QStringList found = settings().problems();
    QPalette palette = this->palette();
    palette.setColor(QPalette::WindowText, problemColor(palette));
    problems_->setPalette(palette);
    problems_->setText(found.join('\n'));
    problems_->setVisible(!found.isEmpty());
}

}  // namespace cnnstudio::ui
