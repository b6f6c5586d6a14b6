// cnnstudio-train as a user runs it: LeNet-5 learns a Fashion-MNIST subset on the cpu backend
// in well under two minutes; its run folder holds a model that `evaluate` and `predict` use;
// a graceful stop and --resume finish the run; bad specs and bad options give exit codes 1 and 2
// with a message that says what is wrong.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.h"

namespace cnnstudio::e2e {
namespace {

const std::string kTrain = CNNSTUDIO_TRAIN_BINARY;
const std::filesystem::path kFashionMnist = "/usr/share/datasets/fashion-mnist";

// CI's two cores are shared with other tests: OpenMP threads that spin while they wait
// starve each other there, so the worker runs with waiting threads asleep.
const std::vector<std::string> kEnvironment = {"OMP_WAIT_POLICY=passive"};

std::filesystem::path scratchFolder(const std::string& name) {
    const auto folder = std::filesystem::path(::testing::TempDir()) / "cnnstudio-e2e" / name;
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    return folder;
}

ProcessResult train(std::vector<std::string> arguments, const std::filesystem::path& work) {
    arguments.insert(arguments.begin(), kTrain);
    return runProcess(arguments, work.string(), kEnvironment);
}

std::vector<nlohmann::json> readEvents(const std::filesystem::path& runDir) {
    std::vector<nlohmann::json> events;
    std::ifstream stream(runDir / "events.jsonl");
    for (std::string line; std::getline(stream, line);) events.push_back(nlohmann::json::parse(line));
    return events;
}

nlohmann::json lastEventNamed(const std::filesystem::path& runDir, const std::string& name) {
    nlohmann::json found;
    for (const auto& event : readEvents(runDir))
        if (event["event"] == name) found = event;
    return found;
}

// A greyscale PGM image, which OpenCV reads like any other format.
void writePgm(const std::filesystem::path& file, int width, int height) {
    std::ofstream stream(file, std::ios::binary);
    stream << "P5\n" << width << " " << height << "\n255\n";
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) stream.put(char(x > width / 3 && x < 2 * width / 3 ? 200 : 10));
}

// One LeNet-5 run shared by the tests that need a trained model.
class TrainedLeNet : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (!std::filesystem::exists(kFashionMnist)) return;
        work_ = scratchFolder("lenet5");
        runDir_ = work_ / "run";
        result_ = train({"--preset", "lenet5", "--dataset", "fashion-mnist", "--limit", "6000", "--epochs", "2",
                         "--backend", "cpu", "--threads", "2", "--batch", "32", "--lr", "0.002", "--run-dir",
                         runDir_.string()},
                        work_);
    }
    void SetUp() override {
        if (!std::filesystem::exists(kFashionMnist))
            GTEST_SKIP() << kFashionMnist << " is absent: install the dataset-fashion-mnist package";
    }
    static inline std::filesystem::path work_, runDir_;
    static inline ProcessResult result_;
};

TEST_F(TrainedLeNet, ReachesEightyPercentTestAccuracyInUnderTwoMinutes) {
    ASSERT_EQ(result_.exitCode, 0) << result_.err;
    const nlohmann::json finished = lastEventNamed(runDir_, "finished");
    ASSERT_TRUE(finished.is_object()) << "no finished event";
    EXPECT_EQ(finished["reason"], "completed");
    ASSERT_TRUE(finished["test_accuracy"].is_number());
    EXPECT_GE(finished["test_accuracy"].get<double>(), 0.80);
    EXPECT_LT(result_.seconds, 120.0);
    EXPECT_NE(result_.out.find("TEST ACCURACY"), std::string::npos) << result_.out;
    EXPECT_EQ(readEvents(runDir_).front()["event"], "run_started");
    for (const char* file : {"spec.json", "config.json", "checkpoints/latest/weights.safetensors",
                             "checkpoints/best/optimizer.safetensors", "model/model.safetensors", "model/spec.json",
                             "model/model.json"})
        EXPECT_TRUE(std::filesystem::exists(runDir_ / file)) << file;
}

TEST_F(TrainedLeNet, EvaluateReproducesTheTestAccuracy) {
    ASSERT_EQ(result_.exitCode, 0);
    const ProcessResult evaluated = train({"evaluate", runDir_.string(), "--threads", "2"}, work_);
    ASSERT_EQ(evaluated.exitCode, 0) << evaluated.err;
    char expected[64];
    std::snprintf(expected, sizeof expected, "accuracy %.2f%% on 10000 test images",
                  100.0 * lastEventNamed(runDir_, "finished")["test_accuracy"].get<double>());
    EXPECT_NE(evaluated.out.find(expected), std::string::npos) << evaluated.out;
    EXPECT_NE(evaluated.out.find("confusion matrix"), std::string::npos);
    EXPECT_NE(evaluated.out.find("Ankle boot"), std::string::npos);
}

TEST_F(TrainedLeNet, PredictShowsTheTopThreeClasses) {
#ifndef CNNSTUDIO_HAVE_OPENCV
    GTEST_SKIP() << "this build has no OpenCV, so cnnstudio-train has no predict sub-command";
#endif
    ASSERT_EQ(result_.exitCode, 0);
    const auto image = work_ / "stripe.pgm";
    writePgm(image, 40, 40);  // resized to 28x28 on the way in
    const ProcessResult predicted = train({"predict", (runDir_ / "model").string(), image.string()}, work_);
    ASSERT_EQ(predicted.exitCode, 0) << predicted.err;
    int percentLines = 0;
    for (std::size_t at = predicted.out.find('%'); at != std::string::npos; at = predicted.out.find('%', at + 1))
        ++percentLines;
    EXPECT_EQ(percentLines, 3) << predicted.out;

    const ProcessResult unreadable = train({"predict", runDir_.string(), (runDir_ / "spec.json").string()}, work_);
    EXPECT_EQ(unreadable.exitCode, 1);
    EXPECT_NE(unreadable.err.find("cannot read the image"), std::string::npos) << unreadable.err;
}

