// Chaos: real cnnstudio-train processes on the cpu backend and a small slice of Fashion-MNIST,
// interrupted the hard ways a user's machine interrupts them (kill -9, a full disk, Ctrl-C in a
// terminal, a rank killed in a distributed job). Each takes seconds.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "train_worker.h"

namespace cnnstudio::e2e {
namespace {

using namespace std::chrono_literals;

const std::filesystem::path kFashionMnist = "/usr/share/datasets/fashion-mnist";

std::filesystem::path scratchFolder(const std::string& name) {
    return freshFolder(std::filesystem::path(::testing::TempDir()) / ("cnnstudio-chaos-" + std::to_string(::getpid())),
                       name);
}

// lenet5 on the first `images` training images, one thread, one epoch unless told otherwise.
std::vector<std::string> smallRun(const std::filesystem::path& runDir, int images, int batch = 32) {
    return {kTrainProgram, "--preset", "lenet5", "--dataset", "idx:" + kFashionMnist.string(),
            "--limit", std::to_string(images), "--batch", std::to_string(batch), "--epochs", "1", "--threads", "1",
            "--log-every", "1", "--run-dir", runDir.string()};
}

// Waits up to `timeout` for `condition`, polling; true when it held.
bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (condition()) return true;
        std::this_thread::sleep_for(5ms);
    }
    return condition();
}

// The last `checkpoint` event taken within an epoch at or after `step`, if any yet.
bool hasMidEpochCheckpointFrom(const std::filesystem::path& runDir, long long step) {
    for (const auto& event : readEventObjects(runDir))
        if (event.value("event", "") == "checkpoint" && event.value("step", 0LL) >= step) return true;
    return false;
}

long long lastStep(const std::filesystem::path& runDir) {
    long long step = 0;
    for (const auto& event : readEventObjects(runDir))
        if (event.value("event", "") == "step") step = event.value("step", 0LL);
    return step;
}

std::string fileText(const std::filesystem::path& file) {
    std::ifstream stream(file);
    std::ostringstream text;
    text << stream.rdbuf();
    return text.str();
}

// The pids of live processes whose command line mentions `text` (the run folder, for its ranks).
std::vector<pid_t> processesMentioning(const std::string& text) {
    std::vector<pid_t> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string commandLine = fileText(entry.path() / "cmdline");
        const std::string stat = fileText(entry.path() / "stat");
        const std::size_t afterName = stat.rfind(')');
        if (afterName == std::string::npos || stat.size() < afterName + 3 || stat[afterName + 2] == 'Z') continue;
        if (commandLine.find(text) != std::string::npos) found.push_back(pid_t(std::stoi(name)));
    }
    return found;
}

// The rank number OpenMPI gave process `pid` (OMPI_COMM_WORLD_RANK in its environment); -1 if none.
int mpiRankOf(pid_t pid) {
    std::istringstream environment(fileText("/proc/" + std::to_string(pid) + "/environ"));
    for (std::string entry; std::getline(environment, entry, '\0');)
        if (entry.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) return std::stoi(entry.substr(21));
    return -1;
}

// OpenMPI refuses root unless told; CI runs as root on two cores (the launcher oversubscribes).
const std::vector<std::string> kMpiEnvironment = {"OMP_WAIT_POLICY=passive", "OMPI_ALLOW_RUN_AS_ROOT=1",
                                                  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_btl=self,tcp"};

class Chaos : public ::testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    }
};

TEST_F(Chaos, KillNineMidEpochThenResumeLosesAtMostTheStepsSinceTheLastCheckpoint) {
    const auto work = scratchFolder("kill-nine");
    const auto runDir = work / "run";
    std::vector<std::string> command = smallRun(runDir, 6400);  // 200 steps
    command.insert(command.end(), {"--checkpoint-every", "10steps"});
    const pid_t trainer = startProcess(command, work.string(), kQuietOpenMp);
    const bool checkpointed = waitFor([&] { return hasMidEpochCheckpointFrom(runDir, 30); }, 60s);
    ::kill(trainer, SIGKILL);
    const ProcessResult killed = waitProcess(trainer, work.string());
    ASSERT_TRUE(checkpointed) << "no checkpoint at step 30 or later within 60 s: " << killed.err;
    ASSERT_EQ(killed.exitCode, 128 + SIGKILL);

    const long long checkpointStep = lastEventNamed(runDir, "checkpoint")["step"].get<long long>();
    const long long reached = lastStep(runDir);
    EXPECT_EQ(fileText(runDir / "config.json").find("\"checkpoint_every\": \"10steps\"") != std::string::npos, true)
        << "the cadence is recorded in config.json";

    const ProcessResult resumed = train({"--resume", runDir.string()}, work);
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    // The kill may land after a later checkpoint was put in place but before its event was
    // written: the resume starts at the last checkpoint event's step or later.
    const long long resumedFrom = lastEventNamed(runDir, "run_started")["resumed_from_step"].get<long long>();
    EXPECT_GE(resumedFrom, checkpointStep);
    EXPECT_LE(resumedFrom, reached);
    EXPECT_LE(reached - resumedFrom, 10) << "more than the cadence was lost";
    EXPECT_EQ(lastEventNamed(runDir, "finished")["reason"], "completed");
}

