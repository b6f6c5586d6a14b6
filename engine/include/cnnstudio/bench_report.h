// A benchmark sweep's report: the machine, the network, and per configuration (backend,
// precision, threads, batch, ranks, nodes) its training and inference throughput, peak memory
// and where a training step's time goes. `cnnstudio-bench --report FILE` writes it, the
// Hardware page reads it, the predicted run time of the Train page scales from it and
// tools/measurements_tables.py turns committed ones into the tables of docs/measurements.md.
//
// One JSON file per sweep, schema "cnnstudio-bench-report/1"; the field names are those of the
// schema in docs/measurements.md ("Benchmark reports"). Readers tolerate unknown fields.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cnnstudio/hardware.h"

namespace cnnstudio {

inline constexpr const char* kBenchReportSchema = "cnnstudio-bench-report/1";

struct BenchTool {
    std::string program = "cnnstudio-bench";
    std::string version;
    std::string command;  // the full command line that ran the sweep
};

struct BenchVersions {
    std::string driver, cuda, cudnn, nccl, onednn, openmpi;  // empty when absent
};

struct BenchGpu {
    std::string name;
    std::uint64_t memoryBytes = 0;
};

struct BenchMachine {
    std::string hostname;
    std::string label;  // a short name the user may edit; the hostname by default
    std::string cpuModel;
    int cpuCores = 0, cpuThreads = 0;
    std::uint64_t memoryBytes = 0;
    std::vector<BenchGpu> gpus;
    int nodes = 1;
    BenchVersions versions;
};

struct BenchNetwork {
    std::string name;
    std::vector<int> input;  // channels, height, width
    int classes = 0;
    std::uint64_t parameters = 0;
    double trainGflopPerImage = 0;  // forward + backward, about three times the forward FLOPs
};

// Images per second over all ranks, one value per timed repeat.
struct BenchThroughput {
    double median = 0, min = 0, max = 0;
    std::vector<double> repeats;
    // Fills median, min and max from repeats (none: all zero).
    static BenchThroughput fromRepeats(std::vector<double> repeats);
};

// Milliseconds of one training step by kind of work. Layers add their forward and backward
// time to their category; update is the optimiser, communication the gradient all-reduce.
struct BenchBreakdown {
    double convolution = 0, batchNorm = 0, activation = 0, pooling = 0, dense = 0, loss = 0,
           update = 0, communication = 0, other = 0;
    // The categories as the report names them ("convolution", "batch_norm", ...), in chart order.
    static const std::vector<std::string>& categories();
    // Throws Error for a name that is not one of categories().
    double& at(const std::string& category);
    double at(const std::string& category) const;
    std::vector<std::pair<std::string, double>> entries() const;
    double totalMs() const;
};

struct BenchLayerTime {
    std::string name, type;
    std::string category;  // one of BenchBreakdown::categories()
    double forwardMs = 0, backwardMs = 0;
};

enum class BenchStatus { Ok, Failed, Cancelled };
std::string toString(BenchStatus status);  // "ok", "failed", "cancelled"

struct BenchConfiguration {
    std::string label;  // unique within a report: "cudnn bf16, 2 GPUs"
    std::string backend, precision = "fp32";
    int threads = 0;  // CPU threads (0: every core)
    int batch = 0;    // per rank
    int ranks = 1, nodes = 1;
    std::string devices = "cpu";  // "cpu" | "gpu"
    BenchStatus status = BenchStatus::Ok;
    std::string error;  // why, when status is not ok
    int steps = 0, warmup = 0, repeats = 0;
    bool reduced = false;        // fewer steps or repeats than asked, because it is slow
    std::string reducedReason;   // what was cut and why
    BenchThroughput trainImagesPerSecond;
    double inferenceImagesPerSecond = 0;
    std::uint64_t peakMemoryBytes = 0;  // device memory on GPU backends, host RSS growth on CPU ones
    BenchBreakdown breakdownMs;
    std::vector<BenchLayerTime> layers;

    bool ok() const { return status == BenchStatus::Ok; }
};

struct BenchReport {
    std::string created;  // UTC, ISO 8601 ("2026-12-01T03:10:00Z")
    BenchTool tool;
    BenchMachine machine;
    BenchNetwork network;
    // How breakdown_ms and layers were measured (a profiling pass that synchronises the backend
    // around every layer), so a reader knows they add up to more than an unprofiled step.
    std::string breakdownMethod;
    std::vector<BenchConfiguration> configurations;

    // Null when no configuration has this label.
    const BenchConfiguration* find(const std::string& label) const;
};

nlohmann::json toJson(const BenchReport& report);
// `source` names where the JSON came from (a file) in errors, which also name the field:
// "report.json: configurations[2].train_images_per_second.median: expected a number".
BenchReport benchReportFromJson(const nlohmann::json& json, const std::string& source);
// Written atomically; throws Error naming the file.
void saveBenchReport(const BenchReport& report, const std::filesystem::path& file);
// Throws Error naming the file and, for a bad report, the field.
BenchReport loadBenchReport(const std::filesystem::path& file);

// The baselines a speedup is taken over: cpu-ref on one thread (the naive baseline) or the
// fastest CPU configuration of the report.
enum class BenchBaseline { CpuRefOneThread, BestCpu };
std::string toString(BenchBaseline baseline);  // "cpu-ref 1 thread", "best CPU"
// Null when the report has no successful configuration of that kind.
const BenchConfiguration* findBaseline(const BenchReport& report, BenchBaseline baseline);
// Median training images/s of `configuration` over the baseline's; none when either has not
// run or the baseline measured nothing.
std::optional<double> speedupOver(const BenchConfiguration& configuration,
                                  const BenchConfiguration& baseline);
// Images/s of `configuration` over (ranks x images/s of the same backend, precision and batch
// per rank at one rank) in `report`; none without such a successful one-rank configuration.
std::optional<double> scalingEfficiency(const BenchReport& report,
                                        const BenchConfiguration& configuration);

// This machine as a report describes it: `hardware` (from the registry's discoverHardware,
// which the caller asks for: the engine knows no backend) plus the hostname, memory and the
// MPI library's version.
BenchMachine describeMachine(const HardwareInfo& hardware);
// "2026-12-01T03:10:00Z", now.
std::string utcSecondsTimestamp();

// Where this user's sweeps are kept so the Train page can predict run times from the latest
// one of this machine: $XDG_DATA_HOME/cnnstudio/hardware, or ~/.local/share/cnnstudio/hardware
// without XDG_DATA_HOME (the XDG base directory rule; no Qt needed).
std::filesystem::path hardwareReportFolder();
// Saves a copy of `report` into `folder` as <created>-<hostname>.json; returns its path.
std::filesystem::path saveToHardwareFolder(const BenchReport& report,
                                           const std::filesystem::path& folder);
// The newest report in `folder` (by its created time) made on `hostname`; files that are not
// reports are skipped. None when there is none.
std::optional<std::pair<std::filesystem::path, BenchReport>>
latestReportOfMachine(const std::filesystem::path& folder, const std::string& hostname);

}  // namespace cnnstudio
