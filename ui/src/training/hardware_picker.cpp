#include "cnnstudio/ui/training/hardware_picker.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QListWidget>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/ui/common/formatting.h"
#include "cnnstudio/ui/training/hostfile_editor.h"
#include "cnnstudio/ui/training/run_settings.h"

namespace cnnstudio::ui {
namespace {

QString backendDescription(const QString& name) {
    if (name == "cpu-ref") return QObject::tr("cpu-ref — plain loops, one thread (the reference)");
    if (name == "cpu") return QObject::tr("cpu — oneDNN, with the CPU threads below");
    if (name == "cuda") return QObject::tr("cuda — our CUDA kernels");
    if (name == "cudnn") return QObject::tr("cudnn — cuDNN where faster");
    return name;
}

}  // namespace

HardwarePicker::HardwarePicker(QWidget* parent) : QWidget(parent) {
    backend_ = new QComboBox(this);
    backend_->setObjectName("backend");
    QStringList unavailable;
    for (const std::string& name : knownBackends()) {
        const QString backend = QString::fromStdString(name);
        const QString why = QString::fromStdString(backendUnavailableReason(name));
        backend_->addItem(backendDescription(backend), backend);
        const int row = backend_->count() - 1;
        if (!why.isEmpty()) {
            auto* model = qobject_cast<QStandardItemModel*>(backend_->model());
            model->item(row)->setEnabled(false);
            backend_->setItemData(row, why, Qt::ToolTipRole);
            unavailable << tr("%1: %2").arg(backend, why);
        }
    }
    backendNote_ = new QLabel(unavailable.isEmpty() ? QString() : tr("Unavailable here — %1").arg(unavailable.join("; ")), this);
    backendNote_->setObjectName("backendNote");
    backendNote_->setWordWrap(true);
    backendNote_->setForegroundRole(QPalette::PlaceholderText);
    backendNote_->setVisible(!unavailable.isEmpty());

    precision_ = new QComboBox(this);
    precision_->setObjectName("precision");
    precision_->addItem(tr("fp32"), "fp32");
    precision_->addItem(tr("tf32 (tensor cores, fp32 storage)"), "tf32");
    precision_->addItem(tr("bf16 (mixed precision)"), "bf16");

    gpus_ = new QListWidget(this);
    gpus_->setObjectName("gpuList");
    gpus_->setMaximumHeight(90);
    gpuNote_ = new QLabel(tr("Looking for GPUs…"), this);
    gpuNote_->setWordWrap(true);
    gpuNote_->setForegroundRole(QPalette::PlaceholderText);
    gpuCount_ = new QSpinBox(this);
    gpuCount_->setObjectName("gpuCount");
    gpuCount_->setRange(1, 1);
    threads_ = new QSpinBox(this);
    threads_->setObjectName("threads");
    threads_->setRange(0, 1024);
    threads_->setSpecialValueText(tr("every core (%1)").arg(QThread::idealThreadCount()));
    cpuRanks_ = new QSpinBox(this);
    cpuRanks_->setObjectName("cpuRanks");
    cpuRanks_->setRange(1, 256);
    cpuRanks_->setToolTip(tr("Data-parallel training processes on each node (started with mpirun); each uses "
                             "the CPU threads above"));
    nodes_ = new QSpinBox(this);
    nodes_->setObjectName("nodeCount");
    nodes_->setRange(1, 256);
    hostfile_ = new HostfileEditor(this);
    machine_ = new QLabel(this);
    machine_->setWordWrap(true);
    machine_->setForegroundRole(QPalette::PlaceholderText);

    backend_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    backend_->setMinimumContentsLength(14);
    precision_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    precision_->setMinimumContentsLength(8);
    auto* gpuBox = new QWidget(this);
    auto* gpuLayout = new QVBoxLayout(gpuBox);
    gpuLayout->setContentsMargins(0, 0, 0, 0);
    gpuLayout->addWidget(gpus_);
    gpuLayout->addWidget(gpuNote_);

    form_ = new QFormLayout(this);
    form_->setContentsMargins(0, 0, 0, 0);
    form_->addRow(tr("Backend"), backend_);
    form_->addRow(QString(), backendNote_);
    form_->addRow(tr("Precision"), precision_);
    form_->addRow(tr("GPUs"), gpuBox);
    form_->addRow(tr("GPU count"), gpuCount_);
    form_->addRow(tr("CPU threads"), threads_);
    form_->addRow(tr("CPU ranks"), cpuRanks_);
    form_->addRow(tr("Nodes"), nodes_);
    form_->addRow(tr("Hostfile"), hostfile_);
    form_->addRow(QString(), machine_);

    for (QComboBox* box : {backend_, precision_})
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            updateEnabledState();
            emit changed();
        });
    for (QSpinBox* box : {gpuCount_, threads_, cpuRanks_, nodes_})
        connect(box, &QSpinBox::valueChanged, this, [this] {
            updateEnabledState();
            emit changed();
        });
    connect(gpus_, &QListWidget::itemChanged, this, [this] { emit changed(); });
    connect(hostfile_, &HostfileEditor::textChanged, this, [this] { emit changed(); });
    connect(&discovery_, &QFutureWatcher<HardwareInfo>::finished, this,
            [this] { setHardware(discovery_.result()); });
    discovery_.setFuture(QtConcurrent::run([] { return discoverHardware(); }));
    updateEnabledState();
}

