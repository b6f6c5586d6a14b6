// cnnstudio-bench: images per second of full training steps (forward, backward, SGD-momentum
// update) on random data, inference images per second and where a step's time goes, for a
// sweep of configurations; writes a report (cnnstudio/bench_report.h) and prints one JSON line
// per configuration in the shape of bench/pytorch_reference.py, so both can be printed side
// by side from one command on one machine.
//
//   cnnstudio-bench --backend cpu --threads 1 4 16 --batch 64
//   cnnstudio-bench --backend cudnn --mode fp32 tf32 bf16 --gpus 1 2 --batch 256 --report r.json
//   cnnstudio-bench --config "cpu-ref threads=1" --config "cudnn bf16 gpus=2" --batch 256
//   mpirun -np 2 cnnstudio-bench --backend cudnn --batch 256   # data parallel, per-rank batch
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench/sweep.h"
#include "cnnstudio/backend.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/error.h"
#include "common/command_line.h"
#include "common/output_paths.h"
#include "common/stop_signals.h"

namespace {

using namespace cnnstudio;

// More threads than cores only wait for one another: allowed (a shared machine may be measured
// on purpose), but said.
void warnAboutThreadsBeyondCores(const std::vector<int>& threads) {
    const unsigned cores = std::thread::hardware_concurrency();
    for (int count : threads)
        if (cores > 0 && unsigned(count) > cores)
            std::fprintf(stderr, "cnnstudio-bench: warning: --threads %d is more than the %u cores of this machine; "
                                 "the extra threads only wait for each other\n", count, cores);
}

std::string commandLine(int argc, char** argv) {
    std::string text;
    for (int i = 0; i < argc; ++i) text += (i ? " " : "") + std::string(argv[i]);
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    ignoreClosedOutput();
    bench::SweepRequest request;
    bench::SweepSettings settings;
    bool probe = false;
    CLI::App app{"CNN Studio benchmark: training and inference images per second and where the time goes, "
                 "for a sweep of configurations (the product of the lists, plus each --config)"};
    app.footer("Exit status: 0 every configuration ran, 1 one or more failed (the report says why) or an error, "
               "2 bad usage, 3 cancelled (SIGINT/SIGTERM; the report keeps what was measured).\n"
               "A closed standard output (| head) does not stop the sweep: its JSON lines are lost, the report is "
               "still written.\n"
               "Each sweep is also saved to $XDG_DATA_HOME/cnnstudio/hardware (~/.local/share/cnnstudio/hardware), "
               "where the Train page predicts run times from.");
    auto* backends = app.add_option("--backend", request.backends, "backends: cpu-ref cpu cuda cudnn")->capture_default_str();
    auto* modes = app.add_option("--mode", request.precisions, "precisions: fp32 tf32 bf16 (each backend runs those it trains in; cpu bf16 needs bf16 instructions)")->capture_default_str();
    auto* threads = app.add_option("--threads", request.threads, "CPU thread counts (0: every core)")
                        ->check(CLI::Range(0, kMaxCpuThreads));
    app.add_option("--batch", request.batches, "batch sizes per rank")->capture_default_str()->check(atLeast(1));
    auto* gpus = app.add_option("--gpus", request.gpus, "GPU counts (ranks through mpirun, one per GPU)")->check(atLeast(1));
    auto* nodes = app.add_option("--nodes", request.nodes, "node counts (with --hostfile)")->check(atLeast(1));
    app.add_option("--hostfile", settings.hostfile, "OpenMPI hostfile for --nodes")->check(CLI::ExistingFile);
    app.add_option("--config", request.configs,
                   "one configuration, e.g. \"cudnn bf16 gpus=2 batch=256\" (repeatable; without the "
                   "lists only these run)");
    app.add_option("--model", settings.model, "a preset name or a spec file")->capture_default_str();
    app.add_option("--report", settings.reportFile, "write the sweep's JSON report here (atomically)");
    app.add_option("--steps", settings.steps, "timed steps per repeat (default 40 GPU, 4 CPU)")->check(atLeast(0));
    app.add_option("--warmup", settings.warmup, "warm-up steps (default 5 GPU, 1 CPU)")->check(atLeast(0));
    app.add_option("--repeats", settings.repeats, "timed repeats (the median is reported)")->capture_default_str()->check(atLeast(1));
    app.add_option("--budget-s", settings.budgetSeconds,
                   "seconds a configuration may take before it runs fewer steps (said in the report)")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--device", settings.device, "CUDA device index");
    app.add_flag("!--no-graph", settings.capture, "do not capture the step as a CUDA graph");
    app.add_option("--bucket-mb", settings.bucketMiB, "gradient all-reduce bucket in MiB on several ranks (as PyTorch DDP's)")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_flag("--progress-events", settings.progressEvents,
                 "JSON-lines events on stdout (bench_progress, bench_result, bench_finished) for the app");
    app.add_flag("!--no-json-lines", settings.jsonLines, "no JSON line per configuration on stdout");
    app.add_flag("!--no-save-copy", settings.saveCopy, "do not save the report to the per-user hardware folder");
    app.add_flag("--probe", probe,
                 "a few seconds' measurement of the first configuration (3 steps, 1 repeat, 5 s budget), not "
                 "saved to the hardware folder");
    app.add_option("--rank-report", settings.rankReport, "internal: where rank 0 of a launched configuration writes")
        ->group("");
    if (const std::optional<int> exitCode = parseCommandLine(app, argc, argv)) return *exitCode;
    warnAboutThreadsBeyondCores(request.threads);
    request.listsGiven = request.configs.empty() || backends->count() || modes->count() || threads->count() ||
                         gpus->count() || nodes->count();
    settings.command = commandLine(argc, argv);
    settings.version = CNNSTUDIO_VERSION;

    // The app's Cancel and a terminal's Ctrl-C: the configuration in progress finishes, the rest
    // are recorded as cancelled. A multi-rank configuration's mpirun gets them forwarded.
    watchStopSignals({SIGINT, SIGTERM}, bench::cancelRequested);
    try {
        const WorldInfo world = initialiseWorld();
        if (world.rank == 0) requireWritableOutput(settings.reportFile, "--report");
        std::vector<bench::SweepConfiguration> configurations = bench::expandSweep(request);
        if (probe) {
            configurations.resize(1);
            settings.steps = 3;
            settings.warmup = 1;
            settings.repeats = 1;
            settings.budgetSeconds = 5;
            settings.saveCopy = false;
        }
        const BenchReport report = bench::runSweep(configurations, settings, world);
        if (world.rank == 0 && settings.rankReport.empty()) {
            std::cerr << bench::formatTable(report);
            std::string savedCopy;
            if (settings.saveCopy) savedCopy = saveToHardwareFolder(report, hardwareReportFolder()).string();
            if (settings.progressEvents) {
                nlohmann::json finished = {{"schema", 1}, {"event", "bench_finished"}, {"time", utcSecondsTimestamp()},
                                           {"report", settings.reportFile}, {"saved_copy", savedCopy},
                                           {"cancelled", bool(bench::cancelRequested)}};
                std::cout << finished.dump() << std::endl;
            }
        }
        finaliseWorld();
        if (bench::cancelRequested) return 3;
        for (const BenchConfiguration& c : report.configurations)
            if (!c.ok()) return 1;
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "cnnstudio-bench: " << error.what() << "\n";
        return 1;
    }
}
