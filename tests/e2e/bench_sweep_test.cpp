// cnnstudio-bench sweeps as a user (or the app's worker) runs them: cheap CPU configurations
// end to end into a valid report, a failing configuration recorded while the sweep goes on,
// the reduced plan of cpu-ref, the progress events, precisions a backend lacks, a two-rank
// configuration under mpirun, and how the sweep takes the signals that cancel it.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/bench_report.h"
#include "run_process.h"
#include "train_worker.h"

namespace cnnstudio::e2e {
namespace {

const std::string kBenchProgram = CNNSTUDIO_BENCH_BINARY;

std::filesystem::path scratchFolder(const std::string& name) {
    return freshFolder(std::filesystem::path(::testing::TempDir()) /
                           ("cnnstudio-bench-sweep-" + std::to_string(::getpid())), name);
}

// A small network and few steps: each configuration takes well under a second on one core.
std::vector<std::string> cheapSweep(const std::filesystem::path& work, std::vector<std::string> configs) {
    std::vector<std::string> arguments{kBenchProgram, "--model", "lenet5", "--batch", "4", "--steps", "3",
                                       "--repeats", "2", "--report", (work / "report.json").string()};
    for (const std::string& config : configs) arguments.insert(arguments.end(), {"--config", config});
    return arguments;
}

std::vector<std::string> environmentFor(const std::filesystem::path& work) {
    return {"OMP_WAIT_POLICY=passive", "XDG_DATA_HOME=" + (work / "data").string()};
}

// The same for a sweep that starts mpirun: OpenMPI refuses root unless told (CI runs as root),
// and the ranks share CI's two cores.
std::vector<std::string> environmentForRanks(const std::filesystem::path& work) {
    std::vector<std::string> environment = environmentFor(work);
    environment.insert(environment.end(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                           "OMPI_MCA_rmaps_base_oversubscribe=1"});
    return environment;
}

std::vector<nlohmann::json> jsonLines(const std::string& text) {
    std::vector<nlohmann::json> lines;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);)
        if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
    return lines;
}

TEST(BenchSweep, TwoCpuConfigurationsProduceAValidReport) {
    const auto work = scratchFolder("two-cpu");
    const ProcessResult result =
        runProcess(cheapSweep(work, {"cpu-ref threads=1", "cpu threads=1"}), work.string(), environmentFor(work));
    ASSERT_EQ(result.exitCode, 0) << result.err;
    const BenchReport report = loadBenchReport(work / "report.json");
    EXPECT_EQ(report.network.name, "lenet5");
    EXPECT_GT(report.network.trainGflopPerImage, 0.0);
    EXPECT_FALSE(report.machine.hostname.empty());
    EXPECT_NE(report.tool.command.find("--config"), std::string::npos);
    ASSERT_EQ(report.configurations.size(), 2u);
    const BenchConfiguration& naive = report.configurations[0];
    const BenchConfiguration& cpu = report.configurations[1];
    EXPECT_EQ(naive.label, "cpu-ref 1 thread");
    EXPECT_EQ(cpu.label, "cpu 1 thread");
    for (const BenchConfiguration* c : {&naive, &cpu}) {
        EXPECT_TRUE(c->ok()) << c->label << ": " << c->error;
        EXPECT_GT(c->trainImagesPerSecond.median, 0.0) << c->label;
        EXPECT_GT(c->inferenceImagesPerSecond, 0.0) << c->label;
        EXPECT_EQ(c->devices, "cpu");
        EXPECT_FALSE(c->layers.empty()) << c->label;
        EXPECT_GT(c->breakdownMs.convolution, 0.0) << c->label;
        EXPECT_GT(c->breakdownMs.update, 0.0) << c->label;
    }
    EXPECT_FALSE(cpu.reduced) << cpu.reducedReason;
    EXPECT_EQ(cpu.trainImagesPerSecond.repeats.size(), 2u);
    // The old one-line results stay on stdout for the PyTorch comparisons.
    const auto lines = jsonLines(result.out);
    ASSERT_EQ(lines.size(), 2u) << result.out;
    EXPECT_EQ(lines[1]["backend"], "cpu");
    EXPECT_GT(lines[1]["images_per_s"].get<double>(), 0.0);
    // Progress per configuration and the table, on stderr.
    EXPECT_NE(result.err.find("[1/2] cpu-ref 1 thread: "), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("[2/2] cpu 1 thread: "), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("speedup over cpu-ref 1 thread"), std::string::npos) << result.err;
    // A copy for the Train page's predictions, in the per-user folder.
    const auto latest = latestReportOfMachine(work / "data" / "cnnstudio" / "hardware", report.machine.hostname);
    ASSERT_TRUE(latest.has_value()) << "no copy in $XDG_DATA_HOME/cnnstudio/hardware";
    EXPECT_EQ(latest->second.configurations.size(), 2u);
}

