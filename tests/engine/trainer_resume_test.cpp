// Resuming a run continues exactly where it stopped: on cpu-ref with a fixed seed, training
// straight through and training, stopping, and resuming in a new Network and Trainer (as a new
// process would) end with bit-identical weights, optimiser state and batch-norm statistics.
#include <atomic>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/events.h"
#include "cnnstudio/network.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/safetensors.h"
#include "cnnstudio/trainer.h"
#include "synthetic_batches.h"

namespace cnnstudio {
namespace {

using testing::InMemoryBatchSource;
using testing::SyntheticImages;

constexpr std::uint64_t kSeed = 7;
constexpr int kBatch = 8;

TrainerConfig resumeConfig(const std::string& optimizer) {
    TrainerConfig config;
    config.epochs = 2;
    config.seed = kSeed;
    config.logEvery = 5;
    config.optimizer.kind = optimizer;
    config.optimizer.learningRate = optimizer == "sgd" ? 0.05f : 0.005f;
    config.optimizer.momentum = 0.9f;
    config.optimizer.weightDecay = 1e-4f;
    config.schedule.kind = "cosine";  // depends on the step count and the epoch count
    config.schedule.warmupEpochs = 1;
    config.loss.labelSmoothing = 0.1f;
    return config;
}

struct Session {
    TrainingResult result;
    std::vector<float> parameters, state;
};

// One "process": a fresh backend, network and trainer on `folder`; stops once the training
// source has handed out batch `stopAfterBatch` of epoch `stopEpoch` (never when stopEpoch < 0).
Session runSession(const RunFolder& folder, const TrainerConfig& config, const SyntheticImages& train,
                   const SyntheticImages& validation, bool resume, int stopEpoch, std::int64_t stopAfterBatch) {
    auto backend = createBackend("cpu-ref");
    Network network(testing::tinyNetworkSpec(), *backend, kBatch, config.seed);
    EventWriter events;
    events.addFile(folder.eventsFile());
    Trainer trainer(network, config, events);
    trainer.setRunFolder(&folder);
    std::atomic<bool> stop{false};
    trainer.setStopFlag(&stop);
    if (resume) trainer.resume();

    InMemoryBatchSource trainSource(train, kBatch, true, config.seed);
    InMemoryBatchSource validationSource(validation, kBatch, false, config.seed);
    trainSource.onBatch = [&](int epoch, std::int64_t delivered) {
        if (epoch == stopEpoch && delivered == stopAfterBatch) stop = true;
    };
    RunDescription description;
    description.dataset = testing::describe(train, validation);
    Session session;
    session.result = trainer.train(trainSource, &validationSource, nullptr, description);
    session.parameters.assign(network.parameters(), network.parameters() + network.parameterCount());
    session.state.assign(network.state(), network.state() + network.stateCount());
    return session;
}

void expectSameTensors(const std::filesystem::path& a, const std::filesystem::path& b) {
    SCOPED_TRACE(a.string() + " vs " + b.string());
    const SafetensorsContents left = readSafetensors(a), right = readSafetensors(b);
    ASSERT_EQ(left.tensors.size(), right.tensors.size());
    for (std::size_t i = 0; i < left.tensors.size(); ++i) {
        EXPECT_EQ(left.tensors[i].name, right.tensors[i].name);
        ASSERT_EQ(left.tensors[i].values.size(), right.tensors[i].values.size());
        EXPECT_EQ(0, std::memcmp(left.tensors[i].values.data(), right.tensors[i].values.data(),
                                 left.tensors[i].values.size() * sizeof(float)))
            << "tensor " << left.tensors[i].name << " differs";
    }
}

void expectResumeMatchesStraightRun(const std::string& optimizer, int stopEpoch, std::int64_t stopAfterBatch) {
    SCOPED_TRACE("seed " + std::to_string(kSeed) + ", " + optimizer + ", stop in epoch " +
                 std::to_string(stopEpoch + 1) + " after batch " + std::to_string(stopAfterBatch));
    const SyntheticImages train = testing::makeSyntheticImages(100, kSeed);  // 12 batches, 4 left over
    const SyntheticImages validation = testing::makeSyntheticImages(30, kSeed + 1);
    const TrainerConfig config = resumeConfig(optimizer);

    const RunFolder straight = RunFolder::create(testing::freshFolder("-straight"));
    const Session whole = runSession(straight, config, train, validation, false, -1, 0);
    ASSERT_EQ(whole.result.reason, "completed");

    const RunFolder interrupted = RunFolder::create(testing::freshFolder("-resumed"));
    const Session first = runSession(interrupted, config, train, validation, false, stopEpoch, stopAfterBatch);
    ASSERT_EQ(first.result.reason, "stopped");
    const Session second = runSession(interrupted, config, train, validation, true, -1, 0);
    ASSERT_EQ(second.result.reason, "completed");
    EXPECT_EQ(second.result.steps, whole.result.steps);

    // The final weights live in checkpoints/latest; the network ends on the best weights.
    for (const char* file : {"weights.safetensors", "optimizer.safetensors"})
        expectSameTensors(straight.checkpointFolder("latest") / file, interrupted.checkpointFolder("latest") / file);
    expectSameTensors(straight.checkpointFolder("best") / "weights.safetensors",
                      interrupted.checkpointFolder("best") / "weights.safetensors");
    // The progress too (schedule state, best accuracy, counters), all but the clock times.
    auto progressOf = [](const RunFolder& folder) {
        std::ifstream stream(folder.checkpointFolder("latest") / "progress.json");
        auto progress = nlohmann::json::parse(stream);
        for (const char* clock : {"wall_time_s", "epoch_time_s", "seconds_to_target"}) progress.erase(clock);
        return progress;
    };
    EXPECT_EQ(progressOf(straight), progressOf(interrupted));
    EXPECT_EQ(whole.parameters, second.parameters);
    EXPECT_EQ(whole.state, second.state);
    EXPECT_EQ(whole.result.bestEpoch, second.result.bestEpoch);
    EXPECT_EQ(whole.result.bestValidationAccuracy, second.result.bestValidationAccuracy);
}

TEST(TrainerResume, ResumeGivesIdenticalWeights) {
    // Stopped as epoch 2 begins: 1 epoch, resume, 1 epoch.
    expectResumeMatchesStraightRun("sgd", 0, 12);
}

TEST(TrainerResume, ResumeMidEpochGivesIdenticalWeights) {
    expectResumeMatchesStraightRun("sgd", 1, 5);
}

TEST(TrainerResume, ResumeWithAdamGivesIdenticalWeights) {
    expectResumeMatchesStraightRun("adamw", 0, 7);
}

TEST(TrainerResume, ResumeKeepsThePlateauScheduleState) {
    // Validation labels that cannot be learned: the validation loss rises as the network grows
    // confident, so the plateau schedule decays after epoch 2 - but only if the resumed run
    // remembers epoch 1's loss.
    SyntheticImages validation = testing::makeSyntheticImages(30, kSeed + 1);
    std::mt19937 random(kSeed);
    for (auto& label : validation.labels) label = std::int32_t(random() % 3);
    const SyntheticImages train = testing::makeSyntheticImages(100, kSeed);
    TrainerConfig config = resumeConfig("sgd");
    config.epochs = 3;
    config.schedule.kind = "plateau";
    config.schedule.warmupEpochs = 0;
    config.schedule.patience = 1;
    config.schedule.gamma = 0.5f;

    const RunFolder straight = RunFolder::create(testing::freshFolder("-straight"));
    const Session whole = runSession(straight, config, train, validation, false, -1, 0);
    const RunFolder interrupted = RunFolder::create(testing::freshFolder("-resumed"));
    runSession(interrupted, config, train, validation, false, 1, 4);  // stopped in epoch 2
    const Session second = runSession(interrupted, config, train, validation, true, -1, 0);

    auto scheduleOf = [](const RunFolder& folder) {
        std::ifstream stream(folder.checkpointFolder("latest") / "progress.json");
        return nlohmann::json::parse(stream)["schedule"];
    };
    ASSERT_LT(scheduleOf(straight)["plateau_scale"].get<float>(), 1.0f) << "the test needs a decay to happen";
    EXPECT_EQ(scheduleOf(straight), scheduleOf(interrupted));
    expectSameTensors(straight.checkpointFolder("latest") / "weights.safetensors",
                      interrupted.checkpointFolder("latest") / "weights.safetensors");
}

TEST(TrainerResume, StoppedRunWritesLatestCheckpointAndStoppedEvent) {
    const SyntheticImages train = testing::makeSyntheticImages(100, kSeed);
    const SyntheticImages validation = testing::makeSyntheticImages(30, kSeed + 1);
    const RunFolder folder = RunFolder::create(testing::freshFolder());
    const Session stopped = runSession(folder, resumeConfig("sgd"), train, validation, false, 0, 3);
    EXPECT_EQ(stopped.result.reason, "stopped");
    EXPECT_EQ(stopped.result.steps, 3);
    EXPECT_TRUE(checkpointExists(folder.checkpointFolder("latest")));
    EXPECT_FALSE(std::filesystem::exists(folder.modelFolder()));

    std::ifstream events(folder.eventsFile());
    std::string line, last;
    while (std::getline(events, line)) last = line;
    const auto finished = nlohmann::json::parse(last);
    EXPECT_EQ(finished["event"], "finished");
    EXPECT_EQ(finished["reason"], "stopped");
    EXPECT_TRUE(finished["test_accuracy"].is_null());
}

TEST(TrainerResume, ResumingAFinishedRunAsksForMoreEpochs) {
    const SyntheticImages train = testing::makeSyntheticImages(40, kSeed);
    const SyntheticImages validation = testing::makeSyntheticImages(10, kSeed + 1);
    TrainerConfig config = resumeConfig("sgd");
    config.epochs = 1;
    const RunFolder folder = RunFolder::create(testing::freshFolder());
    runSession(folder, config, train, validation, false, -1, 0);
    try {
        runSession(folder, config, train, validation, true, -1, 0);
        FAIL() << "resuming a finished run should fail";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("finished its 1 epochs"), std::string::npos) << error.what();
    }
    config.epochs = 2;  // asking for more continues it
    EXPECT_EQ(runSession(folder, config, train, validation, true, -1, 0).result.epochsRun, 2);
}

}  // namespace
}  // namespace cnnstudio
