// cnnstudio-train as a user runs it: LeNet-5 learns a Fashion-MNIST subset on the cpu backend
// in well under two minutes, and its run folder holds a model that `evaluate` and `predict` use;
// a graceful stop and --resume finish the run; bad specs and bad options give exit codes 1 and 2
// with a message that says what is wrong.
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "train_worker.h"

namespace cnnstudio::e2e {
namespace {

const std::filesystem::path kFashionMnist = "/usr/share/datasets/fashion-mnist";

// CI's two cores are shared with other tests: OpenMP threads that spin while they wait
// starve each other there, so the worker runs with waiting threads asleep.
const std::vector<std::string> kQuietOpenMp = {"OMP_WAIT_POLICY=passive"};

// Removed at the end when every test passed (a failure keeps it).
const std::filesystem::path kScratchRoot = scratchRootRemovedOnSuccess("cnnstudio-e2e");

std::filesystem::path scratchFolder(const std::string& name) { return freshFolder(kScratchRoot, name); }

#ifdef CNNSTUDIO_HAVE_OPENCV
// A greyscale PGM image, which OpenCV reads like any other format (predict needs OpenCV).
void writePgm(const std::filesystem::path& file, int width, int height) {
    std::ofstream stream(file, std::ios::binary);
    stream << "P5\n" << width << " " << height << "\n255\n";
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) stream.put(char(x > width / 3 && x < 2 * width / 3 ? 200 : 10));
}

// An image folder data set of 48x48 grey faces (not real ones: the scores do not matter) with
// `count(k)` test images in the k-th of `classes`, one image per class in train/ and val/.
void writeImageFolderDataset(const std::filesystem::path& root, const std::vector<std::string>& classes,
                             const std::function<int(std::size_t)>& count) {
    for (std::size_t k = 0; k < classes.size(); ++k)
        for (const auto& [split, images] : {std::pair{"train", 1}, {"val", 1}, {"test", count(k)}}) {
            const auto folder = root / split / classes[k];
            std::filesystem::create_directories(folder);
            for (int i = 0; i < images; ++i) writePgm(folder / (std::to_string(i) + ".pgm"), 48, 48);
        }
}

// The support column of `className`'s row in evaluate's per-class table; -1 when there is none.
int supportInTable(const std::string& table, const std::string& className) {
    std::istringstream lines(table);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(className + " ", 0) == 0) return std::stoi(line.substr(line.find_last_of(' ') + 1));
    return -1;
}

// The shipped FER model names its classes in the FER2013 CSV's order (..., Sad, Surprise,
// Neutral); an image folder of the same classes sorts them by name (..., Neutral, Sad, Surprise).
// Evaluate scores each image against the model's output of its class's name, and refuses a data
// set with a class the model does not have.
TEST(CnnstudioTrain, EvaluateMatchesClassesByNameAndRefusesOthers) {
    const auto work = scratchFolder("class-order");
    const std::vector<std::string> sortedFerClasses = {"Angry", "Disgust", "Fear", "Happy", "Neutral", "Sad",
                                                       "Surprise"};
    writeImageFolderDataset(work / "faces", sortedFerClasses, [](std::size_t k) { return int(k) + 1; });
    const ProcessResult evaluated = train({"evaluate", "fer-mini-xception", "--dataset",
                                           "folder:" + (work / "faces").string(), "--threads", "1"},
                                          work);
    ASSERT_EQ(evaluated.exitCode, 0) << evaluated.err;
    for (std::size_t k = 0; k < sortedFerClasses.size(); ++k)
        EXPECT_EQ(supportInTable(evaluated.out, sortedFerClasses[k]), int(k) + 1)
            << sortedFerClasses[k] << " in:\n" << evaluated.out;

    std::vector<std::string> otherClasses = sortedFerClasses;
    otherClasses[3] = "Joy";
    writeImageFolderDataset(work / "other", otherClasses, [](std::size_t) { return 1; });
    const ProcessResult refused = train({"evaluate", "fer-mini-xception", "--dataset",
                                         "folder:" + (work / "other").string(), "--threads", "1"},
                                        work);
    EXPECT_EQ(refused.exitCode, 1);
    EXPECT_NE(refused.err.find("class 'Joy' is not one of the model's classes"), std::string::npos) << refused.err;
}