TEST(BenchSweep, CpuRefRunsFewerStepsAndSaysSo) {
    const auto work = scratchFolder("reduced");
    const ProcessResult result = runProcess(cheapSweep(work, {"cpu-ref threads=1"}), work.string(), environmentFor(work));
    ASSERT_EQ(result.exitCode, 0) << result.err;
    const BenchConfiguration naive = loadBenchReport(work / "report.json").configurations.at(0);
    EXPECT_TRUE(naive.reduced);
    EXPECT_EQ(naive.steps, 2) << "cpu-ref is capped at 2 steps, 3 were asked for";
    EXPECT_NE(naive.reducedReason.find("cpu-ref runs plain loops: 2 steps instead of 3"), std::string::npos)
        << naive.reducedReason;
    EXPECT_NE(result.err.find("[reduced: "), std::string::npos) << result.err;
}

TEST(BenchSweep, FailingConfigurationIsRecordedAndTheSweepGoesOn) {
    const auto work = scratchFolder("failed");
    // More GPUs than any machine here has: refused before anything starts, on every machine.
    const ProcessResult result = runProcess(cheapSweep(work, {"cudnn fp32 gpus=64", "cpu threads=1"}), work.string(),
                                            environmentFor(work));
    EXPECT_EQ(result.exitCode, 1) << "a failed configuration fails the sweep's exit status; " << result.err;
    const BenchReport report = loadBenchReport(work / "report.json");
    ASSERT_EQ(report.configurations.size(), 2u);
    const BenchConfiguration& failed = report.configurations[0];
    EXPECT_EQ(failed.label, "cudnn fp32, 64 GPUs");
    EXPECT_EQ(failed.status, BenchStatus::Failed);
    EXPECT_FALSE(failed.error.empty());
    EXPECT_EQ(failed.ranks, 64);
    EXPECT_TRUE(report.configurations[1].ok()) << report.configurations[1].error;
    EXPECT_NE(result.err.find("[1/2] cudnn fp32, 64 GPUs: failed: "), std::string::npos) << result.err;
}

// A batch beyond the machine's memory used to be killed by the OOM killer mid-step, ending the
// sweep without a report: it is refused before the step, naming a batch that fits.
TEST(BenchSweep, ABatchBeyondTheMachinesMemoryFailsItsConfigurationNamingOneThatFits) {
    const auto work = scratchFolder("beyond-memory");
    const ProcessResult result =
        runProcess({kBenchProgram, "--model", "vgg-fer", "--batch", "1048576", "--steps", "1", "--repeats", "1",
                    "--config", "cpu threads=1", "--report", (work / "report.json").string()},
                   work.string(), environmentFor(work));
    EXPECT_EQ(result.exitCode, 1) << result.err;
    const BenchReport report = loadBenchReport(work / "report.json");
    ASSERT_EQ(report.configurations.size(), 1u);
    EXPECT_EQ(report.configurations[0].status, BenchStatus::Failed);
    EXPECT_NE(report.configurations[0].error.find("batch 1048576 needs about "), std::string::npos)
        << report.configurations[0].error;
    EXPECT_NE(report.configurations[0].error.find("use --batch "), std::string::npos) << report.configurations[0].error;
}

TEST(BenchSweep, ProgressEventsForTheAppReplaceTheOldLines) {
    const auto work = scratchFolder("events");
    std::vector<std::string> arguments = cheapSweep(work, {"cpu threads=1", "cpu threads=2"});
    arguments.push_back("--progress-events");
    const ProcessResult result = runProcess(arguments, work.string(), environmentFor(work));
    ASSERT_EQ(result.exitCode, 0) << result.err;
    const auto events = jsonLines(result.out);
    ASSERT_EQ(events.size(), 5u) << result.out;
    EXPECT_EQ(events[0]["event"], "bench_progress");
    EXPECT_EQ(events[0]["index"], 0);
    EXPECT_EQ(events[0]["count"], 2);
    EXPECT_EQ(events[0]["label"], "cpu 1 thread");
    EXPECT_EQ(events[1]["event"], "bench_result");
    EXPECT_EQ(events[1]["configuration"]["label"], "cpu 1 thread");
    EXPECT_EQ(events[1]["configuration"]["status"], "ok");
    EXPECT_EQ(events[3]["configuration"]["label"], "cpu 2 threads");
    EXPECT_EQ(events[4]["event"], "bench_finished");
    EXPECT_EQ(events[4]["report"], (work / "report.json").string());
    EXPECT_EQ(events[4]["cancelled"], false);
    for (const auto& event : events) EXPECT_EQ(event["schema"], 1);
}

