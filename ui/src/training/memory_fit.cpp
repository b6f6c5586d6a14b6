#include "cnnstudio/ui/training/memory_fit.h"

#include <algorithm>
#include <limits>

#include <QObject>

#include "cnnstudio/memory_estimate.h"

namespace cnnstudio::ui {
namespace {

QString gibibytes(double bytes) { return QObject::tr("%1 GiB").arg(bytes / double(1ull << 30), 0, 'f', 1); }

struct Budget {
    std::size_t freeBytes = 0;
    QString memoryName;  // "this machine's memory", "GPU 1"
};

// The least free memory among the GPUs the run takes; none when they are not discovered.
std::optional<Budget> gpuBudget(const RunSettings& settings, const HardwareInfo& hardware) {
    QList<int> chosen = settings.gpuIndices;
    if (chosen.isEmpty())
        for (int index = 0; index < settings.gpuCount; ++index) chosen << index;
    std::optional<Budget> tightest;
    for (int index : chosen) {
        const auto gpu = std::find_if(hardware.gpus.begin(), hardware.gpus.end(),
                                      [index](const GpuInfo& info) { return info.index == index; });
        if (gpu == hardware.gpus.end()) return std::nullopt;
        if (!tightest || gpu->freeBytes < tightest->freeBytes)
            tightest = Budget{gpu->freeBytes, QObject::tr("GPU %1 (%2)").arg(index).arg(QString::fromStdString(gpu->name))};
    }
    return tightest;
}

std::optional<Budget> hostBudget(const RunSettings& settings, std::optional<std::size_t> hostFreeBytes) {
    if (!hostFreeBytes) return std::nullopt;
    const int ranks = std::max(1, settings.cpuRankCount);
    return Budget{*hostFreeBytes / std::size_t(ranks),
                  ranks == 1 ? QObject::tr("this machine's memory")
                             : QObject::tr("each of the %1 ranks' share of this machine's memory").arg(ranks)};
}

}  // namespace

QString batchMemoryRefusal(const NetworkFit& fit, const RunSettings& settings, const HardwareInfo& hardware,
                           std::optional<std::size_t> hostFreeBytes) {
    if (!fit.known || !fit.canTrain() || settings.nodeCount > 1) return {};  // other nodes' memory is not known here
    const std::optional<Budget> budget =
        settings.usesGpu() ? gpuBudget(settings, hardware) : hostBudget(settings, hostFreeBytes);
    if (!budget) return {};
    const std::size_t elementBytes = settings.precision == "bf16" ? 2 : sizeof(float);
    const MemoryEstimate estimate =
        estimateTrainingMemory(fit.fitted, elementBytes, settings.optimizer.toStdString());
    const std::int64_t needed = estimate.bytesFor(settings.batchSize);
    if (needed <= std::int64_t(std::min<std::size_t>(budget->freeBytes, std::numeric_limits<std::int64_t>::max())))
        return {};
    const QString need = QObject::tr("A batch of %1 needs about %2 to train; %3 has %4 free.")
                             .arg(settings.batchSize)
                             .arg(gibibytes(double(needed)), budget->memoryName, gibibytes(double(budget->freeBytes)));
    const int fits = estimate.largestBatchWithin(budget->freeBytes);
    if (fits == 0)
        return need + ' ' + QObject::tr("Not even one image fits beside the parameters and optimiser state: use a "
                                        "smaller network, or free memory.");
    return need + ' ' + QObject::tr("Set the batch size to %1 or less on the Training tab.").arg(fits);
}

}  // namespace cnnstudio::ui
