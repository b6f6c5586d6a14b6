// SweepPlan: which configurations a sweep of the Hardware page runs, no widgets. The user ticks
// backends, CPU thread counts, precisions and GPU counts and sets the node count (with a
// hostfile), the network (a preset, or the Design page's network as the next run trains it) and
// the batch; the plan expands them into configurations the way a
// person would (cpu-ref on one thread only, thread counts and the precisions it trains in for the
// oneDNN backend, precisions and GPU counts for the GPU backends), says what is wrong with a choice, and gives each
// configuration the `cnnstudio-bench` argument list that measures it.
#pragma once

#include <optional>

#include <QList>
#include <QString>
#include <QStringList>

#include "cnnstudio/hardware.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/ui/training/network_fit.h"

namespace cnnstudio::ui {

// One configuration to measure, as `cnnstudio-bench` takes it.
struct SweepConfiguration {
    QString backend;            // "cpu-ref" | "cpu" | "cuda" | "cudnn"
    QString precision = "fp32";
    int threads = 0;            // CPU threads; 0 on GPU backends
    int gpus = 0;               // GPUs per node on GPU backends (one rank each); 0 on CPU ones
    int nodes = 1;
    bool isGpu() const { return gpus > 0; }
    // As cnnstudio-bench labels it in its report: "cpu-ref 1 thread", "cpu 4 threads",
    // "cpu bf16 4 threads", "cudnn bf16", "cudnn fp32, 2 GPUs", "cudnn bf16, 4 GPUs, 2 nodes"
    // (GPUs per node).
    QString label() const;
    // As `cnnstudio-bench --config` takes it: "cpu threads=4 batch=64", "cpu bf16 threads=4 batch=64", "cudnn bf16 gpus=2 nodes=2 batch=256".
    QString configText(int batch) const;
    bool operator==(const SweepConfiguration&) const = default;
};

// The Design page's network as a sweep measures it: the copy the next training run trains (fitted
// to the Train page's data set, as the worker fits it) once that data set has been read, the
// drawn network before; or why it cannot be measured.
struct DesignedNetwork {
    NetworkSpec spec;
    QString fittedTo;      // the data set it was fitted to ("Fashion-MNIST"); empty: measured as drawn
    QStringList problems;  // why it cannot be measured, in words; empty when it can

    bool operator==(const DesignedNetwork&) const = default;
};

// The Design page's network `drawn` (with its shapes) to sweep, given its fit to the Train page's
// data set.
DesignedNetwork designedNetworkToSweep(const NetworkSpec& drawn, const ShapeReport& drawnShapes, const NetworkFit& fit);

struct SweepPlan {
    QString model = "fer-cnn";  // a preset name
    // Set: the sweep measures the Design page's network, not the preset.
    std::optional<DesignedNetwork> designed;
    int batch = 64;             // per rank
    int steps = 0;              // timed steps per repeat; 0: cnnstudio-bench's default
    QStringList backends{"cpu-ref", "cpu"};
    QList<int> cpuThreads{1};
    QStringList precisions{"fp32"};
    QList<int> gpuCounts{1};
    int nodes = 1;
    QString hostfileText;       // OpenMPI hostfile, needed when nodes > 1

    // The network's name as the report will carry it: the preset's or the designed spec's.
    QString networkName() const;
    QList<SweepConfiguration> configurations() const;
    // What stops the sweep from running on `hardware`, in words; empty when it can run.
    QStringList problems(const HardwareInfo& hardware) const;
    // The argument list of one `cnnstudio-bench` run measuring every configuration, one
    // `--config` each, into `reportFile` (rewritten after each configuration), with JSON-lines
    // progress on standard output; `hostfile` is the file holding hostfileText, `designedSpecFile`
    // the file holding designed->spec (measured instead of the preset when the plan has one).
    QStringList benchArguments(const QString& reportFile, const QString& hostfile,
                               const QString& designedSpecFile = {}) const;
};

// Whether any of `backends` trains in more than fp32 here (the GPU backends; cpu on a CPU with bf16
// instructions), so that ticking precisions means something.
bool precisionsOffered(const QStringList& backends);
// The thread counts worth offering on `cores` cores: 1, 2, 4, ... and the core count itself.
QList<int> offeredThreadCounts(int cores);
// The GPU counts worth offering: 1, 2, 4, ... and the GPU count itself (none without GPUs).
QList<int> offeredGpuCounts(int gpus);
bool isGpuBackend(const QString& backend);

}  // namespace cnnstudio::ui