// Bad usage exits 2, as the help says (CLI11's own codes were 105 to 114), and says the bound.
TEST(BenchSweep, BadUsageExitsWithTwoAndSaysWhy) {
    const auto work = scratchFolder("usage");
    const ProcessResult zeroBatch = runProcess({kBenchProgram, "--batch", "0"}, work.string(), environmentFor(work));
    EXPECT_EQ(zeroBatch.exitCode, 2);
    EXPECT_NE(zeroBatch.err.find("--batch: must be at least 1, not 0"), std::string::npos) << zeroBatch.err;
    const ProcessResult twice =
        runProcess({kBenchProgram, "--steps", "0", "--steps", "1"}, work.string(), environmentFor(work));
    EXPECT_EQ(twice.exitCode, 2) << twice.err;
}

// A --report that cannot be written is found before the sweep, not after all of it was measured.
TEST(BenchSweep, AReportThatCannotBeWrittenIsRefusedBeforeMeasuring) {
    const auto work = scratchFolder("report-folder-missing");
    const auto report = work / "no-such-folder" / "report.json";
    const ProcessResult result = runProcess({kBenchProgram, "--model", "lenet5", "--batch", "4", "--steps", "3",
                                             "--config", "cpu threads=1", "--report", report.string()},
                                            work.string(), environmentFor(work));
    EXPECT_EQ(result.exitCode, 1);
    EXPECT_NE(result.err.find("--report " + report.string() + ": its folder"), std::string::npos) << result.err;
    EXPECT_EQ(result.out.find("bench_result"), std::string::npos) << "it measured first: " << result.out;
    EXPECT_EQ(result.out.find("cpu 1 thread"), std::string::npos) << "it measured first: " << result.out;
}

// The app that read the progress events quit (or `| head` did): SIGPIPE used to end the sweep
// with no report. The sweep goes on and writes it.
TEST(BenchSweep, AClosedStdoutLosesTheLinesButNotTheReport) {
    const auto work = scratchFolder("closed-stdout");
    std::vector<std::string> arguments = cheapSweep(work, {"cpu threads=1"});
    arguments.push_back("--progress-events");
    const ProcessResult result = runProcessWithStdoutClosed(arguments, work.string(), environmentFor(work));
    EXPECT_EQ(result.exitCode, 0) << result.err;
    EXPECT_TRUE(std::filesystem::exists(work / "report.json"));
}

// The app's Cancel: SIGTERM lets the configuration in progress finish, records the rest as
// cancelled, writes the report and exits 3.
TEST(BenchSweep, TerminationCancelsTheRestAndKeepsTheReport) {
    const auto work = scratchFolder("cancel");
    std::vector<std::string> arguments = cheapSweep(work, {"cpu threads=1", "cpu threads=2", "cpu-ref threads=1"});
    arguments.push_back("--progress-events");
    const pid_t pid = startProcess(arguments, work.string(), environmentFor(work));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto started = [&] {  // the first progress event: the signal handlers are in place
        std::ifstream out(work / "stdout.txt");
        std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
        return text.find("bench_progress") != std::string::npos;
    };
    while (!started() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::kill(pid, SIGTERM);
    const ProcessResult result = waitProcess(pid, work.string());
    EXPECT_EQ(result.exitCode, 3) << result.err;
    const BenchReport report = loadBenchReport(work / "report.json");
    ASSERT_EQ(report.configurations.size(), 3u);
    EXPECT_EQ(report.configurations.back().status, BenchStatus::Cancelled);
    EXPECT_NE(report.configurations.back().error.find("cancelled"), std::string::npos);
    const auto events = jsonLines(result.out);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back()["event"], "bench_finished");
    EXPECT_EQ(events.back()["cancelled"], true);
}

