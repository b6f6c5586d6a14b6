// The trainer on cpu-ref with tiny synthetic data: the events it writes, the final model folder,
// evaluation with a padded last batch, early stopping, the learning rates it uses, and the
// errors for a non-finite loss and for bad batches.
#include <algorithm>
#include <cmath>
#include <functional>
#include <fstream>
#include <limits>
#include <regex>

#include <gtest/gtest.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/events.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/trainer.h"
#include "backend_test_support.h"
#include "synthetic_batches.h"

namespace cnnstudio {
namespace {

using testing::InMemoryBatchSource;
using testing::SyntheticImages;

constexpr std::uint64_t kSeed = 11;

// Removes the scratch folders of every test in this executable when they all passed (a failed
// run keeps them to look at).
class RemoveScratchFolders : public ::testing::Environment {
    void TearDown() override {
        if (!::testing::UnitTest::GetInstance()->Failed()) std::filesystem::remove_all(testing::scratchRoot());
    }
};
[[maybe_unused]] const ::testing::Environment* const kRemoveScratchFolders =
    ::testing::AddGlobalTestEnvironment(new RemoveScratchFolders);

std::vector<nlohmann::json> readEvents(const std::filesystem::path& file) {
    std::vector<nlohmann::json> events;
    std::ifstream stream(file);
    for (std::string line; std::getline(stream, line);) events.push_back(nlohmann::json::parse(line));
    return events;
}

std::vector<nlohmann::json> eventsNamed(const std::vector<nlohmann::json>& events, const std::string& name) {
    std::vector<nlohmann::json> matching;
    for (const auto& event : events)
        if (event["event"] == name) matching.push_back(event);
    return matching;
}

// input -> flatten -> dense: nothing (like a ReLU) can swallow a NaN on its way to the loss.
NetworkSpec linearSpec() {
    NetworkSpec spec = testing::tinyNetworkSpec();
    std::erase_if(spec.nodes, [](const NodeSpec& node) {
        return node.name != "input" && node.name != "flatten" && node.name != "logits";
    });
    spec.find("flatten")->inputs = {"input"};
    spec.find("logits")->inputs = {"flatten"};
    return spec;
}

NetworkSpec withoutBatchNorm(NetworkSpec spec) {
    std::erase_if(spec.nodes, [](const NodeSpec& node) { return node.name == "bn"; });
    spec.find("relu")->inputs = {"conv"};
    return spec;
}

// A source that hands out non-finite images at one batch of one epoch.
class PoisonedSource : public BatchSource {
public:
    PoisonedSource(BatchSource& inner, int epoch, std::int64_t batch) : inner_(inner), epoch_(epoch), batch_(batch) {}
    std::int64_t samples() const override { return inner_.samples(); }
    std::int64_t batchesPerEpoch() const override { return inner_.batchesPerEpoch(); }
    void startEpoch(int epoch, std::int64_t firstBatch) override {
        current_ = epoch;
        index_ = firstBatch;
        inner_.startEpoch(epoch, firstBatch);
    }
    bool next(Batch& batch) override {
        if (!inner_.next(batch)) return false;
        if (current_ == epoch_ && index_ == batch_)
            std::fill(batch.images.begin(), batch.images.end(), std::numeric_limits<float>::quiet_NaN());
        ++index_;
        return true;
    }

private:
    BatchSource& inner_;
    int epoch_, current_ = 0;
    std::int64_t batch_, index_ = 0;
};

// A source that adds a device augmentation (and, optionally, mixed labels) to every batch.
class AugmentingSource : public BatchSource {
public:
    AugmentingSource(BatchSource& inner, std::function<void(Batch&)> decorate)
        : inner_(inner), decorate_(std::move(decorate)) {}
    std::int64_t samples() const override { return inner_.samples(); }
    std::int64_t batchesPerEpoch() const override { return inner_.batchesPerEpoch(); }
    void startEpoch(int epoch, std::int64_t firstBatch) override { inner_.startEpoch(epoch, firstBatch); }
    bool next(Batch& batch) override {
        if (!inner_.next(batch)) return false;
        decorate_(batch);
        return true;
    }

private:
    BatchSource& inner_;
    std::function<void(Batch&)> decorate_;
};

struct Fixture {
    SyntheticImages train = testing::makeSyntheticImages(96, kSeed);
    SyntheticImages validation = testing::makeSyntheticImages(30, kSeed + 1);
    SyntheticImages test = testing::makeSyntheticImages(21, kSeed + 2);
    std::unique_ptr<Backend> backend = createBackend("cpu-ref");
    TrainerConfig config;
    RunDescription description;

