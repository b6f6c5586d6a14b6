#include "cnnstudio/ui/hardware/sweep_planner.h"

#include <algorithm>
#include <memory>
#include <vector>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QScrollArea>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/training/hostfile_editor.h"
#include "common/layer_colors.h"
#include "common/wheel_guard.h"

namespace cnnstudio::ui {
namespace {

constexpr int boxesPerRow = 4;
// The network list's first entry, the Design page's network; the presets follow, by name.
const QString designedEntry = QStringLiteral("designed");

QCheckBox* findBox(const QList<QCheckBox*>& boxes, const QVariant& value) {
    for (QCheckBox* box : boxes)
        if (box->property("value") == value) return box;
    return nullptr;
}

QGroupBox* group(const QString& title, QWidget* parent) {
    auto* box = new QGroupBox(title, parent);
    box->setFlat(true);
    return box;
}

}  // namespace

SweepPlanner::SweepPlanner(QWidget* parent) : QWidget(parent) {
    setObjectName("sweepPlanner");
    model_ = new QComboBox(this);
    model_->setObjectName("sweepModel");
    model_->addItem(QString(), designedEntry);
    model_->insertSeparator(1);
    for (const std::string& name : presetNames()) {
        const QString preset = QString::fromStdString(name);
        model_->addItem(preset, preset);
    }
    // A designed network's name can be long: the column keeps its width, the list shows it whole.
    model_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    model_->setMinimumContentsLength(12);
    networkNote_ = new QLabel(this);
    networkNote_->setObjectName("sweepNetworkNote");
    networkNote_->setWordWrap(true);
    networkNote_->setForegroundRole(QPalette::PlaceholderText);
    designed_ = designedNetworkToSweep({}, {}, {});
    batch_ = new QSpinBox(this);
    batch_->setObjectName("sweepBatch");
    batch_->setRange(1, 65536);
    batch_->setValue(64);
    batch_->setToolTip(tr("Images per step on each rank"));
    steps_ = new QSpinBox(this);
    steps_->setObjectName("sweepSteps");
    steps_->setRange(0, 10000);
    steps_->setSpecialValueText(tr("benchmark's default"));
    steps_->setToolTip(tr("Timed training steps per repeat (three repeats after warm-up); slow configurations "
                          "run fewer and say so"));
    auto* networkBox = group(tr("Network"), this);
    auto* networkForm = new QFormLayout(networkBox);
    networkForm->addRow(tr("Network"), model_);
    networkForm->addRow(networkNote_);
    networkForm->addRow(tr("Batch per rank"), batch_);
    networkForm->addRow(tr("Timed steps"), steps_);

    auto* backendBox = group(tr("Backends"), this);
    auto* backendLayout = new QVBoxLayout(backendBox);
    for (const std::string& name : knownBackends()) {
        const QString backend = QString::fromStdString(name);
        auto* box = new QCheckBox(backend, backendBox);
        box->setObjectName("sweepBackend-" + backend);
        box->setProperty("value", backend);
        const QString why = QString::fromStdString(backendUnavailableReason(name));
        box->setProperty("available", why.isEmpty());
        if (!why.isEmpty()) {
            box->setEnabled(false);
            box->setText(tr("%1 — unavailable here").arg(backend));
            box->setToolTip(why);
        }
        backends_ << box;
        backendLayout->addWidget(box);
    }

    auto* threadBox = group(tr("CPU threads (cpu backend)"), this);
    threadGrid_ = new QGridLayout(threadBox);
    auto* precisionBox = group(tr("Precisions and GPUs"), this);
    auto* gpuLayout = new QVBoxLayout(precisionBox);
    auto* precisionRow = new QHBoxLayout;
    precisionRow->addWidget(new QLabel(tr("Precision"), precisionBox));
    for (const QString& precision : {QStringLiteral("fp32"), QStringLiteral("tf32"), QStringLiteral("bf16")}) {
        auto* box = new QCheckBox(precision, precisionBox);
        box->setObjectName("sweepPrecision-" + precision);
        box->setProperty("value", precision);
        precisions_ << box;
        precisionRow->addWidget(box);
    }
    precisionRow->addStretch();
    gpuLayout->addLayout(precisionRow);
    auto* gpuRow = new QHBoxLayout;
    gpuRow->addWidget(new QLabel(tr("GPUs"), precisionBox));
    gpuGrid_ = new QGridLayout;
    gpuRow->addLayout(gpuGrid_, 1);
    gpuLayout->addLayout(gpuRow);
    gpuNote_ = new QLabel(tr("Looking for GPUs…"), precisionBox);
    gpuNote_->setWordWrap(true);
    gpuNote_->setForegroundRole(QPalette::PlaceholderText);
    gpuLayout->addWidget(gpuNote_);
    nodes_ = new QSpinBox(precisionBox);
    nodes_->setObjectName("sweepNodes");
    nodes_->setRange(1, 256);
    nodes_->setToolTip(tr("Nodes of a multi-node configuration, started with mpirun and the hostfile below"));
    auto* nodeRow = new QHBoxLayout;
    nodeRow->addWidget(new QLabel(tr("Nodes"), precisionBox));
    nodeRow->addWidget(nodes_);
    nodeRow->addStretch();
    gpuLayout->addLayout(nodeRow);
    hostfile_ = new HostfileEditor(precisionBox);
    gpuLayout->addWidget(hostfile_);

    configurations_ = new QListWidget(this);
    configurations_->setObjectName("sweepConfigurations");
    configurations_->setMinimumHeight(60);
    problemsLabel_ = new QLabel(this);
    problemsLabel_->setObjectName("sweepProblems");
    problemsLabel_->setWordWrap(true);
    machine_ = new QLabel(this);
    machine_->setWordWrap(true);
    machine_->setForegroundRole(QPalette::PlaceholderText);
    run_ = new QPushButton(tr("Run sweep"), this);
    run_->setObjectName("runSweep");
    run_->setDefault(true);
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setObjectName("cancelSweep");
    cancel_->setToolTip(tr("End the running benchmark at once; what finished stays in the report"));
    progress_ = new QProgressBar(this);
    progress_->setObjectName("sweepProgress");
    progress_->setTextVisible(true);
    status_ = new QLabel(this);
    status_->setObjectName("sweepStatus");
    status_->setWordWrap(true);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(run_);
    buttons->addWidget(cancel_);
    // The choices scroll; what stops a sweep, Run, Cancel and the progress stay in view below them,
    // in a window of any height (at 1024x700 the choices are taller than the page).
    auto* choices = new QWidget(this);
    auto* choicesLayout = new QVBoxLayout(choices);
    choicesLayout->setContentsMargins(0, 0, 0, 0);
    choicesLayout->addWidget(networkBox);
    choicesLayout->addWidget(backendBox);
    choicesLayout->addWidget(threadBox);
    choicesLayout->addWidget(precisionBox);
    choicesLayout->addWidget(new QLabel(tr("Configurations to measure"), choices));
    choicesLayout->addWidget(configurations_, 1);
    choicesScroll_ = new QScrollArea(this);
    choicesScroll_->setObjectName("sweepChoices");
    choicesScroll_->setWidget(choices);
    choicesScroll_->setWidgetResizable(true);
    choicesScroll_->setFrameShape(QFrame::NoFrame);
    choicesScroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(choicesScroll_, 1);
    layout->addWidget(problemsLabel_);
    layout->addLayout(buttons);
    layout->addWidget(progress_);
    layout->addWidget(status_);
    layout->addWidget(machine_);

    for (QCheckBox* box : backends_ + precisions_) connect(box, &QCheckBox::toggled, this, &SweepPlanner::refresh);
    connect(model_, &QComboBox::currentIndexChanged, this, &SweepPlanner::refresh);
    for (QSpinBox* box : {batch_, steps_, nodes_}) connect(box, &QSpinBox::valueChanged, this, &SweepPlanner::refresh);
    connect(hostfile_, &HostfileEditor::textChanged, this, &SweepPlanner::refresh);
    connect(run_, &QPushButton::clicked, this, &SweepPlanner::runRequested);
    connect(cancel_, &QPushButton::clicked, this, &SweepPlanner::cancelRequested);
    connect(&discovery_, &QFutureWatcher<HardwareInfo>::finished, this, [this] {
        if (!haveHardware_) setHardware(discovery_.result());
    });
    discovery_.setFuture(QtConcurrent::run([] { return discoverHardware(); }));

    setPlan(SweepPlan{});
    setRunning(false);
    letWheelScrollPastUnfocusedFields(this);  // the wheel scrolls the choices
    status_->setText(tr("Tick what to measure, then Run sweep."));
}

QCheckBox* SweepPlanner::backendBox(const QString& backend) const { return findBox(backends_, backend); }
QCheckBox* SweepPlanner::threadBox(int threads) const { return findBox(threads_, threads); }
QCheckBox* SweepPlanner::precisionBox(const QString& precision) const { return findBox(precisions_, precision); }
QCheckBox* SweepPlanner::gpuCountBox(int gpus) const { return findBox(gpuCounts_, gpus); }

void SweepPlanner::setDesignedNetwork(const DesignedNetwork& network) {
    designed_ = network;
    refresh();
}

void SweepPlanner::chooseDesignedNetwork() { model_->setCurrentIndex(model_->findData(designedEntry)); }

void SweepPlanner::setHardware(const HardwareInfo& hardware) {
    hardware_ = hardware;
    haveHardware_ = true;
    QString machine = tr("This machine: %1, %2").arg(QString::fromStdString(hardware.cpuName), countOf(hardware.cpuCores, tr("core"), tr("cores")));
    for (const GpuInfo& gpu : hardware.gpus)
        machine += tr("; GPU %1: %2 (%3)")
                       .arg(gpu.index)
                       .arg(QString::fromStdString(gpu.name), formatBytes(std::int64_t(gpu.totalBytes)));
    machine_->setText(machine);
    gpuNote_->setText(hardware.gpus.empty()
                          ? tr("No GPU: %1").arg(QString::fromStdString(hardware.gpuProblem.empty() ? "none found"
                                                                                                 : hardware.gpuProblem))
                          : QString());
    gpuNote_->setVisible(hardware.gpus.empty());
    rebuildCountBoxes();
    refresh();
}

void SweepPlanner::rebuildCountBoxes() {
    // The ticks survive a rebuild: those of the boxes now, or those setPlan() asked for.
    if (!threads_.isEmpty() || !gpuCounts_.isEmpty()) {
        const SweepPlan current = plan();
        pendingThreads_ = current.cpuThreads;
        pendingGpuCounts_ = current.gpuCounts;
    }
    auto rebuild = [this](QList<QCheckBox*>& boxes, QGridLayout* grid, const QList<int>& counts,
                          const QList<int>& ticked, const QString& name, bool gpus) {
        qDeleteAll(boxes);
        boxes.clear();
        for (int i = 0; i < counts.size(); ++i) {
            const int count = counts[i];
            auto* box = new QCheckBox(gpus ? countOf(count, tr("GPU"), tr("GPUs")) : QString::number(count), this);
            box->setObjectName(name + QString::number(count));
            box->setProperty("value", count);
            box->setChecked(ticked.contains(count));
            connect(box, &QCheckBox::toggled, this, &SweepPlanner::refresh);
            grid->addWidget(box, i / boxesPerRow, i % boxesPerRow);
            boxes << box;
        }
    };
    rebuild(threads_, threadGrid_, offeredThreadCounts(haveHardware_ ? hardware_.cpuCores : QThread::idealThreadCount()),
            pendingThreads_, "sweepThreads-", false);
    rebuild(gpuCounts_, gpuGrid_, offeredGpuCounts(int(hardware_.gpus.size())), pendingGpuCounts_, "sweepGpus-", true);
}

SweepPlan SweepPlanner::plan() const {
    SweepPlan plan;
    if (model_->currentData() == designedEntry) plan.designed = designed_;
    else plan.model = model_->currentData().toString();
    plan.batch = batch_->value();
    plan.steps = steps_->value();
    plan.backends.clear();
    // A backend box is disabled for two reasons: this build cannot run the backend, or a sweep is
    // running. Only the first drops the backend from the plan.
    for (QCheckBox* box : backends_)
        if (box->isChecked() && box->property("available").toBool()) plan.backends << box->property("value").toString();
    plan.cpuThreads.clear();
    for (QCheckBox* box : threads_)
        if (box->isChecked()) plan.cpuThreads << box->property("value").toInt();
    plan.precisions.clear();
    for (QCheckBox* box : precisions_)
        if (box->isChecked()) plan.precisions << box->property("value").toString();
    plan.gpuCounts.clear();
    for (QCheckBox* box : gpuCounts_)
        if (box->isChecked()) plan.gpuCounts << box->property("value").toInt();
    plan.nodes = nodes_->value();
    plan.hostfileText = hostfile_->text();
    return plan;
}

void SweepPlanner::setPlan(const SweepPlan& plan) {
    {
        QList<QObject*> blocked{model_, batch_, steps_, nodes_, hostfile_};
        for (QCheckBox* box : backends_ + precisions_) blocked << box;
        std::vector<std::unique_ptr<QSignalBlocker>> blockers;
        for (QObject* object : blocked) blockers.push_back(std::make_unique<QSignalBlocker>(object));
        if (plan.designed) designed_ = *plan.designed;
        if (const int row = model_->findData(plan.designed ? designedEntry : plan.model); row >= 0)
            model_->setCurrentIndex(row);
        batch_->setValue(plan.batch);
        steps_->setValue(plan.steps);
        nodes_->setValue(plan.nodes);
        hostfile_->setText(plan.hostfileText);
        for (QCheckBox* box : backends_) box->setChecked(plan.backends.contains(box->property("value").toString()));
        for (QCheckBox* box : precisions_) box->setChecked(plan.precisions.contains(box->property("value").toString()));
    }
    pendingThreads_ = plan.cpuThreads;
    pendingGpuCounts_ = plan.gpuCounts;
    threads_.clear();  // rebuilt with the plan's ticks, not the old boxes'
    gpuCounts_.clear();
    for (QGridLayout* grid : {threadGrid_, gpuGrid_})
        while (QLayoutItem* item = grid->takeAt(0)) {
            delete item->widget();
            delete item;
        }
    rebuildCountBoxes();
    refresh();
}

void SweepPlanner::refresh() {
    const SweepPlan current = plan();
    const int designedRow = model_->findData(designedEntry);
    // The name first: the narrow column cuts the entry's end, and the name is what tells it.
    const QString designedName = QString::fromStdString(designed_.spec.name);
    model_->setItemText(designedRow, designed_.spec.nodes.empty() ? tr("Design page's network (none)")
                                                                  : tr("%1 (Design page)").arg(designedName));
    const QString designedToolTip =
        (QStringList{designed_.spec.nodes.empty() ? tr("The Design page has no network.")
                                                  : tr("%1: the network on the Design page.").arg(designedName)} +
         designed_.problems)
            .join('\n');
    model_->setItemData(designedRow, designedToolTip, Qt::ToolTipRole);
    model_->setToolTip(model_->currentIndex() == designedRow
                           ? designedToolTip
                           : tr("The network to measure: the one on the Design page, or a preset"));
    if (current.designed && current.designed->problems.isEmpty())
        networkNote_->setText(current.designed->fittedTo.isEmpty()
                                  ? tr("Measured as drawn on the Design page.")
                                  : tr("Measured as the Train page's run trains it: %1's input and classifier "
                                       "fitted to %2.")
                                        .arg(QString::fromStdString(current.designed->spec.name),
                                             current.designed->fittedTo));
    networkNote_->setVisible(current.designed && current.designed->problems.isEmpty());
    const bool gpuBackend = std::ranges::any_of(current.backends, isGpuBackend);
    const bool cpuBackend = current.backends.contains("cpu");
    for (QCheckBox* box : threads_) box->setEnabled(cpuBackend && !running_);
    const bool precisions = precisionsOffered(current.backends);
    for (QCheckBox* box : precisions_) box->setEnabled(precisions && !running_);
    for (QCheckBox* box : gpuCounts_) box->setEnabled(gpuBackend && !running_);
    nodes_->setEnabled(gpuBackend && !running_);
    hostfile_->setVisible(current.nodes > 1);
    if (current.nodes > 1) {
        const int mostGpus = current.gpuCounts.isEmpty() ? 1 : *std::ranges::max_element(current.gpuCounts);
        hostfile_->setRequirement(current.nodes, mostGpus);
    }

    configurations_->clear();
    for (const SweepConfiguration& configuration : current.configurations()) configurations_->addItem(configuration.label());
    problems_ = haveHardware_ ? current.problems(hardware_) : QStringList{tr("Looking at this machine's hardware…")};
    problemsLabel_->setText(problems_.join('\n'));
    problemsLabel_->setVisible(!problems_.isEmpty());
    QPalette problemPalette = palette();
    problemPalette.setColor(QPalette::WindowText, problemColor(problemPalette));
    problemsLabel_->setPalette(problemPalette);
    run_->setText(tr("Run %1").arg(countOf(configurations_->count(), tr("configuration"), tr("configurations"))));
    run_->setEnabled(!running_ && problems_.isEmpty() && configurations_->count() > 0);
    emit planChanged();
}

void SweepPlanner::setRunning(bool running) {
    running_ = running;
    for (QWidget* widget : QList<QWidget*>{model_, batch_, steps_}) widget->setEnabled(!running);
    for (QCheckBox* box : backends_) box->setEnabled(!running && box->property("available").toBool());
    cancel_->setEnabled(running);
    progress_->setVisible(running);
    if (running) progress_->setRange(0, 0);
    refresh();
}

void SweepPlanner::showProgress(int index, int count, const QString& label) {
    progress_->setRange(0, count);
    progress_->setValue(index);
    progress_->setFormat(tr("%1 of %2").arg(index + 1).arg(count));
    status_->setText(tr("Measuring %1…").arg(label));
}

void SweepPlanner::showSweepEnded(const QString& summary) { status_->setText(summary); }

}  // namespace cnnstudio::ui