#endif

// One training run checked three ways (ctest runs every test in its own process, so a shared
// fixture would train once per test).
TEST(CnnstudioTrain, LeNetReachesEightyPercentInUnderTwoMinutesAndItsModelEvaluatesAndPredicts) {
    if (!std::filesystem::exists(kFashionMnist))
        GTEST_SKIP() << kFashionMnist << " is absent: install the dataset-fashion-mnist package";
    const auto work = scratchFolder("lenet5");
    const auto runDir = work / "run";
    const ProcessResult trained =
        train({"--preset", "lenet5", "--dataset", "fashion-mnist", "--limit", "6000", "--epochs", "2", "--backend",
               "cpu", "--threads", "2", "--batch", "32", "--lr", "0.002", "--run-dir", runDir.string()},
              work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    const nlohmann::json finished = lastEventNamed(runDir, "finished");
    ASSERT_TRUE(finished.is_object()) << "no finished event";
    EXPECT_EQ(finished["reason"], "completed");
    ASSERT_TRUE(finished["test_accuracy"].is_number());
    EXPECT_GE(finished["test_accuracy"].get<double>(), 0.80);
    EXPECT_LT(trained.seconds, 120.0);
    EXPECT_NE(trained.out.find("TEST ACCURACY"), std::string::npos) << trained.out;
    EXPECT_EQ(readEventObjects(runDir).front()["event"], "run_started");
    for (const char* file : {"spec.json", "config.json", "checkpoints/latest/weights.safetensors",
                             "checkpoints/best/optimizer.safetensors", "model/model.safetensors", "model/spec.json",
                             "model/model.json"})
        EXPECT_TRUE(std::filesystem::exists(runDir / file)) << file;

    // evaluate reproduces the test accuracy from the run folder alone.
    const ProcessResult evaluated = train({"evaluate", runDir.string(), "--threads", "2"}, work);
    ASSERT_EQ(evaluated.exitCode, 0) << evaluated.err;
    char expected[64];
    std::snprintf(expected, sizeof expected, "accuracy %.2f%% on 10000 test images",
                  100.0 * finished["test_accuracy"].get<double>());
    EXPECT_NE(evaluated.out.find(expected), std::string::npos) << evaluated.out;
    EXPECT_NE(evaluated.out.find("confusion matrix"), std::string::npos);
    EXPECT_NE(evaluated.out.find("Ankle boot"), std::string::npos);

#ifdef CNNSTUDIO_HAVE_OPENCV
    // predict shows the top three classes of an image file, resized on the way in.
    const auto image = work / "stripe.pgm";
    writePgm(image, 40, 40);
    const ProcessResult predicted = train({"predict", (runDir / "model").string(), image.string()}, work);
    ASSERT_EQ(predicted.exitCode, 0) << predicted.err;
    EXPECT_EQ(std::count(predicted.out.begin(), predicted.out.end(), '%'), 3) << predicted.out;
    const ProcessResult unreadable = train({"predict", runDir.string(), (runDir / "spec.json").string()}, work);
    EXPECT_EQ(unreadable.exitCode, 1);
    EXPECT_NE(unreadable.err.find("cannot read the image"), std::string::npos) << unreadable.err;
    // A damaged DICOM file named .png: Debian's OpenCV would hand it to GDCM, whose assertion
    // ended the process; predict reads images as image folders do and refuses it.
    const auto dicom = work / "scan.png";
    std::ofstream(dicom, std::ios::binary) << std::string(128, '\xff') << "DICMP`";
    const ProcessResult refused = train({"predict", (runDir / "model").string(), dicom.string()}, work);
    EXPECT_EQ(refused.exitCode, 1) << refused.err;
    EXPECT_NE(refused.err.find("a DICOM file"), std::string::npos) << refused.err;
#endif
}

// The Train page's predicted run time goes into config.json (and so into run_started), where
// the finished run is shown beside it.
TEST(CnnstudioTrain, ThePredictionIsRecordedInTheRunsConfig) {
    if (!std::filesystem::exists(kFashionMnist))
        GTEST_SKIP() << kFashionMnist << " is absent: install the dataset-fashion-mnist package";
    const auto work = scratchFolder("prediction");
    const auto runDir = work / "run";
    const ProcessResult trained =
        train({"--preset", "lenet5", "--dataset", "fashion-mnist", "--limit", "256", "--epochs", "1", "--backend", "cpu",
               "--threads", "1", "--batch", "64", "--predicted-epoch-s", "12.5", "--predicted-total-s", "12.5",
               "--prediction-basis", "'cpu 1 thread' in sweep.json", "--run-dir", runDir.string()},
              work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    std::ifstream configFile(runDir / "config.json");
    const nlohmann::json config = nlohmann::json::parse(configFile);
    ASSERT_TRUE(config.contains("prediction")) << config.dump();
    EXPECT_EQ(config["prediction"]["total_s"], 12.5);
    EXPECT_EQ(config["prediction"]["basis"], "'cpu 1 thread' in sweep.json");
    EXPECT_EQ(readEventObjects(runDir).front()["config"]["prediction"]["epoch_s"], 12.5);
    const ProcessResult lonely = train({"--preset", "lenet5", "--predicted-total-s", "3", "--summary"}, work);
    EXPECT_EQ(lonely.exitCode, 2) << "a total without an epoch time is refused";
}

TEST(CnnstudioTrain, SigtermStopsAfterTheCurrentStepAndResumeFinishesTheRun) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("stop-resume");
    const auto runDir = work / "run";
    const pid_t pid = startProcess({kTrainProgram, "--preset", "lenet5", "--limit", "2000", "--epochs", "1", "--threads", "1",
                                    "--log-every", "1", "--run-dir", runDir.string()},
                                   work.string(), kQuietOpenMp);
    // Stop once training is under way (the first step event).
    for (int wait = 0; wait < 600 && !lastEventNamed(runDir, "step").is_object(); ++wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    const ProcessResult stopped = waitProcess(pid, work.string());
    const nlohmann::json finished = lastEventNamed(runDir, "finished");
    ASSERT_TRUE(finished.is_object()) << stopped.err;
    if (finished["reason"] == "completed") GTEST_SKIP() << "the run finished before the signal arrived";
    EXPECT_EQ(finished["reason"], "stopped");
    EXPECT_EQ(stopped.exitCode, 3) << "a stopped run exits 3, not 0 like a finished one: " << stopped.err;
    EXPECT_TRUE(std::filesystem::exists(runDir / "checkpoints/latest/progress.json"));
    const std::int64_t stoppedAt = lastEventNamed(runDir, "checkpoint")["step"].get<std::int64_t>();

    const ProcessResult resumed = train({"--resume", runDir.string()}, work);
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    EXPECT_EQ(lastEventNamed(runDir, "run_started")["resumed_from_step"], stoppedAt);
    EXPECT_EQ(lastEventNamed(runDir, "finished")["reason"], "completed");
    EXPECT_TRUE(std::filesystem::exists(runDir / "model/model.safetensors"));
}

// `cnnstudio-train ... | head -3`: SIGPIPE used to kill the run with no checkpoint and no end
// event. The progress display and `--events -` are lost; the run trains on into its folder.
TEST(CnnstudioTrain, AClosedStdoutDoesNotStopTheRun) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("closed-stdout");
    const auto runDir = work / "run";
    const ProcessResult trained = runProcessWithStdoutClosed(
        {kTrainProgram, "--preset", "lenet5", "--limit", "256", "--epochs", "1", "--threads", "1", "--log-every", "1",
         "--events", "-", "--run-dir", runDir.string()},
        work.string(), kQuietOpenMp);
    EXPECT_EQ(trained.exitCode, 0) << trained.err;
    EXPECT_EQ(lastEventNamed(runDir, "finished")["reason"], "completed");
    EXPECT_TRUE(std::filesystem::exists(runDir / "model/model.safetensors"));
}

// --events appends its lines to the file it names: onto the data set, the next run read JSON as
// CSV rows. Refused before the run folder is made, naming both options.
TEST(CnnstudioTrain, EventsOntoTheDataSetAreRefused) {
    const auto work = scratchFolder("events-onto-dataset");
    const auto csv = work / "faces.csv";
    std::ofstream(csv) << "emotion,pixels,Usage\n";
    const ProcessResult refused = train({"--preset", "lenet5", "--dataset", "fer2013:" + csv.string(), "--events",
                                         (work / "." / "faces.csv").string(), "--run-dir", (work / "run").string()},
                                        work);
    EXPECT_EQ(refused.exitCode, 1);
    EXPECT_NE(refused.err.find("--events"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("is the same file as --dataset"), std::string::npos) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(work / "run"));
    std::ifstream stream(csv);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(stream), {}), "emotion,pixels,Usage\n");
}