// Waits up to a minute for `ready`, polling.
template <typename Condition>
bool waitFor(Condition ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!ready()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

// SIGINT and SIGTERM reach one thread of the sweep, the one that waits for them; every other
// thread blocks them, so none is delivered to a thread computing in oneDNN (whose JIT GEMM points
// its stack pointer into the heap, oneDNN issue #4845).
TEST(BenchSweep, StopSignalsReachOnlyTheThreadThatWaitsForThem) {
    const auto work = scratchFolder("signal-mask");
    const std::vector<std::string> arguments{kBenchProgram, "--model", "lenet5", "--batch", "64", "--steps", "200",
                                             "--config", "cpu threads=2", "--report", (work / "report.json").string()};
    const pid_t pid = startProcess(arguments, work.string(), environmentFor(work));
    SignalTakers takers;
    // Until an OpenMP worker runs beside the main thread and the waiting one, or two threads take them.
    const bool computing = waitFor([&] {
        takers = threadsTakingSignals(pid, {SIGINT, SIGTERM});
        return takers.threads >= 3 || takers.taking >= 2;
    });
    ::kill(pid, SIGTERM);
    const ProcessResult result = waitProcess(pid, work.string());
    ASSERT_TRUE(computing) << "the sweep never ran an OpenMP worker: " << result.err;
    EXPECT_EQ(takers.taking, 1) << "of " << takers.threads << " threads";
    EXPECT_EQ(result.exitCode, 3) << result.err;
}

// The app's Cancel during a multi-rank configuration reaches its mpirun, which starts with no
// signal blocked (the sweep's own mask is not inherited), and ends the job: the configuration is
// recorded as cancelled rather than measured to its last step.
TEST(BenchSweep, TerminationDuringATwoRankConfigurationEndsItsJob) {
    if (const std::string why = whyRanksCannotRun(); !why.empty()) GTEST_SKIP() << why;
    const auto work = scratchFolder("cancel-mpirun");
    const std::vector<std::string> environment = environmentForRanks(work);
    const std::vector<std::string> arguments{kBenchProgram, "--model", "lenet5", "--batch", "4", "--steps", "1000000",
                                             "--budget-s", "3600",  // hours, unless stopped
                                             "--config", "cpu threads=1 ranks=2", "--report",
                                             (work / "report.json").string()};
    const pid_t pid = startProcess(arguments, work.string(), environment);
    pid_t mpirun = 0;
    const bool ranksStarted = waitFor([&] {
        const std::vector<pid_t> children = childrenOf(pid);
        mpirun = children.empty() ? 0 : children.front();
        return mpirun > 0 && childrenOf(mpirun).size() >= 2;
    });
    // mpirun takes SIGUSR1 (passed on to the ranks) and SIGTERM (the launcher's death, or the end).
    const bool mpirunTakesItsSignals = ranksStarted && threadsTakingSignals(mpirun, {SIGUSR1}).taking >= 1 &&
                                       threadsTakingSignals(mpirun, {SIGTERM}).taking >= 1;
    const auto signalled = std::chrono::steady_clock::now();
    ::kill(pid, SIGTERM);
    const ProcessResult result = waitProcess(pid, work.string());
    const double secondsToStop = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
    ASSERT_TRUE(ranksStarted) << "mpirun and its two ranks never appeared: " << result.err;
    EXPECT_TRUE(mpirunTakesItsSignals) << "mpirun inherited the sweep's blocked stop signals";
    EXPECT_EQ(result.exitCode, 3) << result.err;
    EXPECT_LT(secondsToStop, 30.0);
    const BenchReport report = loadBenchReport(work / "report.json");
    ASSERT_EQ(report.configurations.size(), 1u);
    EXPECT_EQ(report.configurations.front().status, BenchStatus::Cancelled) << report.configurations.front().error;
}

// An `mpirun` on the PATH of the sweep that runs `script` (sh, in the folder `work`) instead of
// the real one.
std::vector<std::string> environmentWithFakeMpirun(const std::filesystem::path& work, const std::string& script) {
    std::filesystem::create_directories(work / "bin");
    const std::filesystem::path mpirun = work / "bin" / "mpirun";
    std::ofstream(mpirun) << "#!/bin/sh\ncd '" << work.string() << "' || exit 1\n" << script;
    std::filesystem::permissions(mpirun, std::filesystem::perms::owner_all);
    std::vector<std::string> environment = environmentFor(work);
    const char* path = std::getenv("PATH");
    environment.push_back("PATH=" + (work / "bin").string() + ":" + (path ? path : "/usr/bin:/bin"));
    return environment;
}

// Cancels a sweep of one two-rank configuration run by `script` once it has started; the
// seconds from the signal to the sweep's end, and its result.
std::pair<double, ProcessResult> cancelTwoRankSweep(const std::filesystem::path& work, const std::string& script) {
    const pid_t pid = startProcess({kBenchProgram, "--model", "lenet5", "--batch", "4", "--config",
                                    "cpu threads=1 ranks=2", "--report", (work / "report.json").string()},
                                   work.string(), environmentWithFakeMpirun(work, script));
    const bool started = waitFor([&] { return std::filesystem::exists(work / "started"); });
    const auto signalled = std::chrono::steady_clock::now();
    ::kill(pid, SIGTERM);
    ProcessResult result = waitProcess(pid, work.string());
    EXPECT_TRUE(started) << "the fake mpirun never started: " << result.err;
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count(), result};
}