    Fixture() {
        config.epochs = 3;
        config.seed = kSeed;
        config.logEvery = 4;
        config.optimizer.learningRate = 0.05f;
        description.dataset = testing::describe(train, validation);
        description.dataset.testSize = std::int64_t(test.size());
        description.config = {{"note", "test"}};
    }
};

TEST(Trainer, WritesEventsCheckpointsAndAModelThatReproducesTheTestAccuracy) {
    Fixture f;
    const RunFolder folder = RunFolder::create(testing::freshFolder());
    Network network(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    EventWriter events;
    events.addFile(folder.eventsFile());
    Trainer trainer(network, f.config, events);
    trainer.setRunFolder(&folder);
    InMemoryBatchSource train(f.train, 8, true, kSeed), validation(f.validation, 8, false, kSeed),
        test(f.test, 8, false, kSeed);
    const TrainingResult result = trainer.train(train, &validation, &test, f.description);
    EXPECT_EQ(result.reason, "completed");
    EXPECT_EQ(result.epochsRun, 3);
    EXPECT_EQ(result.steps, 36);
    ASSERT_TRUE(result.test.has_value());
    EXPECT_EQ(result.test->confusion.total(), 21);
    EXPECT_GT(result.bestValidationAccuracy, 0.6) << "the synthetic classes are easy to learn";

    const auto all = readEvents(folder.eventsFile());
    const std::regex timestamp(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
    for (const auto& event : all) {
        EXPECT_EQ(event["schema"], 1);
        EXPECT_TRUE(std::regex_match(event["time"].get<std::string>(), timestamp)) << event["time"];
    }
    ASSERT_EQ(all.front()["event"], "run_started");
    EXPECT_EQ(all.front()["steps_per_epoch"], 12);
    EXPECT_EQ(all.front()["resumed_from_step"], 0);
    EXPECT_EQ(all.front()["dataset"]["classes"].size(), 3u);
    EXPECT_EQ(all.front()["model"]["parameters"], network.shapes().totalParameters);
    EXPECT_GE(all.front()["hardware"]["cpu"]["cores"].get<int>(), 1);

    EXPECT_EQ(eventsNamed(all, "step").size(), 9u);  // 36 steps, every 4th
    const auto epochs = eventsNamed(all, "epoch");
    ASSERT_EQ(epochs.size(), 3u);
    for (const auto& epoch : epochs) {
        std::int64_t total = 0;
        for (const auto& row : epoch["confusion_matrix"])
            for (const auto& cell : row) total += cell.get<std::int64_t>();
        EXPECT_EQ(total, 30);
        EXPECT_EQ(epoch["per_class"].size(), 3u);
        EXPECT_EQ(epoch["per_class"][0]["class"], "class0");
    }
    EXPECT_EQ(eventsNamed(all, "checkpoint").size(), 3u + std::size_t(std::count_if(
                                                           epochs.begin(), epochs.end(),
                                                           [](const auto& e) { return e["best"] == true; })));
    const auto finished = all.back();
    EXPECT_EQ(finished["event"], "finished");
    EXPECT_EQ(finished["reason"], "completed");
    EXPECT_DOUBLE_EQ(finished["test_accuracy"].get<double>(), result.test->accuracy());
    EXPECT_EQ(finished["best_epoch"], result.bestEpoch);

    // The model folder alone reproduces the test accuracy.
    const ModelFolder model = readModelFolder(folder.modelFolder());
    EXPECT_EQ(model.info.classNames, f.description.dataset.classNames);
    Network reloaded(model.spec, *f.backend, 5, 999);
    loadNetworkTensors(reloaded, model.weights, folder.modelFolder());
    InMemoryBatchSource testAgain(f.test, 5, false, kSeed);
    EXPECT_DOUBLE_EQ(evaluate(reloaded, testAgain).accuracy(), result.test->accuracy());
}

// The time to a target validation accuracy: null in the epoch events until the first epoch whose
// validation reaches it, then that epoch's training time, and the same in `finished` (null when
// no epoch reached it). 0.3 is reached on these easy classes; 1.0 may or may not be.
TEST(Trainer, SecondsToTargetAreThoseOfTheFirstEpochThatReachedIt) {
    for (const double target : {0.3, 1.0}) {
        SCOPED_TRACE(target);
        Fixture f;
        f.config.targetAccuracy = target;
        const RunFolder folder = RunFolder::create(testing::freshFolder(std::to_string(int(target * 10))));
        Network network(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
        EventWriter events;
        events.addFile(folder.eventsFile());
        Trainer trainer(network, f.config, events);
        trainer.setRunFolder(&folder);
        InMemoryBatchSource train(f.train, 8, true, kSeed), validation(f.validation, 8, false, kSeed);
        const TrainingResult result = trainer.train(train, &validation, nullptr, f.description);

        const auto all = readEvents(folder.eventsFile());
        ASSERT_FALSE(all.empty()) << "no events written";
        nlohmann::json expected = nullptr;
        for (const auto& epoch : eventsNamed(all, "epoch")) {
            if (expected.is_null() && epoch["validation_accuracy"].get<double>() >= target) {
                ASSERT_TRUE(epoch["seconds_to_target"].is_number()) << epoch.dump();
                expected = epoch["seconds_to_target"];
                EXPECT_GT(expected.get<double>(), 0.0);
            }
            EXPECT_EQ(epoch["seconds_to_target"], expected) << epoch.dump();
        }
        const auto finished = all.back();
        EXPECT_EQ(finished["target_accuracy"], target);
        EXPECT_EQ(finished["seconds_to_target"], expected);
        if (target == 0.3) {
            ASSERT_FALSE(expected.is_null()) << "the synthetic classes are easy to learn";
            EXPECT_DOUBLE_EQ(result.secondsToTarget, expected.get<double>());
            EXPECT_LE(result.secondsToTarget, result.wallSeconds);
        }
    }
}

TEST(Trainer, EvaluationPadsTheLastBatchAndCountsOnlyRealImages) {
    Fixture f;
    Network wide(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    Network single(testing::tinyNetworkSpec(), *f.backend, 1, kSeed);
    InMemoryBatchSource byEight(f.validation, 8, false, kSeed), byOne(f.validation, 1, false, kSeed);
    ASSERT_EQ(byEight.batchesPerEpoch(), 4);  // 8 + 8 + 8 + 6
    const EvaluationResult padded = evaluate(wide, byEight);
    const EvaluationResult oneByOne = evaluate(single, byOne);
    EXPECT_EQ(padded.confusion.total(), 30);
    for (int t = 0; t < 3; ++t)
        for (int p = 0; p < 3; ++p) EXPECT_EQ(padded.confusion.count(t, p), oneByOne.confusion.count(t, p));
    EXPECT_NEAR(padded.loss, oneByOne.loss, 1e-5);
}

// The loss is read at log points, so with --log-every 1 the guard names the very step.
TEST(Trainer, NonFiniteLossNamesTheEpochAndStep) {
    Fixture f;
    f.config.logEvery = 1;
    Network network(linearSpec(), *f.backend, 8, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource clean(f.train, 8, true, kSeed);
    PoisonedSource train(clean, 1, 4);  // epoch 2, its fifth batch: global step 17
    try {
        trainer.train(train, nullptr, nullptr, f.description);
        FAIL() << "a NaN loss must stop training";
    } catch (const Error& error) {
        EXPECT_EQ(error.reason(), "loss became NaN at epoch 2 step 17; the first layer whose parameters went bad "
                                  "is 'logits' (logits.weight holds NaN)");
        EXPECT_EQ(error.where(), "layer 'logits'");
        EXPECT_NE(error.hint().find("lower the learning rate"), std::string::npos) << error.hint();
    }
    EXPECT_EQ(trainer.progress().step, 17);
}

// Between log points nothing is read: the guard fires at the first log point after the blow-up
// and names the steps since the previous read.
TEST(Trainer, NonFiniteLossBetweenLogPointsNamesTheStepsSinceTheLastRead) {
    Fixture f;  // a step event every 4 steps
    Network network(linearSpec(), *f.backend, 8, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource clean(f.train, 8, true, kSeed);
    PoisonedSource train(clean, 1, 4);  // epoch 2, its fifth batch: global step 17
    try {
        trainer.train(train, nullptr, nullptr, f.description);
        FAIL() << "a NaN loss must stop training";
    } catch (const Error& error) {
        EXPECT_EQ(error.reason(), "loss became NaN at epoch 2 in one of steps 17 to 20; the first layer whose "
                                  "parameters went bad is 'logits' (logits.weight holds NaN)");
        EXPECT_EQ(error.where(), "layer 'logits'");
        EXPECT_NE(error.hint().find("--log-every 1"), std::string::npos) << error.hint();
    }
    EXPECT_EQ(trainer.progress().step, 20);
}

// --lr 100 once ended at a loss of 6.7e15 with exit 0 and a saved model: the guard saw only NaN.
// Read after every step, the guard names the step and the layer that went bad first; read every
// 4 steps, it stops the run at the first log point, naming the steps since the last read and the
// first layer that is bad by then.
TEST(Trainer, ExplodingLossStopsTheRunNamingTheStepAndTheLayer) {
    for (int logEvery : {1, 4}) {
        SCOPED_TRACE("log every " + std::to_string(logEvery));
        Fixture f;
        f.config.optimizer.learningRate = 100.0f;  // adam
        f.config.logEvery = logEvery;
        const auto folder = RunFolder::create(testing::freshFolder() / "exploding");
        Network network(withoutBatchNorm(testing::tinyNetworkSpec()), *f.backend, 8, kSeed);
        EventWriter events(false);
        Trainer trainer(network, f.config, events);
        trainer.setRunFolder(&folder);
        InMemoryBatchSource train(f.train, 8, true, kSeed);
        try {
            trainer.train(train, nullptr, nullptr, f.description);
            FAIL() << "an exploding loss must stop training";
        } catch (const Error& error) {
            EXPECT_NE(error.reason().find("loss exploded to "), std::string::npos) << error.what();
            if (logEvery == 1) {
                EXPECT_TRUE(std::regex_search(error.reason(), std::regex(" at epoch 1 step \\d+ "))) << error.what();
                // Adam moves every parameter by about lr at once: the first layer in order goes bad first.
                EXPECT_NE(error.reason().find("the first layer whose parameters went bad is 'conv'"), std::string::npos)
                    << error.what();
                EXPECT_EQ(error.where(), "layer 'conv'");
            } else {
                EXPECT_NE(error.reason().find(" at epoch 1 in one of steps 1 to 4 "), std::string::npos) << error.what();
                EXPECT_NE(error.reason().find("the first layer whose parameters went bad is '"), std::string::npos)
                    << error.what();
                EXPECT_EQ(error.where().rfind("layer '", 0), 0u) << error.where();
            }
        }
        EXPECT_FALSE(std::filesystem::exists(folder.modelFolder())) << "a diverged run saves no model";
    }
}

// Issue #12: the trainer once downloaded the loss and the probabilities every step. Now a step
// reads nothing back; only log points and epoch ends read the step sums, with one download.
TEST(Trainer, StepsBetweenLogPointsMakeNoDownloads) {
    Fixture f;
    f.config.logEvery = 5;  // 12 steps an epoch: log points and epoch ends fall apart
    Network network(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource inner(f.train, 8, true, kSeed);
    // The backend's download count when each batch is taken, i.e. before each step.
    class CountingSource : public BatchSource {
    public:
        CountingSource(BatchSource& inner, const Backend& backend) : inner_(inner), backend_(backend) {}
        std::int64_t samples() const override { return inner_.samples(); }
        std::int64_t batchesPerEpoch() const override { return inner_.batchesPerEpoch(); }
        void startEpoch(int epoch, std::int64_t firstBatch) override { inner_.startEpoch(epoch, firstBatch); }
        bool next(Batch& batch) override {
            downloadsBeforeStep.push_back(backend_.downloadCount());
            return inner_.next(batch);
        }
        std::vector<std::uint64_t> downloadsBeforeStep;

    private:
        BatchSource& inner_;
        const Backend& backend_;
    } train(inner, *f.backend);
    const std::uint64_t before = f.backend->downloadCount();
    trainer.train(train, nullptr, nullptr, f.description);
    const std::uint64_t after = f.backend->downloadCount();

    ASSERT_EQ(train.downloadsBeforeStep.size(), 36u);
    train.downloadsBeforeStep.push_back(after);  // after the last step (nothing else reads without a folder)
    for (std::size_t step = 1; step <= 36; ++step) {
        const bool read = step % 5 == 0 || step % 12 == 0;
        EXPECT_EQ(train.downloadsBeforeStep[step] - train.downloadsBeforeStep[step - 1], read ? 1u : 0u)
            << "downloads during step " << step;
    }
    EXPECT_EQ(after - before, 10u) << "7 log points (5, 10, ..., 35) and 3 epoch ends (12, 24, 36)";
}

// The events are what the trainer reported when it read the loss and probabilities every step:
// a second network from the same seed is stepped here the old way, reading both back each step.
TEST(Trainer, EventsMatchAPerStepHostReadout) {
    Fixture f;
    Network network(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    EventWriter events;
    std::vector<nlohmann::json> steps, epochs;
    events.addListener([&](const nlohmann::json& event) {
        if (event["event"] == "step") steps.push_back(event);
        if (event["event"] == "epoch") epochs.push_back(event);
    });
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource train(f.train, 8, true, kSeed), validation(f.validation, 8, false, kSeed);
    trainer.train(train, &validation, nullptr, f.description);
    ASSERT_EQ(steps.size(), 9u);
    ASSERT_EQ(epochs.size(), 3u);

    Network twin(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    twin.setLossOptions(f.config.loss);
    Optimizer optimizer(f.config.optimizer, *f.backend, twin.parameterCount());
    TrainingStep step(twin, optimizer);
    const LearningRateSchedule schedule(f.config.schedule, f.config.optimizer.learningRate, 12, 3);
    InMemoryBatchSource twinTrain(f.train, 8, true, kSeed), twinValidation(f.validation, 8, false, kSeed);
    const int classes = twin.classes();
    std::int64_t globalStep = 0;
    std::size_t stepEvent = 0;
    for (int epoch = 0; epoch < 3; ++epoch) {
        SCOPED_TRACE("epoch " + std::to_string(epoch + 1));
        twinTrain.startEpoch(epoch, 0);
        double lossSum = 0;
        std::int64_t correct = 0;
        Batch batch;
        for (int i = 0; i < 12; ++i) {
            ASSERT_TRUE(twinTrain.next(batch));
            twin.input().fromHost(batch.images);
            f.backend->upload(twin.labels(), batch.labels.data(), batch.labels.size() * sizeof(std::int32_t));
            step.run(schedule.at(globalStep), std::uint32_t(globalStep));
            ++globalStep;
            const float loss = twin.downloadLoss();
            const std::vector<float> probabilities = twin.probabilities().toHost();
            for (int row = 0; row < 8; ++row) {
                const float* p = probabilities.data() + std::size_t(row) * classes;
                correct += int(std::max_element(p, p + classes) - p) == batch.labels[std::size_t(row)];
            }
            lossSum += loss;
            if (globalStep % f.config.logEvery == 0) {
                ASSERT_LT(stepEvent, steps.size());
                EXPECT_EQ(steps[stepEvent]["step"], globalStep);
                EXPECT_NEAR(steps[stepEvent]["loss"].get<double>(), loss, 1e-6 * std::max(1.0f, loss));
                ++stepEvent;
            }
        }
        EXPECT_NEAR(epochs[std::size_t(epoch)]["train_loss"].get<double>(), lossSum / 12, 1e-6);
        EXPECT_DOUBLE_EQ(epochs[std::size_t(epoch)]["train_accuracy"].get<double>(), double(correct) / 96);

        // Validation, read back batch by batch as the old evaluation did.
        twinValidation.startEpoch(0, 0);
        double validationLoss = 0;
        std::int64_t validationCorrect = 0, seen = 0;
        std::vector<float> padded(std::size_t(8 * twin.inputShape().countPerImage()));
        while (twinValidation.next(batch)) {
            std::fill(padded.begin(), padded.end(), 0.0f);
            std::copy(batch.images.begin(), batch.images.end(), padded.begin());
            twin.input().fromHost(padded);
            twin.forward(Phase::Inference);
            const std::vector<float> logits = twin.logits().toHost();
            for (int row = 0; row < batch.count; ++row) {
                const float* z = logits.data() + std::size_t(row) * classes;
                const int predicted = int(std::max_element(z, z + classes) - z);
                double sumExp = 0;
                for (int c = 0; c < classes; ++c) sumExp += std::exp(double(z[c]) - z[predicted]);
                validationLoss += double(z[predicted]) + std::log(sumExp) - z[batch.labels[std::size_t(row)]];
                validationCorrect += predicted == batch.labels[std::size_t(row)];
                ++seen;
            }
        }
        EXPECT_NEAR(epochs[std::size_t(epoch)]["validation_loss"].get<double>(), validationLoss / double(seen), 1e-6);
        EXPECT_DOUBLE_EQ(epochs[std::size_t(epoch)]["validation_accuracy"].get<double>(),
                         double(validationCorrect) / double(seen));
    }
    EXPECT_EQ(stepEvent, steps.size());
}

TEST(Trainer, EarlyStoppingEndsAfterPatienceEpochsWithoutImprovement) {
    Fixture f;
    f.config.epochs = 10;
    f.config.earlyStopPatience = 2;
    f.config.optimizer.learningRate = 1e-12f;  // the weights stay put: epoch 1 is the best
    f.config.optimizer.momentum = 0.0f;
    Network network(withoutBatchNorm(testing::tinyNetworkSpec()), *f.backend, 8, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource train(f.train, 8, true, kSeed), validation(f.validation, 8, false, kSeed);
    const TrainingResult result = trainer.train(train, &validation, nullptr, f.description);
    EXPECT_EQ(result.reason, "early_stopped");
    EXPECT_EQ(result.epochsRun, 3);
    EXPECT_EQ(result.bestEpoch, 1);
}

TEST(Trainer, StepEventsCarryTheScheduledLearningRate) {
    Fixture f;
    f.config.epochs = 3;
    f.config.logEvery = 1;
    f.config.schedule.kind = "step";
    f.config.schedule.warmupEpochs = 1;
    f.config.schedule.stepEpochs = 1;
    f.config.schedule.gamma = 0.5f;
    Network network(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    EventWriter events;
    std::vector<nlohmann::json> steps;
    events.addListener([&](const nlohmann::json& event) {
        if (event["event"] == "step") steps.push_back(event);
    });
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource train(f.train, 8, true, kSeed);
    trainer.train(train, nullptr, nullptr, f.description);
    ASSERT_EQ(steps.size(), 36u);
    const LearningRateSchedule schedule(f.config.schedule, 0.05f, 12, 3);
    for (const auto& step : steps)
        EXPECT_FLOAT_EQ(step["learning_rate"].get<float>(), schedule.at(step["step"].get<std::int64_t>() - 1))
            << "at step " << step["step"];
    EXPECT_FLOAT_EQ(steps[0]["learning_rate"].get<float>(), 0.05f * 0.01f);  // warm-up starts at lr/100
    EXPECT_FLOAT_EQ(steps[35]["learning_rate"].get<float>(), 0.05f * 0.25f);  // epoch 3: two decays
}

// The hint once named the function adaptSpecToDataset, which a user cannot call.
TEST(Trainer, ClassCountMismatchHintSaysWhatToChangeNotAFunctionName) {
    Fixture f;
    f.description.dataset.classNames.push_back("extra");
    Network network(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource train(f.train, 8, true, kSeed);
    try {
        trainer.train(train, nullptr, nullptr, f.description);
        FAIL() << "a class-count mismatch must be reported";
    } catch (const Error& error) {
        EXPECT_EQ(error.hint().find("adaptSpecToDataset"), std::string::npos) << error.hint();
        EXPECT_NE(error.hint().find("units"), std::string::npos) << error.hint();
    }
}

TEST(Trainer, LabelOutsideTheClassesNamesTheBatch) {
    Fixture f;
    f.train.labels[0] = 5;
    f.train.labels[1] = 5;
    Network network(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource train(f.train, 96, true, kSeed);  // one batch holds every image
    try {
        trainer.train(train, nullptr, nullptr, f.description);
        FAIL() << "a bad label must be reported";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("training batch 1 of epoch 1"), std::string::npos) << error.what();
    }
}

// Every image's augmentation erases all of it: the network's input after the training step is
// all zeros, while the validation images that follow are fed as they are.
TEST(Trainer, AugmentsTrainingBatchesOnTheBackendAndNeverValidationBatches) {
    Fixture f;
    f.config.epochs = 1;
    Network network(linearSpec(), *f.backend, 96, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource clean(f.train, 96, true, kSeed);  // one batch holds every image
    AugmentingSource train(clean, [](Batch& batch) {
        ImageAugmentation eraseAll;
        eraseAll.eraseHeight = eraseAll.eraseWidth = 8;
        batch.augmentations.assign(std::size_t(batch.count), eraseAll);
    });
    trainer.train(train, nullptr, nullptr, f.description);
    const std::vector<float> augmented = network.input().toHost();
    EXPECT_TRUE(std::all_of(augmented.begin(), augmented.end(), [](float value) { return value == 0.0f; }));

    InMemoryBatchSource validation(f.validation, 96, false, kSeed);
    Trainer again(network, f.config, events);
    again.train(train, &validation, nullptr, f.description);
    const std::vector<float> evaluated = network.input().toHost();
    EXPECT_TRUE(std::equal(f.validation.images.begin(), f.validation.images.end(), evaluated.begin()));
}

// The loss trains towards the mix of two labels: a weight of 1 on the first label (or 0 on a
// second label equal to it) is plain training, half of another label is not.
TEST(Trainer, MixedLabelsReachTheLoss) {
    Fixture f;
    f.config.epochs = 1;
    auto trainWith = [&](const std::function<void(Batch&)>& mix) {
        Network network(linearSpec(), *f.backend, 8, kSeed);
        EventWriter events(false);
        Trainer trainer(network, f.config, events);
        InMemoryBatchSource clean(f.train, 8, true, kSeed);
        AugmentingSource train(clean, [&](Batch& batch) {
            batch.augmentations.assign(std::size_t(batch.count), ImageAugmentation{});
            if (mix) mix(batch);
        });
        trainer.train(train, nullptr, nullptr, f.description);
        std::vector<float> parameters(network.parameterCount());
        f.backend->download(parameters.data(), network.parameters(), parameters.size() * sizeof(float));
        return parameters;
    };
    const std::vector<float> plain = trainWith(nullptr);
    const std::vector<float> firstOnly = trainWith([](Batch& batch) {
        batch.secondLabels.assign(std::size_t(batch.count), 2);
        batch.labelWeights.assign(std::size_t(batch.count), 1.0f);
    });
    const std::vector<float> secondIsTheSame = trainWith([](Batch& batch) {
        batch.secondLabels = batch.labels;
        batch.labelWeights.assign(std::size_t(batch.count), 0.0f);
    });
    const std::vector<float> halfAnother = trainWith([](Batch& batch) {
        batch.secondLabels.clear();
        for (std::int32_t label : batch.labels) batch.secondLabels.push_back((label + 1) % 3);
        batch.labelWeights.assign(std::size_t(batch.count), 0.5f);
    });
    EXPECT_TRUE(test::closeTo(firstOnly, plain, 1e-6, "first label only"));
    EXPECT_TRUE(test::closeTo(secondIsTheSame, plain, 1e-6, "second label equal to the first"));
    EXPECT_GT(test::relativeError(halfAnother, plain), 1e-3);
}

TEST(Trainer, AugmentationsThatDoNotMatchTheBatchNameIt) {
    Fixture f;
    Network network(linearSpec(), *f.backend, 8, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource clean(f.train, 8, true, kSeed);
    AugmentingSource train(clean, [](Batch& batch) { batch.augmentations.assign(3, ImageAugmentation{}); });
    try {
        trainer.train(train, nullptr, nullptr, f.description);
        FAIL() << "three augmentations for eight images must be refused";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("3 image augmentations for 8 images"), std::string::npos)
            << error.what();
        EXPECT_NE(error.where().find("training batch 1 of epoch 1"), std::string::npos) << error.where();
    }
}

TEST(Trainer, RefusesSettingsThatNeedAMissingValidationSplit) {
    Fixture f;
    Network network(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    EventWriter events(false);
    InMemoryBatchSource train(f.train, 8, true, kSeed);
    f.config.schedule.kind = "plateau";
    Trainer plateau(network, f.config, events);
    EXPECT_THROW(plateau.train(train, nullptr, nullptr, f.description), Error);
    f.config.schedule.kind = "constant";
    f.config.earlyStopPatience = 3;
    Trainer early(network, f.config, events);
    EXPECT_THROW(early.train(train, nullptr, nullptr, f.description), Error);
}

TEST(Trainer, TrainingSetSmallerThanABatchIsAnError) {
    Fixture f;
    Network network(testing::tinyNetworkSpec(), *f.backend, 128, kSeed);
    EventWriter events(false);
    Trainer trainer(network, f.config, events);
    InMemoryBatchSource train(f.train, 128, true, kSeed);
    try {
        trainer.train(train, nullptr, nullptr, f.description);
        FAIL();
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("smaller than one batch of 128"), std::string::npos) << error.what();
    }
}

}  // namespace
}  // namespace cnnstudio