// On --resume the data set is the run's own, from its config.json.
TEST(CnnstudioTrain, ResumedEventsOntoTheRunsDataSetAreRefused) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("resume-events-onto-dataset");
    const auto runDir = work / "run";
    const ProcessResult trained = train({"--preset", "lenet5", "--limit", "256", "--epochs", "1", "--threads", "1",
                                         "--run-dir", runDir.string()},
                                        work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    // The run's data set, as its config.json records it, made a file of this test's.
    const auto csv = work / "faces.csv";
    std::ofstream(csv) << "emotion,pixels,Usage\n";
    nlohmann::json config = nlohmann::json::parse(std::ifstream(runDir / "config.json"));
    config["dataset"] = "fer2013:" + csv.string();
    std::ofstream(runDir / "config.json") << config.dump();

    const ProcessResult resumed = train({"--resume", runDir.string(), "--events", csv.string()}, work);
    EXPECT_EQ(resumed.exitCode, 1);
    EXPECT_NE(resumed.err.find("is the same file as --dataset"), std::string::npos) << resumed.err;
    std::ifstream stream(csv);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(stream), {}), "emotion,pixels,Usage\n");
}

// A damaged config.json asking for 100000 threads crashed libgomp (SIGSEGV) on --resume.
TEST(CnnstudioTrain, ResumeRefusesAThreadCountBeyondTheMaximum) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("resume-threads");
    const auto runDir = work / "run";
    const ProcessResult trained = train({"--preset", "lenet5", "--limit", "256", "--epochs", "1", "--threads", "1",
                                         "--run-dir", runDir.string()},
                                        work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    nlohmann::json config = nlohmann::json::parse(std::ifstream(runDir / "config.json"));
    config["threads"] = 100000;
    std::ofstream(runDir / "config.json") << config.dump();

    const ProcessResult resumed = train({"--resume", runDir.string()}, work);
    EXPECT_EQ(resumed.exitCode, 1) << resumed.err;
    EXPECT_NE(resumed.err.find("config.json: threads 100000 is out of range 0..4096"), std::string::npos)
        << resumed.err;
}