TEST_F(Chaos, DiskFullDuringACheckpointKeepsThePreviousOneAndSaysSo) {
    const auto work = scratchFolder("disk-full");
    const auto runDir = work / "run";
    const ProcessResult first = runProcess(smallRun(runDir, 512), work.string(), kQuietOpenMp);
    ASSERT_EQ(first.exitCode, 0) << first.err;
    const long long stepsPerEpoch = lastEventNamed(runDir, "run_started")["steps_per_epoch"].get<long long>();

    // A file-size limit makes write() fail with EFBIG past 150 KiB, as a full disk fails it
    // with ENOSPC: the event log stays under it, the checkpoint's weights do not. SIGXFSZ is
    // ignored so that the write fails instead of the process being killed.
    const ProcessResult full =
        runProcess({"/bin/bash", "-c", "trap '' XFSZ; ulimit -f 150; exec \"$@\"", "bash", kTrainProgram, "--resume",
                    runDir.string(), "--epochs", "2", "--checkpoint-every", "4steps"},
                   work.string(), kQuietOpenMp);
    EXPECT_EQ(full.exitCode, 1) << full.err;
    EXPECT_NE(full.err.find("weights.safetensors: cannot write: File too large"), std::string::npos) << full.err;
    EXPECT_NE(full.err.find("the previous checkpoint in " + (runDir / "checkpoints/latest").string() + " is kept"),
              std::string::npos)
        << full.err;
    EXPECT_EQ(lastEventNamed(runDir, "failed")["step"].get<long long>(), stepsPerEpoch + 4)
        << "the first epoch, then 4 more steps";

    const ProcessResult resumed = train({"--resume", runDir.string(), "--epochs", "2"}, work);
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    EXPECT_EQ(lastEventNamed(runDir, "run_started")["resumed_from_step"].get<long long>(), stepsPerEpoch)
        << "resumed from the checkpoint the full disk left in place";
    EXPECT_EQ(lastEventNamed(runDir, "finished")["reason"], "completed");
}

TEST_F(Chaos, ALossThatExplodesStopsTheRunNamingTheStepAndTheLayer) {
    const auto work = scratchFolder("explodes");
    const auto runDir = work / "run";
    std::vector<std::string> command = smallRun(runDir, 1024);
    command.insert(command.end(), {"--lr", "100"});
    const ProcessResult result = runProcess(command, work.string(), kQuietOpenMp);
    EXPECT_EQ(result.exitCode, 1) << result.err;
    const nlohmann::json failed = lastEventNamed(runDir, "failed");
    ASSERT_TRUE(failed.is_object()) << result.err;
    const std::string reason = failed["reason"];
    // The failed event counts the steps taken, the blown-up one included (the loss is read after
    // it); with --log-every 1 the message names that very step.
    EXPECT_NE(reason.find("at epoch 1 step " + std::to_string(failed["step"].get<long long>())), std::string::npos)
        << reason;
    // Adam moves each weight by about the learning rate per step, so after the few steps the loss
    // takes to explode the weights may still be below the bad-parameter bound: then the message
    // says so instead of naming a layer (trainer_test pins the layer naming itself).
    EXPECT_TRUE(reason.find("the first layer whose parameters went bad is '") != std::string::npos ||
                reason.find("every parameter is still finite") != std::string::npos)
        << reason;
    EXPECT_FALSE(std::filesystem::exists(runDir / "model")) << "a diverged run saves no model";
}