void HardwarePicker::setHardware(const HardwareInfo& hardware) {
    hardware_ = hardware;
    fillGpuList();
    QString machine = tr("This machine: %1, %n core(s)", nullptr, hardware_.cpuCores)
                          .arg(QString::fromStdString(hardware_.cpuName));
    if (!hardware_.onednnVersion.empty())
        machine += tr("; oneDNN %1").arg(QString::fromStdString(hardware_.onednnVersion));
    if (!hardware_.driverVersion.empty())
        machine += tr("; CUDA driver %1").arg(QString::fromStdString(hardware_.driverVersion));
    if (!hardware_.cudnnVersion.empty())
        machine += tr(", cuDNN %1").arg(QString::fromStdString(hardware_.cudnnVersion));
    machine_->setText(machine);
    updateEnabledState();
    emit changed();
}

void HardwarePicker::fillGpuList() {
    QSignalBlocker block(gpus_);
    gpus_->clear();
    for (const GpuInfo& gpu : hardware_.gpus) {
        auto* item = new QListWidgetItem(tr("GPU %1: %2 — %3")
                                             .arg(gpu.index)
                                             .arg(QString::fromStdString(gpu.name))
                                             .arg(formatBytes(std::int64_t(gpu.totalBytes))),
                                         gpus_);
        item->setData(Qt::UserRole, gpu.index);
        item->setToolTip(tr("compute capability %1.%2, %3 multiprocessors, %4 free")
                             .arg(gpu.computeMajor)
                             .arg(gpu.computeMinor)
                             .arg(gpu.multiprocessors)
                             .arg(formatBytes(std::int64_t(gpu.freeBytes))));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(pendingGpuIndices_.contains(gpu.index) ? Qt::Checked : Qt::Unchecked);
    }
    gpus_->setVisible(!hardware_.gpus.empty());
    gpuNote_->setText(hardware_.gpus.empty()
                          ? tr("No GPU: %1").arg(QString::fromStdString(hardware_.gpuProblem.empty()
                                                                             ? "none found"
                                                                             : hardware_.gpuProblem))
                          : tr("Tick the GPUs to use, or none to use the first ones."));
    QSignalBlocker blockCount(gpuCount_);
    gpuCount_->setRange(1, std::max<int>(1, int(hardware_.gpus.size())));
}

void HardwarePicker::updateEnabledState() {
    const QString backend = backend_->currentData().toString();
    const bool gpu = backend == "cuda" || backend == "cudnn";
    // Only the precisions this backend trains in here can be chosen (fp32 is always one).
    const auto* precisions = qobject_cast<QStandardItemModel*>(precision_->model());
    for (int row = 0; row < precision_->count(); ++row)
        precisions->item(row)->setEnabled(
            backendTrainsIn(backend.toStdString(), precision_->itemData(row).toString().toStdString()));
    precision_->setEnabled(backendPrecisions(backend.toStdString()).size() > 1);
    if (!precisions->item(precision_->currentIndex())->isEnabled()) {
        QSignalBlocker block(precision_);
        precision_->setCurrentIndex(0);
    }
    gpus_->setEnabled(gpu);
    gpuCount_->setEnabled(gpu && hardware_.gpus.size() > 1);
    threads_->setEnabled(backend == "cpu");
    cpuRanks_->setEnabled(!gpu);
    form_->setRowVisible(hostfile_, nodes_->value() > 1);  // only a multi-node run needs one
    hostfile_->setRequirement(nodes_->value(), gpu ? gpuCount_->value() : cpuRanks_->value());
}

void HardwarePicker::applyTo(RunSettings& settings) const {
    settings.backend = backend_->currentData().toString();
    settings.precision = precision_->currentData().toString();
    settings.gpuCount = gpuCount_->value();
    settings.gpuIndices.clear();
    for (int row = 0; row < gpus_->count(); ++row)
        if (gpus_->item(row)->checkState() == Qt::Checked)
            settings.gpuIndices << gpus_->item(row)->data(Qt::UserRole).toInt();
    if (gpus_->count() == 0) settings.gpuIndices = pendingGpuIndices_;
    settings.threads = settings.backend == "cpu-ref" ? 1 : threads_->value();
    settings.cpuRankCount = cpuRanks_->value();
    settings.nodeCount = nodes_->value();
    settings.hostfileText = hostfile_->text();
}

void HardwarePicker::load(const RunSettings& settings) {
    {
        QSignalBlocker blockBackend(backend_), blockPrecision(precision_), blockCount(gpuCount_),
            blockThreads(threads_), blockRanks(cpuRanks_), blockNodes(nodes_), blockHostfile(hostfile_);
        const int backendRow = backend_->findData(settings.backend);
        const auto* model = qobject_cast<QStandardItemModel*>(backend_->model());
        if (backendRow >= 0 && model->item(backendRow)->isEnabled()) backend_->setCurrentIndex(backendRow);
        else backend_->setCurrentIndex(backend_->findData("cpu"));
        precision_->setCurrentIndex(std::max(0, precision_->findData(settings.precision)));
        gpuCount_->setValue(settings.gpuCount);
        threads_->setValue(settings.threads);
        cpuRanks_->setValue(settings.cpuRankCount);
        nodes_->setValue(settings.nodeCount);
        hostfile_->setText(settings.hostfileText);
        pendingGpuIndices_ = settings.gpuIndices;
        fillGpuList();
    }
    updateEnabledState();
    emit changed();
}

}  // namespace cnnstudio::ui