// mpirun outliving its ranks after the stop kept the sweep waiting for ever (3 hangs in 12 runs
// of TerminationDuringATwoRankConfigurationEndsItsJob under load): a job that has not ended ten
// seconds after the stop gets SIGTERM, five seconds later its process group SIGKILL.
TEST(BenchSweep, AJobThatIgnoresTheStopIsEndedAfterItsGrace) {
    const auto work = scratchFolder("mpirun-ignores-stop");
    const auto [seconds, result] = cancelTwoRankSweep(work, "trap '' USR1 TERM\n"
                                                            "touch started\n"
                                                            "while :; do sleep 1; done\n");
    EXPECT_EQ(result.exitCode, 3) << result.err;
    EXPECT_GE(seconds, 10.0) << "the job gets its grace";
    EXPECT_LT(seconds, 25.0);
    EXPECT_NE(result.err.find("did not end within 10 s of the stop; ending it"), std::string::npos) << result.err;
    const BenchReport report = loadBenchReport(work / "report.json");
    ASSERT_EQ(report.configurations.size(), 1u);
    EXPECT_EQ(report.configurations.front().status, BenchStatus::Cancelled) << report.configurations.front().error;
}

// The launcher relayed mpirun's standard error until the pipe closed: a process mpirun left
// behind holding it kept the launcher waiting after mpirun had ended.
TEST(BenchSweep, TheSweepGoesOnWhenMpirunEndsThoughALeftoverHoldsItsErrorPipe) {
    const auto work = scratchFolder("mpirun-leftover");
    const auto [seconds, result] = cancelTwoRankSweep(work, "trap 'echo stopping >&2; exit 0' USR1\n"
                                                            "setsid sleep 600 &\n"
                                                            "echo $! > holder.pid\n"
                                                            "touch started\n"
                                                            "while :; do sleep 1; done\n");
    pid_t holder = 0;
    std::ifstream(work / "holder.pid") >> holder;
    if (holder > 0) ::kill(holder, SIGKILL);
    EXPECT_EQ(result.exitCode, 3) << result.err;
    EXPECT_LT(seconds, 8.0) << "returned when mpirun ended, before the grace ran out";
    EXPECT_NE(result.err.find("stopping"), std::string::npos) << "mpirun's last words are relayed: " << result.err;
}

TEST(BenchSweep, BadConfigurationTextIsNamed) {
    const auto work = scratchFolder("bad-config");
    const ProcessResult result =
        runProcess(cheapSweep(work, {"cpu threads=many"}), work.string(), environmentFor(work));
    EXPECT_EQ(result.exitCode, 1);
    EXPECT_NE(result.err.find("--config \"cpu threads=many\""), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("'threads=many' needs a whole number"), std::string::npos) << result.err;
}

TEST(BenchSweep, ListsLeaveOutPrecisionsABackendDoesNotTrainIn) {
    const auto work = scratchFolder("precisions");
    // cuda has no tf32: the product of the lists leaves "cuda tf32" out (64 GPUs: each
    // configuration is refused before anything starts, on every machine).
    std::vector<std::string> arguments = cheapSweep(work, {});
    arguments.insert(arguments.end(), {"--backend", "cuda", "cudnn", "--mode", "fp32", "tf32", "--gpus", "64"});
    runProcess(arguments, work.string(), environmentFor(work));
    const BenchReport report = loadBenchReport(work / "report.json");
    std::vector<std::string> labels;
    for (const BenchConfiguration& configuration : report.configurations) labels.push_back(configuration.label);
    EXPECT_EQ(labels, (std::vector<std::string>{"cuda fp32, 64 GPUs", "cudnn fp32, 64 GPUs", "cudnn tf32, 64 GPUs"}));

    // A backend none of whose precisions is asked for: an error naming what it trains in and
    // which backend has the precision asked for.
    arguments = cheapSweep(work, {});
    arguments.insert(arguments.end(), {"--backend", "cuda", "cudnn", "--mode", "tf32"});
    const ProcessResult alone = runProcess(arguments, work.string(), environmentFor(work));
    EXPECT_EQ(alone.exitCode, 1) << alone.err;
    EXPECT_NE(alone.err.find("the cuda backend trains in fp32 or bf16, tf32 was asked for"), std::string::npos)
        << alone.err;
    EXPECT_NE(alone.err.find("or the cudnn backend for tf32"), std::string::npos) << alone.err;
}

