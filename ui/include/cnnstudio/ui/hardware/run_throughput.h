// The measured training throughput of real runs (not synthetic steps), for the Hardware page:
// each finished run's images/s read from its events through the engine's event reader (the
// median of its epochs' training images/s), and the runs grouped by network, backend,
// precision, hardware and ranks. No widgets.
#pragma once

#include <optional>

#include <QList>
#include <QString>

namespace cnnstudio::ui {

struct RunThroughput {
    QString runDirectory;
    QString model, dataset, backend, precision;
    QString hardware;  // the GPU's name on GPU backends, the CPU's otherwise
    int ranks = 1, threads = 0;
    int epochs = 0;    // epochs whose throughput is in the median
    double imagesPerSecond = 0;  // median of the epochs' training images/s
};

// Runs that finished (completed, stopped early or stopped) with at least one epoch; none for
// the others. Throws nothing: a run that cannot be read is none.
std::optional<RunThroughput> measuredRunThroughput(const QString& runDirectory);

struct RunThroughputGroup {
    QString label;     // "lenet5 · cpu fp32, 2 threads · AMD EPYC"
    QString backend;
    double medianImagesPerSecond = 0;  // over the group's runs
    int runs = 0;
};

// One group per network + backend + precision + threads + ranks + hardware, fastest first.
QList<RunThroughputGroup> groupRunThroughputs(const QList<RunThroughput>& runs);

// Every finished run directly under `runsRoot`.
QList<RunThroughput> scanRunThroughputs(const QString& runsRoot);

}  // namespace cnnstudio::ui