TEST_F(Chaos, CtrlCInATerminalOnADistributedRunStopsEveryRankWithACheckpoint) {
    if (const std::string why = whyRanksCannotRun(); !why.empty()) GTEST_SKIP() << why;
    const auto work = scratchFolder("ctrl-c");
    const auto runDir = work / "run";
    std::vector<std::string> command = smallRun(runDir, 25600);
    command.insert(command.end(), {"--ranks", "2"});
    // A terminal sends Ctrl-C's SIGINT to its whole foreground process group.
    const pid_t launcher = startProcess(command, work.string(), kMpiEnvironment, /*ownProcessGroup=*/true);
    const bool training = waitFor([&] { return lastStep(runDir) >= 3; }, 60s);
    ::kill(-launcher, SIGINT);
    const ProcessResult stopped = waitProcess(launcher, work.string());
    ASSERT_TRUE(training) << "no third step within 60 s: " << stopped.err;
    EXPECT_EQ(stopped.exitCode, 3) << stopped.err;
    const nlohmann::json finished = lastEventNamed(runDir, "finished");
    ASSERT_TRUE(finished.is_object()) << stopped.err;
    EXPECT_EQ(finished["reason"], "stopped");
    EXPECT_EQ(lastEventNamed(runDir, "checkpoint")["step"].get<long long>(), lastStep(runDir))
        << "the stop's checkpoint is at the step every rank stopped at";
    EXPECT_TRUE(waitFor([&] { return processesMentioning(runDir.string()).empty(); }, 10s));

    // --resume alone starts the recorded two ranks again.
    const nlohmann::json config = nlohmann::json::parse(fileText(runDir / "config.json"));
    EXPECT_EQ(config["distributed"]["ranks_per_node"], 2);
    const ProcessResult resumed =
        runProcess({kTrainProgram, "--resume", runDir.string(), "--dry-run"}, work.string(), kMpiEnvironment);
    EXPECT_EQ(resumed.exitCode, 0) << resumed.err;
    EXPECT_NE(resumed.out.find("-np 2"), std::string::npos) << resumed.out;
    const ProcessResult refused =
        runProcess({kTrainProgram, "--resume", runDir.string(), "--ranks", "3"}, work.string(), kMpiEnvironment);
    EXPECT_EQ(refused.exitCode, 1) << refused.err;
    EXPECT_NE(refused.err.find("the run was trained on 2 ranks, the options ask for 3 ranks"), std::string::npos)
        << refused.err;
}

TEST_F(Chaos, KillingTheLauncherEndsEveryRank) {
    if (const std::string why = whyRanksCannotRun(); !why.empty()) GTEST_SKIP() << why;
    const auto work = scratchFolder("launcher-killed");
    const auto runDir = work / "run";
    std::vector<std::string> command = smallRun(runDir, 25600);
    command.insert(command.end(), {"--ranks", "2"});
    const pid_t launcher = startProcess(command, work.string(), kMpiEnvironment);
    const bool training = waitFor([&] { return lastStep(runDir) >= 2; }, 60s);
    ::kill(launcher, SIGKILL);  // as the app's Kill or a kill -9 does
    const ProcessResult killed = waitProcess(launcher, work.string());
    ASSERT_TRUE(training) << killed.err;
    EXPECT_TRUE(waitFor([&] { return processesMentioning(runDir.string()).empty(); }, 15s))
        << processesMentioning(runDir.string()).size() << " process(es) of the job still run";
}

TEST_F(Chaos, ARankKilledInAFourRankJobEndsEveryRankAndIsNamed) {
    if (const std::string why = whyRanksCannotRun(); !why.empty()) GTEST_SKIP() << why;
    const auto work = scratchFolder("rank-killed");
    const auto runDir = work / "run";
    std::vector<std::string> command = smallRun(runDir, 25600, 8);
    command.insert(command.end(), {"--ranks", "4"});
    const pid_t launcher = startProcess(command, work.string(), kMpiEnvironment);
    const bool training = waitFor([&] { return lastStep(runDir) >= 2; }, 90s);
    pid_t victim = 0;
    for (pid_t pid : processesMentioning(runDir.string()))
        if (mpiRankOf(pid) == 2) victim = pid;
    if (victim > 0) ::kill(victim, SIGKILL);
    const auto killedAt = std::chrono::steady_clock::now();
    const ProcessResult ended = waitProcess(launcher, work.string());
    const double secondsToEnd = std::chrono::duration<double>(std::chrono::steady_clock::now() - killedAt).count();
    ASSERT_TRUE(training) << "no second step within 90 s: " << ended.err;
    ASSERT_GT(victim, 0) << "rank 2 was not found among the job's processes";
    EXPECT_EQ(ended.exitCode, 1) << ended.err;
    EXPECT_LE(secondsToEnd, 30.0) << "the job took too long to end after rank 2 died";
    EXPECT_TRUE(waitFor([&] { return processesMentioning(runDir.string()).empty(); }, 5s));
    const nlohmann::json failed = lastEventNamed(runDir, "failed");
    ASSERT_TRUE(failed.is_object()) << ended.err;
    const std::string reason = failed["reason"];
    EXPECT_NE(reason.find("rank 2 ("), std::string::npos) << reason;
    EXPECT_NE(reason.find("killed by signal 9"), std::string::npos) << reason;
    EXPECT_EQ(failed["where"], "mpirun");
}

}  // namespace
}  // namespace cnnstudio::e2e