// --mode names precisions for every backend: cpu trains in bf16 where the CPU has bf16
// instructions (the registry knows), cpu-ref in fp32 alone; a precision that no listed backend
// trains in is an error naming one and what it trains in.
TEST(BenchSweep, CpuBackendsRunTheAskedPrecisionsTheyTrainIn) {
    const auto work = scratchFolder("cpu-precisions");
    std::vector<std::string> arguments = cheapSweep(work, {});
    arguments.insert(arguments.end(), {"--backend", "cpu-ref", "cpu", "--threads", "1", "--mode", "fp32", "bf16"});
    const ProcessResult both = runProcess(arguments, work.string(), environmentFor(work));
    if (backendTrainsIn("cpu", "bf16")) {
        ASSERT_EQ(both.exitCode, 0) << both.err;
        std::vector<std::string> labels;
        for (const BenchConfiguration& c : loadBenchReport(work / "report.json").configurations) labels.push_back(c.label);
        EXPECT_EQ(labels, (std::vector<std::string>{"cpu-ref 1 thread", "cpu 1 thread", "cpu bf16 1 thread"}));
    } else {
        EXPECT_EQ(both.exitCode, 1) << both.err;
        EXPECT_NE(both.err.find("AVX512-BF16 or AMX"), std::string::npos) << both.err;
    }

    arguments = cheapSweep(work, {});
    arguments.insert(arguments.end(), {"--backend", "cpu", "--mode", "tf32"});
    const ProcessResult tf32 = runProcess(arguments, work.string(), environmentFor(work));
    EXPECT_EQ(tf32.exitCode, 1) << tf32.err;
    EXPECT_NE(tf32.err.find("the cpu backend trains in fp32"), std::string::npos) << tf32.err;
    EXPECT_NE(tf32.err.find("tf32 was asked for"), std::string::npos) << tf32.err;
}

TEST(BenchSweep, TwoRanksRunUnderMpirunAndRankZeroReports) {
    if (const std::string why = whyRanksCannotRun(); !why.empty()) GTEST_SKIP() << why;
    const auto work = scratchFolder("mpirun");
    const std::vector<std::string> environment = environmentForRanks(work);
    std::vector<std::string> command = cheapSweep(work, {"cpu threads=1", "cpu threads=1 ranks=2"});
    command.insert(command.end(), {"--bucket-mb", "0.5"});  // reaches the ranks mpirun starts
    const ProcessResult result = runProcess(command, work.string(), environment);
    ASSERT_EQ(result.exitCode, 0) << result.err;
    const BenchReport report = loadBenchReport(work / "report.json");
    ASSERT_EQ(report.configurations.size(), 2u);
    const BenchConfiguration& two = report.configurations[1];
    EXPECT_EQ(two.label, "cpu 1 thread, 2 ranks");
    ASSERT_TRUE(two.ok()) << two.error;
    EXPECT_EQ(two.ranks, 2);
    EXPECT_GT(two.trainImagesPerSecond.median, 0.0);
    EXPECT_GT(two.breakdownMs.communication, 0.0) << "two ranks all-reduce their gradients";
    EXPECT_TRUE(scalingEfficiency(report, two).has_value());
    const std::vector<nlohmann::json> lines = jsonLines(result.out);
    ASSERT_EQ(lines.size(), 2u) << "one line per configuration, the ranks' included: " << result.out;
    EXPECT_FALSE(lines[0].contains("bucket_mb")) << "one rank all-reduces nothing";
    EXPECT_EQ(lines[1].value("bucket_mb", 0.0), 0.5) << lines[1].dump();
}

}  // namespace
}  // namespace cnnstudio::e2e
