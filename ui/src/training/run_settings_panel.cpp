#include "cnnstudio/ui/training/run_settings_panel.h"

#include <climits>

#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include "cnnstudio/model_library.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/training/augmentation_editor.h"
#include "cnnstudio/ui/training/dataset_picker.h"
#include "cnnstudio/ui/training/hardware_picker.h"
#include "common/layer_colors.h"
#include "common/wheel_guard.h"

namespace cnnstudio::ui {

namespace {

// The installed models' names, for the teachers' hint and completion.
QStringList installedModels() {
    QStringList names;
    for (const std::string& name : installedModelNames()) names << QString::fromStdString(name);
    return names;
}

}  // namespace

RunSettingsPanel::RunSettingsPanel(QWidget* parent) : QWidget(parent) {
    // Three pages, each in a scroll area so that a short window shows all of it.
    auto scrolled = [](QWidget* page) {
        auto* scroll = new QScrollArea;
        scroll->setWidget(page);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        // A page wider than the column (a data set preview of many classes) scrolls instead of
        // being cut off.
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
        return scroll;
    };
    auto* hardwarePage = new QWidget;
    hardware_ = new HardwarePicker(hardwarePage);
    auto* hardwareLayout = new QVBoxLayout(hardwarePage);
    hardwareLayout->addWidget(hardware_);
    hardwareLayout->addStretch(1);

    QWidget* trainingBox = makeTrainingPage();

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
    letWheelScrollPastUnfocusedFields(this);

    auto changed = [this] {
        if (loading_) return;
        refreshProblems();
        emit settingsChanged();
    };
    connect(hardware_, &HardwarePicker::changed, this, changed);
    connect(dataset_, &DatasetPicker::changed, this, changed);
    for (QSpinBox* box : {batch_, epochs_, seed_, limit_, warmupEpochs_, earlyStop_, logEvery_})
        connect(box, &QSpinBox::valueChanged, this, changed);
    for (QDoubleSpinBox* box : {learningRate_, momentum_, weightDecay_, labelSmoothing_, distillWeight_, distillTemperature_})
        connect(box, &QDoubleSpinBox::valueChanged, this, changed);
    for (QComboBox* box : {optimizer_, schedule_, classWeights_})
        connect(box, &QComboBox::currentIndexChanged, this, changed);
    for (QCheckBox* box : {scaleLearningRate_, skipBad_}) connect(box, &QCheckBox::toggled, this, changed);
    connect(teachers_, &QLineEdit::textChanged, this, changed);
    connect(teachers_, &QLineEdit::textChanged, this, &RunSettingsPanel::refreshDistillationRows);
    connect(optimizer_, &QComboBox::currentIndexChanged, this, &RunSettingsPanel::refreshOptimiserRows);
    connect(seed_, &QSpinBox::valueChanged, dataset_, [this](int seed) { dataset_->setValidationSeed(std::uint64_t(seed)); });
    connect(skipBad_, &QCheckBox::toggled, dataset_, &DatasetPicker::setSkipUnreadable);
    connect(augmentation_, &AugmentationEditor::changed, this, changed);

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
    settings.augmentation = augmentation_->text();
    settings.seed = seed_->value();
    settings.limit = limit_->value();
    settings.momentum = momentum_->value();
    settings.weightDecay = weightDecay_->value();
    settings.warmupEpochs = warmupEpochs_->value();
    settings.labelSmoothing = labelSmoothing_->value();
    settings.classWeights = classWeights_->currentData().toString();
    for (const QString& teacher : teachers_->text().split(',', Qt::SkipEmptyParts))
        if (!teacher.trimmed().isEmpty()) settings.teachers << teacher.trimmed();
    settings.distillWeight = distillWeight_->value();
    settings.distillTemperature = distillTemperature_->value();
    settings.earlyStopPatience = earlyStop_->value();
    settings.logEvery = logEvery_->value();
    settings.scaleLearningRate = scaleLearningRate_->isChecked();
    settings.skipBad = skipBad_->isChecked();
    return settings;
}

void RunSettingsPanel::setSettings(const RunSettings& settings) {
    loading_ = true;
    hardware_->load(settings);
    // The seed and the skipping first: the data set's preview is then read once, for what this run
    // will train on.
    dataset_->setValidationSeed(std::uint64_t(settings.seed));
    dataset_->setSkipUnreadable(settings.skipBad);
    dataset_->setDatasetSpec(settings.dataset);
    batch_->setValue(settings.batchSize);
    epochs_->setValue(settings.epochs);
    optimizer_->setCurrentIndex(std::max(0, optimizer_->findData(settings.optimizer)));
    learningRate_->setValue(settings.learningRate);
    schedule_->setCurrentIndex(std::max(0, schedule_->findData(settings.schedule)));
    augmentation_->setText(settings.augmentation);
    seed_->setValue(settings.seed);
    limit_->setValue(settings.limit);
    momentum_->setValue(settings.momentum);
    weightDecay_->setValue(settings.weightDecay);
    warmupEpochs_->setValue(settings.warmupEpochs);
    labelSmoothing_->setValue(settings.labelSmoothing);
    classWeights_->setCurrentIndex(std::max(0, classWeights_->findData(settings.classWeights)));
    teachers_->setText(settings.teachers.join(", "));
    distillWeight_->setValue(settings.distillWeight);
    distillTemperature_->setValue(settings.distillTemperature);
    earlyStop_->setValue(settings.earlyStopPatience);
    logEvery_->setValue(settings.logEvery);
    scaleLearningRate_->setChecked(settings.scaleLearningRate);
    skipBad_->setChecked(settings.skipBad);
    loading_ = false;
    refreshOptimiserRows();
    refreshDistillationRows();
    refreshProblems();
    emit settingsChanged();
}

QWidget* RunSettingsPanel::makeTrainingPage() {
    auto* page = new QWidget;
    auto* form = new QFormLayout(page);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    auto section = [form, page](const QString& title) {
        auto* heading = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()), page);
        form->addRow(heading);
    };
    auto spin = [page](const char* name, int minimum, int maximum) {
        auto* box = new QSpinBox(page);
        box->setObjectName(name);
        box->setRange(minimum, maximum);
        return box;
    };
    auto decimal = [page](const char* name, double minimum, double maximum, int decimals, double step) {
        auto* box = new QDoubleSpinBox(page);
        box->setObjectName(name);
        box->setDecimals(decimals);
        box->setRange(minimum, maximum);
        box->setSingleStep(step);
        return box;
    };

    batch_ = spin("batchSize", 1, 65536);
    batch_->setToolTip(tr("Images per step on each rank"));
    epochs_ = spin("epochs", 1, 100000);
    optimizer_ = new QComboBox(page);
    optimizer_->setObjectName("optimizer");
    optimizer_->addItem(tr("SGD with momentum"), "sgd");
    optimizer_->addItem(tr("Adam"), "adam");
    optimizer_->addItem(tr("AdamW (decoupled weight decay)"), "adamw");
    learningRate_ = decimal("learningRate", 0.000001, 10.0, 6, 0.001);
    learningRate_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    momentum_ = decimal("momentum", 0.0, 0.9999, 4, 0.01);
    momentum_->setToolTip(tr("SGD only: how much of the previous update each step keeps"));
    weightDecay_ = decimal("weightDecay", 0.0, 1.0, 6, 0.0001);
    weightDecay_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    weightDecay_->setSpecialValueText(tr("none"));
    weightDecay_->setToolTip(tr("L2 penalty for SGD and Adam; decoupled decay for AdamW"));
    scaleLearningRate_ = new QCheckBox(tr("Scale with the number of ranks"), page);
    scaleLearningRate_->setObjectName("scaleLearningRate");
    scaleLearningRate_->setToolTip(tr("Multiply the learning rate by the number of data-parallel ranks, with a "
                                      "one-epoch warm-up unless one is set"));

    schedule_ = new QComboBox(page);
    schedule_->setObjectName("schedule");
    schedule_->addItem(tr("constant"), "constant");
    schedule_->addItem(tr("step decay"), "step");
    schedule_->addItem(tr("cosine"), "cosine");
    schedule_->addItem(tr("reduce on plateau"), "plateau");
    warmupEpochs_ = spin("warmupEpochs", 0, 1000);
    warmupEpochs_->setSpecialValueText(tr("none"));
    warmupEpochs_->setSuffix(tr(" epoch(s)"));
    warmupEpochs_->setToolTip(tr("Raise the learning rate linearly from a hundredth of it over these epochs"));
    earlyStop_ = spin("earlyStop", 0, 100000);
    earlyStop_->setSpecialValueText(tr("off"));
    earlyStop_->setToolTip(tr("Stop after this many epochs without a better validation accuracy"));

    labelSmoothing_ = decimal("labelSmoothing", 0.0, 0.999, 3, 0.05);
    labelSmoothing_->setSpecialValueText(tr("none"));
    labelSmoothing_->setToolTip(tr("Spread this share of each label's weight over the other classes"));
    classWeights_ = new QComboBox(page);
    classWeights_->setObjectName("classWeights");
    classWeights_->addItem(tr("equal"), "none");
    classWeights_->addItem(tr("balanced (rare classes weigh more)"), "balanced");
    classWeights_->setToolTip(tr("Balanced weighs each class by the inverse of its share of the training images"));

    teachers_ = new QLineEdit(page);
    teachers_->setObjectName("teachers");
    teachers_->setPlaceholderText(tr("none"));
    teachers_->setToolTip(tr("Trained models to distil from, separated by commas: an installed model's name (%1) "
                             "or a model or run folder. The network also learns the mean of their predictions on "
                             "each augmented batch; they must know the same classes.")
                              .arg(installedModels().join(", ")));
    teachers_->setCompleter(new QCompleter(installedModels(), teachers_));
    distillWeight_ = decimal("distillWeight", 0.01, 1.0, 2, 0.05);
    distillWeight_->setToolTip(tr("The share of the loss that learns the teachers; the labels get the rest"));
    distillTemperature_ = decimal("distillTemperature", 0.1, 100.0, 1, 0.5);
    distillTemperature_->setToolTip(tr("Above 1 softens the teachers' predictions: softmax(logits / T)"));

    augmentation_ = new AugmentationEditor(page);
    limit_ = spin("limit", 0, INT_MAX);
    limit_->setSpecialValueText(tr("all images"));
    limit_->setSingleStep(1000);
    limit_->setToolTip(tr("Train on the first N training images only, for a quick try"));
    skipBad_ = new QCheckBox(tr("Skip unreadable images and rows"), page);
    skipBad_->setObjectName("skipBad");
    skipBad_->setToolTip(tr("Leave out malformed CSV rows and images that cannot be read, counting them, "
                            "instead of stopping at the first"));
    seed_ = spin("seed", 0, INT_MAX);
    seed_->setToolTip(tr("Picks the validation images (where the data set has none of its own, as the Data set "
                         "tab counts them) and sets the initial weights, the data order, dropout and augmentation"));
    logEvery_ = spin("logEvery", 1, 1000000);
    logEvery_->setPrefix(tr("every "));
    logEvery_->setSuffix(tr(" step(s)"));
    logEvery_->setToolTip(tr("How often the worker reports the training loss and speed"));

    section(tr("Optimisation"));
    form->addRow(tr("Batch size"), batch_);
    form->addRow(tr("Epochs"), epochs_);
    form->addRow(tr("Optimiser"), optimizer_);
    form->addRow(tr("Learning rate"), learningRate_);
    form->addRow(QString(), scaleLearningRate_);
    form->addRow(tr("Momentum"), momentum_);
    form->addRow(tr("Weight decay"), weightDecay_);
    section(tr("Schedule"));
    form->addRow(tr("Learning rate schedule"), schedule_);
    form->addRow(tr("Warm-up"), warmupEpochs_);
    form->addRow(tr("Early stopping after"), earlyStop_);
    section(tr("Loss"));
    form->addRow(tr("Label smoothing"), labelSmoothing_);
    form->addRow(tr("Class weights"), classWeights_);
    form->addRow(tr("Teachers"), teachers_);
    form->addRow(tr("Distillation weight"), distillWeight_);
    form->addRow(tr("Temperature"), distillTemperature_);
    section(tr("Data"));
    form->addRow(tr("Augmentation"), augmentation_);
    form->addRow(tr("Training images"), limit_);
    form->addRow(QString(), skipBad_);
    form->addRow(tr("Seed"), seed_);
    form->addRow(tr("Progress"), logEvery_);
    return page;
}

void RunSettingsPanel::refreshOptimiserRows() {
    // Momentum is read by SGD only; Adam and AdamW have their own moments.
    momentum_->setEnabled(optimizer_->currentData().toString() == "sgd");
}

void RunSettingsPanel::refreshDistillationRows() {
    // The weight and temperature mean something only with a teacher.
    const bool distilling = !teachers_->text().trimmed().isEmpty();
    distillWeight_->setEnabled(distilling);
    distillTemperature_->setEnabled(distilling);
}

void RunSettingsPanel::refreshProblems() {
    const QStringList found = settings().problems();
    QPalette palette = this->palette();
    palette.setColor(QPalette::WindowText, problemColor(palette));
    problems_->setPalette(palette);
    problems_->setText(breakableAfterCommas(found.join('\n')));
    problems_->setVisible(!found.isEmpty());
}

}  // namespace cnnstudio::ui
