// cnnstudio-train and cnnstudio-bench against the failures of issue 16: hostile input, runs
// interrupted at awkward moments, two trainers on one run folder, bad options. Each test drives
// the built program as a user would.
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "train_worker.h"

namespace cnnstudio::e2e {
namespace {

const std::string kBench = CNNSTUDIO_BENCH_BINARY;
const std::filesystem::path kFashionMnist = "/usr/share/datasets/fashion-mnist";

std::filesystem::path scratchFolder(const std::string& name) {
    return freshFolder(std::filesystem::path(::testing::TempDir()) /
                           ("cnnstudio-reliability-" + std::to_string(::getpid())), name);
}

// A valid small network with `nested` (1 MB of lists inside lists) put where `place` says.
std::string specWithNestedValue(const std::string& place) {
    const std::string nested = std::string(500000, '[') + std::string(500000, ']');
    const auto at = [&](const std::string& here, const std::string& normal) { return place == here ? nested : normal; };
    return "{\"format\": \"cnnstudio-network\", \"version\": 1, \"name\": " + at("name", "\"deep\"") +
           ", \"nodes\": " +
           (place == "nodes"
                ? nested
                : "[{\"name\": \"input\", \"type\": \"Input\", \"params\": {\"channels\": 1, \"height\": 28, "
                  "\"width\": 28}},"
                  " {\"name\": \"conv\", \"type\": \"Conv2D\", \"inputs\": " + at("inputs", "[\"input\"]") +
                      ", \"params\": {\"filters\": " + at("filters", "4") + ", \"kernel\": 3}}]") +
           ", \"layout\": " + at("layout", "{}") + "}";
}

TEST(Reliability, DeeplyNestedSpecValueIsRefusedNamingTheFileNotACrash) {
    const auto work = scratchFolder("deep-spec");
    for (const std::string place : {"nodes", "filters", "inputs", "layout", "name"}) {
        const auto spec = work / (place + ".json");
        std::ofstream(spec) << specWithNestedValue(place);
        const ProcessResult result = train({"--spec", spec.string(), "--summary"}, work);
        EXPECT_EQ(result.exitCode, 1) << place << ": " << result.err;
        EXPECT_NE(result.err.find(spec.string() + ":1"), std::string::npos) << place << ": " << result.err;
        EXPECT_NE(result.err.find("nested more than 64"), std::string::npos) << place << ": " << result.err;
    }
}

// The state a kill leaves between the last epoch's checkpoint and model/: every epoch trained
// and checkpointed, no model/ and no `finished` event.
void undoTheFinish(const std::filesystem::path& runDir) {
    std::filesystem::remove_all(runDir / "model");
    std::vector<std::string> lines = eventLines(runDir);
    ASSERT_NE(lines.back().find("\"finished\""), std::string::npos) << lines.back();
    lines.pop_back();
    std::ofstream stream(runDir / "events.jsonl", std::ios::trunc);
    for (const auto& line : lines) stream << line << "\n";
}

void setConfigDataset(const std::filesystem::path& runDir, const std::string& dataset) {
    nlohmann::json config = nlohmann::json::parse(std::ifstream(runDir / "config.json"));
    config["dataset"] = dataset;
    std::ofstream(runDir / "config.json", std::ios::trunc) << config.dump(2);
}

// Also pins data-set paths: given relative, the run records it absolute, and a run recorded with
// a relative one is not resumed against whatever the current folder holds.
TEST(Reliability, ResumeOfARunKilledBeforeItsModelWasWrittenFinishesIt) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("killed-before-model");
    const auto runDir = work / "run";
    const std::string relativeData = std::filesystem::relative(kFashionMnist).string();
    const ProcessResult trained = train({"--preset", "lenet5", "--dataset", "idx:" + relativeData, "--limit", "512",
                                         "--epochs", "1", "--threads", "1", "--run-dir", runDir.string()},
                                        work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    const nlohmann::json config = nlohmann::json::parse(std::ifstream(runDir / "config.json"));
    EXPECT_EQ(config["dataset"], "idx:" + kFashionMnist.string());
    undoTheFinish(runDir);

    setConfigDataset(runDir, "idx:" + relativeData);
    const ProcessResult relative = train({"--resume", runDir.string()}, work);
    EXPECT_EQ(relative.exitCode, 1);
    EXPECT_NE(relative.err.find("is relative"), std::string::npos) << relative.err;
    setConfigDataset(runDir, config["dataset"]);

    const ProcessResult resumed = train({"--resume", runDir.string(), "--threads", "1"}, work);
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    const nlohmann::json finished = lastEventNamed(runDir, "finished");
    ASSERT_TRUE(finished.is_object()) << resumed.err;
    EXPECT_EQ(finished["reason"], "completed");
    EXPECT_TRUE(finished["test_accuracy"].is_number());
    EXPECT_TRUE(std::filesystem::exists(runDir / "model/model.safetensors"));

    const ProcessResult again = train({"--resume", runDir.string()}, work);
    EXPECT_EQ(again.exitCode, 1);
    EXPECT_NE(again.err.find("finished its 1 epochs already"), std::string::npos) << again.err;
    EXPECT_EQ(nlohmann::json::parse(eventLines(runDir).back())["event"], "finished")
        << "a refused --resume must leave the finished run's record as it was";
}

// Holds the run folder's lock the way a running trainer does: flock plus its pid in the file.
class LockHolder {
public:
    explicit LockHolder(const std::filesystem::path& lockFile) : fd_(::open(lockFile.c_str(), O_RDWR | O_CREAT, 0644)) {
        const std::string pid = std::to_string(::getpid());
        locked_ = fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) == 0 &&
                  ::write(fd_, pid.data(), pid.size()) == ssize_t(pid.size());
    }
    ~LockHolder() { ::close(fd_); }
    bool locked() const { return locked_; }

private:
    int fd_;
    bool locked_ = false;
};

TEST(Reliability, SecondTrainerOnALockedRunFolderIsRefusedNamingTheFolderAndPid) {
    const auto work = scratchFolder("locked");
    const auto runDir = work / "run";
    std::filesystem::create_directories(runDir);
    std::ofstream(runDir / "spec.json") << "{}";
    std::ofstream(runDir / "config.json") << "{}";
    const LockHolder holder(runDir / "train.lock");
    ASSERT_TRUE(holder.locked());

    const ProcessResult refused = train({"--resume", runDir.string()}, work);
    EXPECT_EQ(refused.exitCode, 1);
    EXPECT_NE(refused.err.find(runDir.string()), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("another trainer (pid " + std::to_string(::getpid()) + ")"), std::string::npos)
        << refused.err;
    EXPECT_FALSE(std::filesystem::exists(runDir / "events.jsonl")) << "the refused trainer wrote into the run";
}

TEST(Reliability, BenchRefusesAThreadCountLibgompCannotStart) {
    const auto work = scratchFolder("bench-threads");
    const ProcessResult result = runProcess({kBench, "--threads", "100000"}, work.string(), kQuietOpenMp);
    EXPECT_EQ(result.exitCode, 2) << "bad usage, as the help says; got " << result.exitCode << ": " << result.err;
    EXPECT_NE(result.err.find("--threads"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("not in range"), std::string::npos) << result.err;
}

TEST(Reliability, HelpDocumentsTheExitCodeOfAStoppedRun) {
    const auto work = scratchFolder("help");
    const ProcessResult help = train({"--help"}, work);
    EXPECT_EQ(help.exitCode, 0);
    EXPECT_NE(help.out.find("3 stopped by a signal before the end"), std::string::npos) << help.out;
}

// Each option, given a bad value, exits 2 with a message naming the option and saying why.
void expectUsageError(const std::string& option, const std::string& value, const std::string& says) {
    const auto work = scratchFolder("bad-value");
    const ProcessResult result = train({"--preset", "lenet5", option, value, "--summary"}, work);
    EXPECT_EQ(result.exitCode, 2) << option << " " << value << ": " << result.err;
    EXPECT_NE(result.err.find(option), std::string::npos) << result.err;
    EXPECT_NE(result.err.find(says), std::string::npos) << result.err;
}

TEST(Reliability, NegativeSeedOrLimitIsRefusedNotWrappedAround) {
    expectUsageError("--seed", "-1", "'-1' is not a whole number from 0");
    expectUsageError("--limit", "-5", "'-5' is not a whole number from 0");
}

TEST(Reliability, AWordForANumberIsCalledNotANumber) {
    expectUsageError("--lr", "abc", "'abc' is not a number");
    expectUsageError("--lr", "1000", "1000 is out of range: give a number from 1e-12 to 100");
}

TEST(Reliability, HostNameThatLooksLikeAnSshOptionIsRefused) {
    const auto work = scratchFolder("dash-host");
    const auto hostfile = work / "hosts";
    std::ofstream(hostfile) << "node-a slots=1\n -Fevil.conf slots=1\n";  // ssh -F: read that config
    const ProcessResult result =
        train({"--preset", "lenet5", "--ranks", "1", "--nodes", "2", "--hostfile", hostfile.string(), "--dry-run"},
              work);
    EXPECT_EQ(result.exitCode, 1) << result.err;
    EXPECT_NE(result.err.find(hostfile.string() + ":2"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("host name '-Fevil.conf' begins with '-'"), std::string::npos) << result.err;
}

// A spec whose second node cannot work (its kernel is larger than the image), its name holding
// a NUL byte and a terminal escape sequence.
std::string specWithAHostileNodeName() {
    return R"({"format": "cnnstudio-network", "version": 1, "name": "hostile", "nodes": [)"
           R"({"name": "input", "type": "Input", "params": {"channels": 1, "height": 28, "width": 28}},)"
           R"({"name": "conv\u0000tail\u001b[2J", "type": "Conv2D", "inputs": ["input"],)"
           R"( "params": {"filters": 4, "kernel": 29}}]})";
}

TEST(Reliability, AFailedSpecCheckLeavesNoRunFolderAndItsMessageIsWholeAndEscaped) {
    const auto work = scratchFolder("hostile-spec");
    const auto spec = work / "hostile.json";
    std::ofstream(spec) << specWithAHostileNodeName();
    const auto runDir = work / "run";
    const ProcessResult result =
        train({"--spec", spec.string(), "--epochs", "1", "--run-dir", runDir.string()}, work);
    EXPECT_EQ(result.exitCode, 1) << result.err;
    EXPECT_FALSE(std::filesystem::exists(runDir)) << "a spec that fails its check leaves no run folder";
    EXPECT_NE(result.err.find("node 'conv\\x00tail\\x1b[2J': output would be 0x0"), std::string::npos)
        << "the text after the NUL byte is cut or the bytes reach the terminal raw: " << result.err;
    EXPECT_EQ(result.err.find('\x1b'), std::string::npos) << "a raw escape byte reached standard error";
}

TEST(Reliability, CudaWithTf32IsRefusedBeforeARunFolderIsMade) {
    const auto work = scratchFolder("cuda-tf32");
    const auto runDir = work / "run";
    const ProcessResult result = train({"--preset", "lenet5", "--backend", "cuda", "--precision", "tf32",
                                        "--run-dir", runDir.string()},
                                       work);
    EXPECT_EQ(result.exitCode, 2) << result.err;
    EXPECT_NE(result.err.find("the cuda backend trains in fp32 or bf16, tf32 was asked for"), std::string::npos)
        << result.err;
    EXPECT_FALSE(std::filesystem::exists(runDir));
}

TEST(Reliability, ThreadsBeyondTheCoresAreWarnedAbout) {
    const auto work = scratchFolder("train-threads");
    const ProcessResult result = train({"--preset", "lenet5", "--threads", "4096", "--summary"}, work);
    EXPECT_EQ(result.exitCode, 0) << result.err;
    EXPECT_NE(result.err.find("warning: --threads 4096 is more than the"), std::string::npos) << result.err;
    const ProcessResult fits = train({"--preset", "lenet5", "--threads", "1", "--summary"}, work);
    EXPECT_EQ(fits.err.find("warning"), std::string::npos) << fits.err;
}

}  // namespace
}  // namespace cnnstudio::e2e
