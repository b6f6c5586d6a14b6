#include "bench/sweep.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/bench_measure.h"
#include "cnnstudio/error.h"
#include "cnnstudio/memory_estimate.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"
#include "train/launcher.h"

namespace cnnstudio::bench {

std::atomic<bool> cancelRequested{false};

// ---- Configurations ---------------------------------------------------------------------------

bool isGpuBackend(const std::string& backend) { return backend == "cuda" || backend == "cudnn"; }

namespace {

int positiveNumber(const std::string& value, const std::string& key, const std::string& text, int minimum) {
    std::size_t used = 0;
    int number = 0;
    try {
        number = std::stoi(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != value.size() || used == 0 || number < minimum)
        throw Error("'" + key + "=" + value + "' needs a whole number of at least " + std::to_string(minimum),
                    "--config \"" + text + "\"");
    return number;
}

// The precisions of the request that `backend` trains in (cuda has no tf32, cpu bf16 only on CPUs
// with bf16 instructions). A CPU backend that trains in none of them runs fp32, as the baseline
// beside the GPU backends they are for; a GPU backend that trains in none is an error naming its
// precisions.
std::vector<std::string> precisionsOf(const std::string& backend, const SweepRequest& request) {
    std::vector<std::string> precisions;
    std::ranges::copy_if(request.precisions, std::back_inserter(precisions),
                         [&](const std::string& p) { return backendTrainsIn(backend, p); });
    if (!precisions.empty() || request.precisions.empty()) return precisions;
    if (!isGpuBackend(backend)) return {"fp32"};
    requirePrecisionOf(backend, request.precisions.front());
    return {};
}

}  // namespace

SweepConfiguration parseConfiguration(const std::string& text, const SweepConfiguration& defaults) {
    SweepConfiguration configuration = defaults;
    configuration.backend.clear();
    std::istringstream words(text);
    const std::vector<std::string> known = knownBackends();
    for (std::string word; words >> word;) {
        if (std::find(known.begin(), known.end(), word) != known.end()) {
            configuration.backend = word;
        } else if (word == "fp32" || word == "tf32" || word == "bf16") {
            configuration.precision = word;
        } else if (auto equals = word.find('='); equals != std::string::npos) {
            const std::string key = word.substr(0, equals), value = word.substr(equals + 1);
            if (key == "threads") configuration.threads = positiveNumber(value, key, text, 0);
            else if (key == "batch") configuration.batch = positiveNumber(value, key, text, 1);
            else if (key == "gpus" || key == "ranks") configuration.ranksPerNode = positiveNumber(value, key, text, 1);
            else if (key == "nodes") configuration.nodes = positiveNumber(value, key, text, 1);
            else
                throw Error("unknown setting '" + key + "'", "--config \"" + text + "\"",
                            "use threads=, batch=, gpus=, ranks= or nodes=");
        } else {
            throw Error("'" + word + "' is neither a backend, a precision nor a setting", "--config \"" + text + "\"",
                        "write e.g. \"cudnn bf16 gpus=2 batch=256\"");
        }
    }
    if (configuration.backend.empty())
        throw Error("no backend named", "--config \"" + text + "\"", "name one of cpu-ref, cpu, cuda, cudnn");
    requirePrecisionOf(configuration.backend, configuration.precision);
    return configuration;
}

std::string configurationText(const SweepConfiguration& c) {
    return c.backend + " " + c.precision + " threads=" + std::to_string(c.threads) + " batch=" +
           std::to_string(c.batch) + " ranks=" + std::to_string(c.ranksPerNode) + " nodes=" + std::to_string(c.nodes);
}

std::vector<SweepConfiguration> expandSweep(const SweepRequest& request) {
    std::vector<SweepConfiguration> result;
    std::set<std::string> seen;
    auto add = [&](const SweepConfiguration& c) {
        if (seen.insert(configurationText(c)).second) result.push_back(c);
    };
    // A precision asked for that no listed backend trains in is an error naming a backend: cpu for
    // bf16 (it would, on a CPU with bf16 instructions, and says so), else the first.
    for (const std::string& precision : request.precisions)
        if (request.listsGiven && !request.backends.empty() &&
            std::ranges::none_of(request.backends, [&](const std::string& b) { return backendTrainsIn(b, precision); })) {
            const bool cpuListed = std::ranges::find(request.backends, "cpu") != request.backends.end();
            requirePrecisionOf(precision == "bf16" && cpuListed ? "cpu" : request.backends.front(), precision);
        }
    if (request.listsGiven)
        for (const std::string& backend : request.backends)
            for (int batch : request.batches)
                for (int nodes : request.nodes)
                    for (const std::string& precision : precisionsOf(backend, request)) {
                        if (isGpuBackend(backend))
                            for (int gpus : request.gpus) add({backend, precision, 0, batch, gpus, nodes});
                        else
                            for (int threads : request.threads) add({backend, precision, threads, batch, 1, nodes});
                    }
    SweepConfiguration defaults;
    defaults.batch = request.batches.empty() ? 64 : request.batches.front();
    for (const std::string& text : request.configs) add(parseConfiguration(text, defaults));
    return result;
}

std::string labelOf(const SweepConfiguration& c, bool withBatch) {
    std::string label = c.backend;
    if (isGpuBackend(c.backend) || c.precision != "fp32") label += " " + c.precision;
    if (!isGpuBackend(c.backend)) label += c.threads == 0 ? " all cores" : " " + std::to_string(c.threads) + (c.threads == 1 ? " thread" : " threads");
    if (c.ranksPerNode > 1) label += ", " + std::to_string(c.ranksPerNode) + (isGpuBackend(c.backend) ? " GPUs" : " ranks");
    if (c.nodes > 1) label += ", " + std::to_string(c.nodes) + " nodes";
    if (withBatch) label += ", batch " + std::to_string(c.batch);
    return label;
}

NetworkSpec loadModel(const std::string& model) {
    const std::vector<std::string> presets = presetNames();
    if (std::find(presets.begin(), presets.end(), model) != presets.end()) return loadPreset(model);
    if (!std::filesystem::exists(model))
        throw Error("'" + model + "' is neither a preset nor a spec file", "--model",
                    "use a preset name (cnnstudio-train presets) or the path of a spec file");
    return NetworkSpec::load(model);
}

// ---- Running one configuration ----------------------------------------------------------------

namespace {

BenchPlan planFor(const SweepConfiguration& c, const SweepSettings& settings) {
    const bool gpu = isGpuBackend(c.backend);
    BenchPlan plan;
    plan.steps = settings.steps > 0 ? settings.steps : gpu ? 40 : 4;
    plan.warmup = settings.warmup > 0 ? settings.warmup : gpu ? 5 : 1;
    plan.repeats = settings.repeats;
    plan.capture = settings.capture;
    plan.gradientBucketBytes = std::size_t(settings.bucketMiB * double(1 << 20));
    plan.budgetSeconds = settings.budgetSeconds;
    if (c.backend == "cpu-ref") {  // plain loops: the naive baseline, minutes per step at large batches
        plan.stepCap = 2;
        plan.stepCapReason = "cpu-ref runs plain loops";
    }
    return plan;
}

// Kilobytes of a "VmRSS:" style line of /proc/self/status.
std::uint64_t statusKilobytes(const std::string& field) {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
    return 0;
}

// Peak memory a configuration takes. On the CPU: growth of the resident set over the run
// (the kernel's high-water mark, reset before the run through clear_refs). On a GPU: free
// device memory before the backend was made minus free memory after the run, every buffer
// still allocated (the network allocates them all up front); other processes on that GPU
// would blur it.
class MemoryWatch {
public:
    MemoryWatch(bool gpu, int device) : gpu_(gpu), device_(device) {
        if (gpu_) {
            freeBefore_ = freeDeviceBytes();
            return;
        }
        std::ofstream("/proc/self/clear_refs") << "5";
        residentBefore_ = statusKilobytes("VmRSS") * 1024;
    }
    std::uint64_t peakBytes() const {
        if (gpu_) {
            const std::uint64_t freeAfter = freeDeviceBytes();
            return freeBefore_ > freeAfter ? freeBefore_ - freeAfter : 0;
        }
        const std::uint64_t peak = statusKilobytes("VmHWM") * 1024;
        return peak > residentBefore_ ? peak - residentBefore_ : 0;
    }

private:
    std::uint64_t freeDeviceBytes() const {
        const HardwareInfo hardware = discoverHardware();
        for (const GpuInfo& gpu : hardware.gpus)
            if (gpu.index == device_) return gpu.freeBytes;
        return 0;
    }
    bool gpu_;
    int device_;
    std::uint64_t freeBefore_ = 0, residentBefore_ = 0;
};

BenchConfiguration describedConfiguration(const SweepConfiguration& c, const std::string& label) {
    BenchConfiguration result;
    result.label = label;
    result.backend = c.backend;
    result.precision = c.precision;
    result.threads = c.threads;
    result.batch = c.batch;
    result.ranks = c.ranks();
    result.nodes = c.nodes;
    result.devices = isGpuBackend(c.backend) ? "gpu" : "cpu";
    return result;
}

void printJsonLine(const BenchConfiguration& result, const Backend& backend, const NetworkSpec& spec,
                   const SweepSettings& settings) {
    nlohmann::json line = {
        {"impl", "cnnstudio"}, {"backend", backend.name()}, {"description", backend.description()},
        {"model", spec.name}, {"device", backend.isDevice() ? "cuda" : "cpu"}, {"mode", result.precision},
        {"batch_per_rank", result.batch}, {"ranks", result.ranks}, {"threads", result.threads},
        {"graph", settings.capture},
        {"images_per_s", std::round(result.trainImagesPerSecond.median * 10) / 10}};
    if (result.ranks > 1)  // the gradient bucket the ranks all-reduced in
        line["bucket_mb"] = settings.bucketMiB;
    std::cout << line.dump() << std::endl;
}

// Every rank of this process's world measures the configuration together.
BenchConfiguration runHere(const SweepConfiguration& c, const std::string& label, const NetworkSpec& spec,
                           const SweepSettings& settings, const WorldInfo& world) {
    BenchConfiguration result = describedConfiguration(c, label);
    result.ranks = world.size;
    try {
        BackendOptions options;
        options.threads = c.threads;
        options.precision = parsePrecision(c.precision);
        options.device = world.size > 1 ? world.localRank : settings.device;  // a GPU per rank
        MemoryWatch memory(isGpuBackend(c.backend), options.device);
        auto backend = createBackend(c.backend, options);
        // measureConfiguration trains with SGD
        requireBatchFits(analyseSpec(spec), c.batch, *backend, "sgd", world.localSize);
        auto communicator = createCommunicator(*backend, createDeviceTransport(*backend).get());
        measureConfiguration(*backend, *communicator, spec, c.batch, planFor(c, settings), result);
        result.peakMemoryBytes = memory.peakBytes();
        if (world.rank == 0 && settings.jsonLines && !settings.progressEvents) printJsonLine(result, *backend, spec, settings);
    } catch (const std::exception& error) {
        result.status = BenchStatus::Failed;
        result.error = error.what();
    }
    return result;
}

std::string selfExecutable() {
    std::error_code error;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) throw Error("cannot find this program's own path: " + error.message(), "/proc/self/exe");
    return path.string();
}

// Starts `mpirun -np ranks` with this program measuring only `c` and writing its report to a
// scratch file, which rank 0 writes; returns its configuration.
BenchConfiguration runUnderMpirun(const SweepConfiguration& c, const std::string& label,
                                  const SweepSettings& settings) {
    BenchConfiguration result = describedConfiguration(c, label);
    const std::filesystem::path scratch = std::filesystem::temp_directory_path() /
        ("cnnstudio-bench-rank-report-" + std::to_string(getpid()) + ".json");
    std::filesystem::remove(scratch);
    try {
        std::vector<std::string> arguments{"--model", settings.model, "--config", configurationText(c),
                                           "--rank-report", scratch.string(), "--repeats",
                                           std::to_string(settings.repeats), "--budget-s",
                                           std::to_string(settings.budgetSeconds)};
        if (settings.steps > 0) arguments.insert(arguments.end(), {"--steps", std::to_string(settings.steps)});
        if (settings.warmup > 0) arguments.insert(arguments.end(), {"--warmup", std::to_string(settings.warmup)});
        if (!settings.capture) arguments.push_back("--no-graph");
        arguments.insert(arguments.end(), {"--bucket-mb", std::to_string(settings.bucketMiB)});
        if (!settings.jsonLines || settings.progressEvents) arguments.push_back("--no-json-lines");
        DistributedRequest request{c.ranksPerNode, c.nodes, settings.hostfile, isGpuBackend(c.backend)};
        // A cancelled configuration has nothing to save: its ranks get ten seconds to end their step.
        const MpirunResult job = runMpirun(mpirunCommand(request, selfExecutable(), arguments), std::chrono::seconds(10));
        if (job.stopForwarded) cancelRequested = true;  // the sweep's own Cancel, passed on to the job
        if (!std::filesystem::exists(scratch))
            throw Error("mpirun ended with status " + std::to_string(job.status) + " before rank 0 wrote its result" +
                            (job.failedRank.empty() ? "" : ": " + job.failedRank),
                        "mpirun -np " + std::to_string(c.ranks()), "see the ranks' messages above");
        BenchReport ranks = loadBenchReport(scratch);
        if (ranks.configurations.size() != 1)
            throw Error("the ranks reported " + std::to_string(ranks.configurations.size()) + " configurations, not 1",
                        scratch.string());
        BenchConfiguration measured = ranks.configurations.front();
        measured.label = label;
        measured.nodes = c.nodes;
        result = measured;
    } catch (const std::exception& error) {
        result.status = cancelRequested ? BenchStatus::Cancelled : BenchStatus::Failed;
        result.error = error.what();
    }
    std::filesystem::remove(scratch);
    return result;
}

// ---- What the sweep shows ---------------------------------------------------------------------

std::string formatRate(double imagesPerSecond) {
    char text[32];
    std::snprintf(text, sizeof text, imagesPerSecond >= 100 ? "%.0f" : "%.1f", imagesPerSecond);
    return text;
}

std::string formatMiB(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f MiB", double(bytes) / (1024.0 * 1024.0));
    return text;
}

std::string progressLine(std::size_t index, std::size_t count, const BenchConfiguration& r) {
    std::string line = "[" + std::to_string(index + 1) + "/" + std::to_string(count) + "] " + r.label + ": ";
    if (!r.ok()) return line + toString(r.status) + ": " + r.error;
    line += formatRate(r.trainImagesPerSecond.median) + " images/s training (" + formatRate(r.trainImagesPerSecond.min) +
            " to " + formatRate(r.trainImagesPerSecond.max) + "), " + formatRate(r.inferenceImagesPerSecond) +
            " images/s inference, " + formatMiB(r.peakMemoryBytes);
    if (r.reduced) line += " [reduced: " + r.reducedReason + "]";
    return line;
}

void printEvent(const std::string& name, nlohmann::json fields) {
    nlohmann::json event = {{"schema", 1}, {"event", name}, {"time", utcSecondsTimestamp()}};
    event.update(fields);
    std::cout << event.dump() << std::endl;
}

void writeReport(const BenchReport& report, const SweepSettings& settings, const WorldInfo& world) {
    if (world.rank != 0) return;
    if (!settings.rankReport.empty()) saveBenchReport(report, settings.rankReport);
    else if (!settings.reportFile.empty()) saveBenchReport(report, settings.reportFile);
}

}  // namespace

BenchReport runSweep(const std::vector<SweepConfiguration>& configurations, const SweepSettings& settings,
                     const WorldInfo& world) {
    const NetworkSpec spec = loadModel(settings.model);
    std::set<int> batches;
    for (const SweepConfiguration& c : configurations) batches.insert(c.batch);
    BenchReport report;
    report.created = utcSecondsTimestamp();
    report.tool = {"cnnstudio-bench", settings.version, settings.command};
    report.machine = describeMachine(discoverHardware());
    report.network = describeNetwork(spec);
    report.breakdownMethod = profilingMethodDescription();
    for (const SweepConfiguration& c : configurations) report.machine.nodes = std::max(report.machine.nodes, c.nodes);

    const std::size_t count = configurations.size();
    for (std::size_t index = 0; index < count; ++index) {
        SweepConfiguration c = configurations[index];
        if (world.size > 1 && c.ranks() != world.size) {  // started by the user's own mpirun
            c.ranksPerNode = world.size;
            c.nodes = 1;
        }
        const std::string label = labelOf(c, batches.size() > 1);
        if (world.rank == 0 && settings.progressEvents)
            printEvent("bench_progress", {{"index", index}, {"count", count}, {"label", label}});
        BenchConfiguration result;
        if (cancelRequested) {
            result = describedConfiguration(c, label);
            result.status = BenchStatus::Cancelled;
            result.error = "the sweep was cancelled before this configuration ran";
        } else if (world.size == 1 && c.ranks() > 1) {
            result = runUnderMpirun(c, label, settings);
        } else {
            result = runHere(c, label, spec, settings, world);
        }
        report.configurations.push_back(result);
        if (world.rank != 0) continue;
        if (settings.progressEvents)
            printEvent("bench_result", {{"index", index}, {"count", count},
                                        {"configuration", toJson(report).at("configurations").back()}});
        if (settings.rankReport.empty()) std::cerr << progressLine(index, count, result) << std::endl;
        writeReport(report, settings, world);
    }
    return report;
}

std::string formatTable(const BenchReport& report) {
    const BenchConfiguration* baseline = findBaseline(report, BenchBaseline::CpuRefOneThread);
    BenchBaseline baselineKind = BenchBaseline::CpuRefOneThread;
    if (!baseline) {
        baseline = findBaseline(report, BenchBaseline::BestCpu);
        baselineKind = BenchBaseline::BestCpu;
    }
    std::size_t width = 13;
    for (const BenchConfiguration& c : report.configurations) width = std::max(width, c.label.size());
    std::ostringstream table;
    char row[512];
    std::snprintf(row, sizeof row, "%-*s  %12s  %21s  %9s  %12s  %9s  %s\n", int(width), "configuration",
                  "train img/s", "min to max", "speedup", "infer img/s", "memory", "status");
    table << row;
    for (const BenchConfiguration& c : report.configurations) {
        if (!c.ok()) {
            std::snprintf(row, sizeof row, "%-*s  %12s  %21s  %9s  %12s  %9s  %s: %s\n", int(width), c.label.c_str(),
                          "-", "-", "-", "-", "-", toString(c.status).c_str(), c.error.c_str());
            table << row;
            continue;
        }
        const auto speedup = baseline ? speedupOver(c, *baseline) : std::nullopt;
        char speedupText[32] = "-";
        if (speedup) std::snprintf(speedupText, sizeof speedupText, "%.1fx", *speedup);
        const std::string spread = formatRate(c.trainImagesPerSecond.min) + " to " + formatRate(c.trainImagesPerSecond.max);
        std::snprintf(row, sizeof row, "%-*s  %12s  %21s  %9s  %12s  %9s  %s\n", int(width), c.label.c_str(),
                      formatRate(c.trainImagesPerSecond.median).c_str(), spread.c_str(), speedupText,
                      formatRate(c.inferenceImagesPerSecond).c_str(), formatMiB(c.peakMemoryBytes).c_str(),
                      c.reduced ? "ok (reduced)" : "ok");
        table << row;
    }
    if (baseline)
        table << "speedup over " << baseline->label
              << (baselineKind == BenchBaseline::BestCpu ? " (the best CPU configuration: no cpu-ref on 1 thread ran)" : "")
              << "\n";
    return table.str();
}

}  // namespace cnnstudio::bench