// A config.json limit of -1 wrapped round to all the data; a zero stddev trained on infinities
// and ended in 'loss became NaN'. Both are refused naming config.json.
TEST(CnnstudioTrain, ResumeRefusesANegativeLimitOrAZeroStddev) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("resume-damaged-config");
    const auto runDir = work / "run";
    const ProcessResult trained = train({"--preset", "lenet5", "--limit", "256", "--epochs", "1", "--threads", "1",
                                         "--run-dir", runDir.string()},
                                        work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    const nlohmann::json original = nlohmann::json::parse(std::ifstream(runDir / "config.json"));
    auto resumeWith = [&](const std::function<void(nlohmann::json&)>& damage) {
        nlohmann::json config = original;
        damage(config);
        std::ofstream(runDir / "config.json") << config.dump();
        return train({"--resume", runDir.string()}, work);
    };
    const ProcessResult negativeLimit = resumeWith([](nlohmann::json& config) { config["limit"] = -1; });
    EXPECT_EQ(negativeLimit.exitCode, 1);
    EXPECT_NE(negativeLimit.err.find("config.json: limit -1 is not a count of images"), std::string::npos)
        << negativeLimit.err;
    const ProcessResult zeroStddev =
        resumeWith([](nlohmann::json& config) { config["normalization"] = {{"mean", {0.5}}, {"stddev", {0.0}}}; });
    EXPECT_EQ(zeroStddev.exitCode, 1);
    EXPECT_NE(zeroStddev.err.find("config.json: a normalization stddev is not positive"), std::string::npos)
        << zeroStddev.err;
}

