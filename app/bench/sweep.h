// cnnstudio-bench's sweep: the configurations a command line asks for, running each (in this
// process, or under mpirun for several ranks), and what it shows and writes: a line of
// progress per configuration on stderr (or JSON-lines events for the app's worker), the old
// one-line JSON result per configuration on stdout, a table at the end and the report
// (cnnstudio/bench_report.h). The measuring itself is the engine's (cnnstudio/bench_measure.h).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "cnnstudio/bench_report.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/spec.h"

namespace cnnstudio::bench {

// One configuration to run: what `--config "cudnn bf16 gpus=2 batch=256"` says.
struct SweepConfiguration {
    std::string backend;
    std::string precision = "fp32";
    int threads = 0;    // CPU threads (0: every core)
    int batch = 64;     // per rank
    int ranksPerNode = 1;  // one per GPU on GPU backends ("gpus=N"), CPU processes ("ranks=N")
    int nodes = 1;
    int ranks() const { return ranksPerNode * nodes; }
};

// The sweep's lists; their product (CPU backends x threads, GPU backends x precisions x GPUs,
// each x batches x nodes) plus every --config.
struct SweepRequest {
    std::vector<std::string> backends{"cpu"};
    std::vector<std::string> precisions{"fp32"};
    std::vector<int> threads{0}, batches{64}, gpus{1}, nodes{1};
    std::vector<std::string> configs;  // --config texts
    bool listsGiven = true;            // false when only --config was used
};

// Parses "cudnn bf16 gpus=2 batch=256" (a backend, a precision, key=value for threads, batch,
// gpus or ranks (the same: ranks per node) and nodes; the rest from `defaults`). Throws Error naming the text and the bad word.
SweepConfiguration parseConfiguration(const std::string& text, const SweepConfiguration& defaults);
// The text parseConfiguration reads back to the same configuration.
std::string configurationText(const SweepConfiguration& configuration);
// The configurations of the request, in order, without repeats. Each backend runs the precisions
// asked for that it trains in (a CPU backend that trains in none of them runs fp32; a precision
// no listed backend trains in is an error); CPU backends on one GPU count, GPU backends on every
// thread count only once.
std::vector<SweepConfiguration> expandSweep(const SweepRequest& request);
// "cpu-ref 1 thread", "cpu 16 threads", "cpu bf16 16 threads", "cudnn bf16", "cudnn fp32, 2 GPUs",
// "cpu, 2 nodes";
// ", batch N" is added when `withBatch` (the sweep has several batch sizes).
std::string labelOf(const SweepConfiguration& configuration, bool withBatch);
bool isGpuBackend(const std::string& backend);

struct SweepSettings {
    int steps = 0, warmup = 0;  // 0: 40 and 5 on GPUs, 4 and 1 on CPUs
    int repeats = 3;
    double budgetSeconds = 30;
    bool capture = true;
    double bucketMiB = kDefaultGradientBucketBytes / double(1 << 20);  // gradient all-reduce bucket
    int device = 0;
    std::string hostfile;
    std::string model = "fer-cnn";   // a preset name or a spec file
    std::string reportFile;          // --report; empty: none
    bool saveCopy = true;            // also into hardwareReportFolder()
    bool progressEvents = false;     // JSON-lines events on stdout instead of the old lines
    bool jsonLines = true;           // the old one-line result per configuration on stdout
    std::string rankReport;          // internal: a rank of a launched configuration writes here
    std::string command;             // the full command line, for the report
    std::string version;
};

// Loads a preset by name or a spec file by path; throws Error naming it.
NetworkSpec loadModel(const std::string& model);

// Set from a signal handler: the sweep stops before the next configuration.
extern std::atomic<bool> cancelRequested;

// Runs every configuration and returns the report (also written to settings.reportFile after
// each configuration, so an interrupted sweep keeps what it measured). `world` is this
// process's place: several ranks when started by mpirun, every rank measuring each
// configuration together and rank 0 reporting.
BenchReport runSweep(const std::vector<SweepConfiguration>& configurations, const SweepSettings& settings,
                     const WorldInfo& world);

// The table printed at the end: a row per configuration with images/s, spread, speedup over
// cpu-ref on one thread (or the best CPU configuration when there is none), inference, memory.
std::string formatTable(const BenchReport& report);

}  // namespace cnnstudio::bench