TEST(CnnstudioTrain, SigtermStopsAfterTheCurrentStepAndResumeFinishesTheRun) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("stop-resume");
    const auto runDir = work / "run";
    const pid_t pid = startProcess({kTrain, "--preset", "lenet5", "--limit", "2000", "--epochs", "1", "--threads", "1",
                                    "--log-every", "1", "--run-dir", runDir.string()},
                                   work.string(), kEnvironment);
    // Stop once training is under way (the first step event).
    for (int wait = 0; wait < 600 && !lastEventNamed(runDir, "step").is_object(); ++wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    const ProcessResult stopped = waitProcess(pid, work.string());
    EXPECT_EQ(stopped.exitCode, 0) << stopped.err;
    const nlohmann::json finished = lastEventNamed(runDir, "finished");
    ASSERT_TRUE(finished.is_object()) << stopped.err;
    if (finished["reason"] == "completed") GTEST_SKIP() << "the run finished before the signal arrived";
    EXPECT_EQ(finished["reason"], "stopped");
    EXPECT_TRUE(std::filesystem::exists(runDir / "checkpoints/latest/progress.json"));
    const std::int64_t stoppedAt = lastEventNamed(runDir, "checkpoint")["step"].get<std::int64_t>();

    const ProcessResult resumed = train({"--resume", runDir.string()}, work);
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    EXPECT_EQ(lastEventNamed(runDir, "run_started")["resumed_from_step"], stoppedAt);
    EXPECT_EQ(lastEventNamed(runDir, "finished")["reason"], "completed");
    EXPECT_TRUE(std::filesystem::exists(runDir / "model/model.safetensors"));
}

TEST(CnnstudioTrain, BadSpecExitsWithOneAndNamesTheNode) {
    const auto work = scratchFolder("bad-spec");
    std::ofstream(work / "bad.json") << R"({"format": "cnnstudio-network", "version": 1, "name": "bad",
      "nodes": [
        {"name": "input", "type": "Input", "params": {"channels": 1, "height": 28, "width": 28}},
        {"name": "huge_kernel", "type": "Conv2D", "inputs": ["input"], "params": {"filters": 4, "kernel": 40}},
        {"name": "flatten", "type": "Flatten", "inputs": ["huge_kernel"]},
        {"name": "logits", "type": "Dense", "inputs": ["flatten"], "params": {"units": 10}}]})";
    const ProcessResult result = train({"--spec", (work / "bad.json").string(), "--run-dir", (work / "run").string()}, work);
    EXPECT_EQ(result.exitCode, 1);
    EXPECT_NE(result.err.find("node 'huge_kernel'"), std::string::npos) << result.err;
    const nlohmann::json failed = lastEventNamed(work / "run", "failed");
    ASSERT_TRUE(failed.is_object()) << "a failed event belongs in the run folder";
    EXPECT_NE(failed["reason"].get<std::string>().find("huge_kernel"), std::string::npos);
}

TEST(CnnstudioTrain, SummaryPrintsTheFerCnnTotal) {
    const auto work = scratchFolder("summary");
    const ProcessResult result = train({"--preset", "fer-cnn", "--summary"}, work);
    EXPECT_EQ(result.exitCode, 0) << result.err;
    EXPECT_NE(result.out.find("3,506,503"), std::string::npos) << result.out;
}

TEST(CnnstudioTrain, BadOptionsExitWithTwoAndSayWhy) {
    const auto work = scratchFolder("usage");
    const ProcessResult zeroEpochs = train({"--preset", "lenet5", "--epochs", "0"}, work);
    EXPECT_EQ(zeroEpochs.exitCode, 2);
    EXPECT_NE(zeroEpochs.err.find("--epochs"), std::string::npos) << zeroEpochs.err;

    const ProcessResult noNetwork = train({"--epochs", "1"}, work);
    EXPECT_EQ(noNetwork.exitCode, 2);
    EXPECT_NE(noNetwork.err.find("--preset"), std::string::npos) << noNetwork.err;

    const ProcessResult badDataset = train({"--preset", "lenet5", "--dataset", "mnist-please"}, work);
    EXPECT_EQ(badDataset.exitCode, 2);
    EXPECT_NE(badDataset.err.find("fer2013:"), std::string::npos) << badDataset.err;

    const ProcessResult badAugment = train({"--preset", "lenet5", "--augment", "spin=3"}, work);
    EXPECT_EQ(badAugment.exitCode, 2);
    EXPECT_NE(badAugment.err.find("spin"), std::string::npos) << badAugment.err;

    std::filesystem::create_directories(work / "some-run");
    const ProcessResult changedOnResume = train({"--resume", (work / "some-run").string(), "--lr", "0.1"}, work);
    EXPECT_EQ(changedOnResume.exitCode, 2);
    EXPECT_NE(changedOnResume.err.find("--lr cannot be changed when resuming"), std::string::npos)
        << changedOnResume.err;
}

}  // namespace
}  // namespace cnnstudio::e2e