// progress.json saying epoch 1000 of a 1-epoch run was finalised: 'finished after 1000 epochs'
// with the checkpoint's weights saved as the model.
TEST(CnnstudioTrain, ResumeRefusesACheckpointBeyondTheRunsEpochs) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("resume-beyond-epochs");
    const auto runDir = work / "run";
    const ProcessResult trained = train({"--preset", "lenet5", "--limit", "256", "--epochs", "1", "--threads", "1",
                                         "--run-dir", runDir.string()},
                                        work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    const auto progressFile = runDir / "checkpoints/latest/progress.json";
    nlohmann::json progress = nlohmann::json::parse(std::ifstream(progressFile));
    progress["epoch"] = 1000;
    std::ofstream(progressFile) << progress.dump();

    const ProcessResult resumed = train({"--resume", runDir.string()}, work);
    EXPECT_EQ(resumed.exitCode, 1) << resumed.err;
    EXPECT_NE(resumed.err.find("of epoch 1001 but the run has 1 epoch(s)"), std::string::npos) << resumed.err;
}

// The stop signals reach one thread of a training process, the one that waits for them (a
// thread in sigwait shows them unblocked); every other thread blocks them, so none is delivered
// to a thread computing in oneDNN, whose JIT GEMM points its stack pointer into the heap (oneDNN
// issue #4845; a rank interrupted there crashed, CI 2026-12-04).
TEST(CnnstudioTrain, StopSignalsReachOnlyTheThreadThatWaitsForThem) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("signal-mask");
    const auto runDir = work / "run";
    const pid_t pid = startProcess({kTrainProgram, "--preset", "lenet5", "--limit", "2000", "--epochs", "1",
                                    "--threads", "2", "--log-every", "1", "--run-dir", runDir.string()},
                                   work.string(), kQuietOpenMp);
    for (int wait = 0; wait < 600 && !lastEventNamed(runDir, "step").is_object(); ++wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const SignalTakers takers = threadsTakingSignals(pid, {SIGINT, SIGTERM, SIGUSR1});
    EXPECT_GE(takers.threads, 3) << "the main thread, the stop-signal thread and an OpenMP worker";
    EXPECT_EQ(takers.taking, 1) << "of " << takers.threads << " threads";
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    const ProcessResult stopped = waitProcess(pid, work.string());
    EXPECT_TRUE(stopped.exitCode == 3 || stopped.exitCode == 0) << stopped.err;
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
    // Checked before the run folder is made (issue 16): no empty run folder, no failed event.
    EXPECT_FALSE(std::filesystem::exists(work / "run"));
}

// Each Dense within its own limits, 4.3 G parameters together: more than one tensor's int sizes
// hold. Refused by --summary and by training, naming the layer that crosses the limit.
TEST(CnnstudioTrain, ParameterTotalBeyondTheLimitIsRefusedNamingTheLayer) {
    const auto work = scratchFolder("huge-parameter-total");
    std::ofstream(work / "huge.json") << R"({"format": "cnnstudio-network", "version": 1, "name": "huge",
      "nodes": [
        {"name": "input", "type": "Input", "params": {"channels": 1, "height": 28, "width": 28}},
        {"name": "flatten", "type": "Flatten", "inputs": ["input"]},
        {"name": "fc1", "type": "Dense", "inputs": ["flatten"], "params": {"units": 65536}},
        {"name": "fc2", "type": "Dense", "inputs": ["fc1"], "params": {"units": 65536}},
        {"name": "logits", "type": "Dense", "inputs": ["fc2"], "params": {"units": 10}}]})";
    const ProcessResult summary = train({"--spec", (work / "huge.json").string(), "--summary"}, work);
    EXPECT_EQ(summary.exitCode, 1);
    EXPECT_NE(summary.out.find("node 'fc2'"), std::string::npos) << summary.out;
    EXPECT_NE(summary.out.find("2147483647 (2^31 - 1)"), std::string::npos) << summary.out;

    const ProcessResult trained = train({"--spec", (work / "huge.json").string(), "--epochs", "1", "--threads", "1",
                                         "--run-dir", (work / "run").string()},
                                        work);
    EXPECT_EQ(trained.exitCode, 1);
    EXPECT_NE(trained.err.find("node 'fc2'"), std::string::npos) << trained.err;
}

