#include "cnnstudio/ui/hardware/sweep_plan.h"

#include <algorithm>

#include <QObject>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/ui/training/run_settings.h"
#include "cnnstudio/ui/common/formatting.h"

namespace cnnstudio::ui {
namespace {

QList<int> powersOfTwoUpTo(int limit) {
    QList<int> counts;
    for (int count = 1; count < limit; count *= 2) counts << count;
    if (limit >= 1) counts << limit;
    return counts;
}

}  // namespace

bool isGpuBackend(const QString& backend) { return backend == "cuda" || backend == "cudnn"; }

bool precisionsOffered(const QStringList& backends) {
    return std::ranges::any_of(backends, [](const QString& backend) {
        return backendPrecisions(backend.toStdString()).size() > 1;
    });
}

QList<int> offeredThreadCounts(int cores) { return powersOfTwoUpTo(std::max(1, cores)); }
QList<int> offeredGpuCounts(int gpus) { return powersOfTwoUpTo(gpus); }

DesignedNetwork designedNetworkToSweep(const NetworkSpec& drawn, const ShapeReport& drawnShapes, const NetworkFit& fit) {
    DesignedNetwork designed;
    designed.spec = drawn;
    if (drawn.nodes.empty()) {
        designed.problems << QObject::tr("The Design page has no network: draw one or open a preset there.");
        return designed;
    }
    if (!drawnShapes.ok()) {
        const auto& [node, message] = drawnShapes.problems.front();
        const QString first = node.empty() ? QString::fromStdString(message)
                                           : QObject::tr("layer '%1': %2").arg(QString::fromStdString(node),
                                                                              QString::fromStdString(message));
        designed.problems << QObject::tr("The Design page's network has %1 (%2). Fix it there, or pick a preset.")
                                 .arg(countOf(int(drawnShapes.problems.size()), QObject::tr("problem"),
                                              QObject::tr("problems")),
                                      first);
        return designed;
    }
    // Measured as the run would train it: a benchmark of the drawn 48×48, 7-class network says
    // little about the 28×28, 10-class copy trained on Fashion-MNIST.
    if (!fit.known) return designed;
    if (!fit.canTrain()) {
        designed.problems << fit.refusal;
        return designed;
    }
    designed.spec = fit.trainedSpec;
    if (fit.adapted()) designed.fittedTo = fit.datasetName;
    return designed;
}

QString SweepPlan::networkName() const { return designed ? QString::fromStdString(designed->spec.name) : model; }

QString SweepConfiguration::label() const {
    QString text = backend;
    if (isGpu() || precision != "fp32") text += ' ' + precision;
    if (!isGpu()) text += threads == 0 ? QObject::tr(" all cores") : ' ' + countOf(threads, QObject::tr("thread"), QObject::tr("threads"));
    if (gpus > 1) text += QObject::tr(", %1 GPUs").arg(gpus);
    if (nodes > 1) text += QObject::tr(", %1 nodes").arg(nodes);
    return text;
}

QString SweepConfiguration::configText(int batch) const {
    QString text = backend;
    if (isGpu()) text += QStringLiteral(" %1 gpus=%2").arg(precision).arg(gpus);
    else text += (precision == "fp32" ? QString() : ' ' + precision) + QStringLiteral(" threads=%1").arg(threads);
    if (nodes > 1) text += QStringLiteral(" nodes=%1").arg(nodes);
    return text + QStringLiteral(" batch=%1").arg(batch);
}

QList<SweepConfiguration> SweepPlan::configurations() const {
    QList<SweepConfiguration> list;
    for (const QString& backend : backends) {
        if (backend == "cpu-ref") {
            // The plain-loop reference has one thread and one precision: one configuration.
            list << SweepConfiguration{backend, "fp32", 1, 0, 1};
        } else if (!isGpuBackend(backend)) {
            // The ticked precisions it trains in (bf16 where the CPU has bf16 instructions), or
            // fp32 as the baseline when it trains in none of them.
            QStringList trained;
            for (const QString& precision : precisions)
                if (backendTrainsIn(backend.toStdString(), precision.toStdString())) trained << precision;
            if (trained.isEmpty()) trained << "fp32";
            for (const QString& precision : trained)
                for (int threads : cpuThreads) list << SweepConfiguration{backend, precision, threads, 0, 1};
        } else {
            // Only the precisions this backend trains in: cuda has no tf32 (problems() says so
            // when none of the ticked ones is left).
            for (const QString& precision : precisions)
                if (backendTrainsIn(backend.toStdString(), precision.toStdString()))
                    for (int gpus : gpuCounts) list << SweepConfiguration{backend, precision, 0, gpus, nodes};
        }
    }
    return list;
}

QStringList SweepPlan::problems(const HardwareInfo& hardware) const {
    QStringList found;
    if (designed) found << designed->problems;
    if (backends.isEmpty()) found << QObject::tr("Tick at least one backend.");
    if (batch < 1) found << QObject::tr("The batch must be at least 1.");
    const bool cpuOneDnn = backends.contains("cpu");
    const bool gpu = std::ranges::any_of(backends, isGpuBackend);
    if (cpuOneDnn && cpuThreads.isEmpty()) found << QObject::tr("Tick at least one CPU thread count for cpu.");
    for (int threads : cpuThreads)
        if (cpuOneDnn && threads > hardware.cpuCores)
            found << QObject::tr("%1 CPU threads is more than the %2 cores here.").arg(threads).arg(hardware.cpuCores);
    if (gpu || precisionsOffered(backends)) {
        if (precisions.isEmpty()) found << QObject::tr("Tick at least one precision.");
    }
    if (gpu) {
        for (const QString& backend : backends)
            if (isGpuBackend(backend) && !precisions.isEmpty() &&
                std::ranges::none_of(precisions, [&](const QString& precision) {
                    return backendTrainsIn(backend.toStdString(), precision.toStdString());
                }))
                found << QObject::tr("The %1 backend trains in %2: tick one of those.").arg(backend, trainedPrecisionsText(backend));
        if (gpuCounts.isEmpty()) found << QObject::tr("Tick at least one GPU count for the GPU backends.");
        for (int gpus : gpuCounts)
            if (nodes == 1 && gpus > int(hardware.gpus.size()))
                found << QObject::tr("%1 GPUs is more than the %2 this machine has.").arg(gpus).arg(hardware.gpus.size());
        if (nodes > 1) {
            const int mostGpus = gpuCounts.isEmpty() ? 1 : *std::ranges::max_element(gpuCounts);
            found << hostfileProblems(hostfileText, nodes, mostGpus);
        }
    } else if (nodes > 1) {
        found << QObject::tr("Several nodes need a GPU backend (cuda or cudnn).");
    }
    return found;
}

QStringList SweepPlan::benchArguments(const QString& reportFile, const QString& hostfile,
                                      const QString& designedSpecFile) const {
    QStringList arguments{"--model", designed ? designedSpecFile : model};
    for (const SweepConfiguration& configuration : configurations())
        arguments << "--config" << configuration.configText(batch);
    if (nodes > 1) arguments << "--hostfile" << hostfile;
    if (steps > 0) arguments << "--steps" << QString::number(steps);
    arguments << "--report" << reportFile << "--progress-events";
    return arguments;
}

}  // namespace cnnstudio::ui