// Linux lets a process allocate more than the machine has and kills it when it touches the
// pages: a batch beyond the memory is refused before the first step, naming one that fits.
TEST(CnnstudioTrain, ABatchBeyondTheMachinesMemoryIsRefusedNamingOneThatFits) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("beyond-memory");
    // 512 channels of 28x28 per image: about 3 MiB of activations and gradients each, so 65536
    // images need about 200 GiB.
    std::ofstream(work / "wide.json") << R"({"format": "cnnstudio-network", "version": 1, "name": "wide",
      "nodes": [
        {"name": "input", "type": "Input", "params": {"channels": 1, "height": 28, "width": 28}},
        {"name": "conv", "type": "Conv2D", "inputs": ["input"], "params": {"filters": 512, "kernel": 3, "padding": "same"}},
        {"name": "pool", "type": "GlobalAvgPool", "inputs": ["conv"]},
        {"name": "logits", "type": "Dense", "inputs": ["pool"], "params": {"units": 10}}]})";
    const ProcessResult refused = train({"--spec", (work / "wide.json").string(), "--limit", "256", "--epochs", "1",
                                         "--threads", "1", "--batch", "65536", "--run-dir", (work / "run").string()},
                                        work);
    EXPECT_EQ(refused.exitCode, 1) << refused.err;
    EXPECT_NE(refused.err.find("backend 'cpu'"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("batch 65536 needs about "), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("use --batch "), std::string::npos) << refused.err;
}

// `backends` says what runs here and in which precisions: cpu-ref everywhere, in fp32 only.
TEST(CnnstudioTrain, BackendsListsThePrecisionsEachAvailableBackendTrainsIn) {
    const auto work = scratchFolder("backends");
    const ProcessResult listed = train({"backends"}, work);
    ASSERT_EQ(listed.exitCode, 0) << listed.err;
    EXPECT_NE(listed.out.find("cpu-ref  available: fp32\n"), std::string::npos) << listed.out;
    EXPECT_NE(listed.out.find("cpu      available: fp32"), std::string::npos) << listed.out;
}

// A cycle is the error given (not the second output it makes of the cut-off Input), with the
// spec file named.
TEST(CnnstudioTrain, CycleInASpecFileNamesTheFileAndTheCycle) {
    const auto work = scratchFolder("cycle");
    std::ofstream(work / "cycle.json") << R"({"format": "cnnstudio-network", "version": 1, "name": "cycle",
      "nodes": [
        {"name": "input", "type": "Input", "params": {"channels": 1, "height": 28, "width": 28}},
        {"name": "conv", "type": "Conv2D", "inputs": ["relu"], "params": {"filters": 4, "kernel": 3}},
        {"name": "relu", "type": "ReLU", "inputs": ["conv"]},
        {"name": "flatten", "type": "Flatten", "inputs": ["relu"]},
        {"name": "logits", "type": "Dense", "inputs": ["flatten"], "params": {"units": 10}}]})";
    const ProcessResult result =
        train({"--spec", (work / "cycle.json").string(), "--run-dir", (work / "run").string()}, work);
    EXPECT_EQ(result.exitCode, 1);
    EXPECT_NE(result.err.find("cycle.json: node '"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("part of a cycle"), std::string::npos) << result.err;
}

// A run refused before it began (here a data set path with a typo) records its failure in the
// folder, and the corrected command may then train into the same --run-dir: it trained nothing.
TEST(CnnstudioTrain, TheRunDirOfARunThatFailedBeforeItBeganCanBeTrainedInto) {
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("failed-before-begun");
    const auto runDir = work / "run";
    const std::vector<std::string> lenet = {"--preset", "lenet5", "--limit", "256", "--epochs", "1", "--threads", "1",
                                            "--run-dir", runDir.string()};
    auto withDataset = [&lenet](const std::string& dataset) {
        std::vector<std::string> arguments = lenet;
        arguments.insert(arguments.end(), {"--dataset", dataset});
        return arguments;
    };
    const ProcessResult typo = train(withDataset("idx:" + (work / "no-such-folder").string()), work);
    ASSERT_EQ(typo.exitCode, 1) << typo.err;
    ASSERT_EQ(lastEventNamed(runDir, "failed")["step"], 0) << "the refusal is recorded in the run folder";

    const ProcessResult corrected = train(withDataset("fashion-mnist"), work);
    ASSERT_EQ(corrected.exitCode, 0) << corrected.err;
    EXPECT_EQ(lastEventNamed(runDir, "finished")["reason"], "completed");
    EXPECT_TRUE(lastEventNamed(runDir, "failed").is_null()) << "the new run's record starts clean";

    const ProcessResult again = train(withDataset("fashion-mnist"), work);
    EXPECT_EQ(again.exitCode, 1) << "a run that trained is never replaced";
    EXPECT_NE(again.err.find("holds files already"), std::string::npos) << again.err;
    EXPECT_EQ(lastEventNamed(runDir, "finished")["reason"], "completed");
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

// ---- distributed runs: cnnstudio-train re-runs itself under mpirun -------------------------

// OpenMPI refuses root unless told (CI runs as root); CPU ranks share CI's two cores.
const std::vector<std::string> kMpiEnvironment = {"OMP_WAIT_POLICY=passive", "OMPI_ALLOW_RUN_AS_ROOT=1",
                                                  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                                  "OMPI_MCA_rmaps_base_oversubscribe=1"};

ProcessResult trainWithMpi(std::vector<std::string> arguments, const std::filesystem::path& work) {
    arguments.insert(arguments.begin(), kTrainProgram);
    return runProcess(arguments, work.string(), kMpiEnvironment);
}

TEST(CnnstudioTrainDistributed, DryRunPrintsTheMpirunCommandWithOneProcessPerRank) {
    if (!mpirunOnPath()) GTEST_SKIP() << "mpirun is not on the PATH (install openmpi-bin)";
    const auto work = scratchFolder("dry-run");
    const ProcessResult result =
        trainWithMpi({"--preset", "lenet5", "--ranks", "2", "--dry-run", "--run-dir", "run"}, work);
    ASSERT_EQ(result.exitCode, 0) << result.err;
    EXPECT_NE(result.out.find("mpirun -np 2 "), std::string::npos) << result.out;
    const std::string absoluteRunDir = std::filesystem::absolute("run").string();  // the worker's folder too
    EXPECT_NE(result.out.find(kTrainProgram + " --preset lenet5 --run-dir " + absoluteRunDir), std::string::npos)
        << "the ranks get the worker's arguments, the run folder made absolute: " << result.out;
    EXPECT_EQ(result.out.find("--ranks"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("--dry-run"), std::string::npos) << result.out;
    EXPECT_FALSE(std::filesystem::exists(absoluteRunDir)) << "a dry run writes nothing";
}

TEST(CnnstudioTrainDistributed, BadHostfileLineIsNamedWithFileAndLine) {
    if (!mpirunOnPath()) GTEST_SKIP() << "mpirun is not on the PATH (install openmpi-bin)";
    const auto work = scratchFolder("bad-hostfile");
    const auto hostfile = work / "hosts";
    std::ofstream(hostfile) << "# two machines\nnode-a slots=1\nnode-b slots=one\n";
    const ProcessResult result = trainWithMpi(
        {"--preset", "lenet5", "--nodes", "2", "--hostfile", hostfile.string(), "--dry-run"}, work);
    EXPECT_TRUE(result.exitCode == 1 || result.exitCode == 2) << result.exitCode;
    EXPECT_NE(result.err.find(hostfile.string() + ":3"), std::string::npos) << result.err;
}

// Found by tests/fuzz/hostfile_fuzz: a slot count past int ended the worker with an uncaught
// std::out_of_range (abort) instead of naming the line.
TEST(CnnstudioTrainDistributed, HugeSlotCountIsNamedWithFileAndLine) {
    if (!mpirunOnPath()) GTEST_SKIP() << "mpirun is not on the PATH (install openmpi-bin)";
    const auto work = scratchFolder("huge-slots");
    const auto hostfile = work / "hosts";
    std::ofstream(hostfile) << "10.0.0.1\n10.0.0.2 slots=299999999999\n";
    const ProcessResult result = trainWithMpi(
        {"--preset", "lenet5", "--nodes", "2", "--hostfile", hostfile.string(), "--dry-run"}, work);
    EXPECT_EQ(result.exitCode, 1) << result.err;
    EXPECT_NE(result.err.find(hostfile.string() + ":2"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("slots must be from 1 to 65536, not 299999999999"), std::string::npos) << result.err;
}

TEST(CnnstudioTrainDistributed, MissingMpirunAndWrongRankKindSayWhatToDo) {
    const auto work = scratchFolder("no-mpirun");
    std::vector<std::string> environment = kMpiEnvironment;
    environment.push_back("PATH=" + (work / "empty").string());
    const ProcessResult noMpirun =
        runProcess({kTrainProgram, "--preset", "lenet5", "--ranks", "2", "--dry-run"}, work.string(), environment);
    EXPECT_EQ(noMpirun.exitCode, 1);
    EXPECT_NE(noMpirun.err.find("mpirun was not found"), std::string::npos) << noMpirun.err;

    const ProcessResult gpusOnCpu = trainWithMpi({"--preset", "lenet5", "--gpus", "2", "--backend", "cpu", "--dry-run"}, work);
    EXPECT_EQ(gpusOnCpu.exitCode, 1);
    EXPECT_NE(gpusOnCpu.err.find("--ranks"), std::string::npos) << gpusOnCpu.err;
}

TEST(CnnstudioTrainDistributed, TwoCpuRanksTrainLeNetAndOnlyRankZeroWritesEvents) {
    if (const std::string why = whyRanksCannotRun(); !why.empty()) GTEST_SKIP() << why;
    if (!std::filesystem::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is absent";
    const auto work = scratchFolder("two-ranks");
    const auto runDir = work / "run";
    const ProcessResult trained =
        trainWithMpi({"--preset", "lenet5", "--ranks", "2", "--limit", "2000", "--epochs", "1", "--backend", "cpu",
                      "--threads", "1", "--batch", "32", "--run-dir", runDir.string()},
                     work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    const std::vector<nlohmann::json> events = readEventObjects(runDir);
    EXPECT_EQ(std::count_if(events.begin(), events.end(), [](const auto& e) { return e["event"] == "run_started"; }), 1);
    EXPECT_EQ(std::count_if(events.begin(), events.end(), [](const auto& e) { return e["event"] == "finished"; }), 1);
    EXPECT_EQ(lastEventNamed(runDir, "run_started")["ranks"], 2);
    const nlohmann::json finished = lastEventNamed(runDir, "finished");
    EXPECT_EQ(finished["reason"], "completed");
    ASSERT_TRUE(finished["test_accuracy"].is_number()) << finished.dump();
    EXPECT_GT(finished["test_accuracy"].get<double>(), 0.3);
    std::int64_t tested = 0;  // the ranks' test shards together cover the whole test split
    for (const auto& row : finished["test_confusion_matrix"])
        for (const auto& count : row) tested += count.get<std::int64_t>();
    EXPECT_EQ(tested, 10000);
    EXPECT_TRUE(std::filesystem::exists(runDir / "model/model.safetensors"));
}

}  // namespace
}  // namespace cnnstudio::e2e
