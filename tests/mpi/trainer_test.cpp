// Run under `mpirun -np 2` by ctest: the Trainer on two CPU ranks, each with its own shard of
// every global batch, ends with the weights a single process reaches with the same global
// batch; sharded evaluation gives the single-process confusion matrix and loss; a stop raised
// on one rank stops both at the same step.
#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/events.h"
#include "cnnstudio/network.h"
#include "cnnstudio/trainer.h"
#include "mpi/small_network.h"

namespace cnnstudio {
namespace {

constexpr std::uint32_t kDataSeed = 2024;
constexpr int kValuesPerImage = 100;  // (1, 10, 10)

struct SyntheticData {
    std::vector<float> images;
    std::vector<std::int32_t> labels;
    int count = 0;
};

SyntheticData makeData(int count, std::uint32_t seed) {
    std::mt19937 random(seed);
    std::normal_distribution<float> normal;
    std::uniform_int_distribution<std::int32_t> label(0, 4);
    SyntheticData data;
    data.count = count;
    data.images.resize(std::size_t(count) * kValuesPerImage);
    for (float& value : data.images) value = normal(random);
    data.labels.resize(std::size_t(count));
    for (auto& value : data.labels) value = label(random);
    return data;
}

// Sharded like the datasets BatchLoader: every rank shuffles the same way per epoch, cuts the
// order into global batches of perRank * ranks and takes positions rank, rank + ranks, ...
class ShardedSource : public BatchSource {
public:
    ShardedSource(const SyntheticData& data, int perRank, int rank, int ranks, bool training)
        : data_(data), perRank_(perRank), rank_(rank), ranks_(ranks), training_(training) {}

    std::int64_t samples() const override { return data_.count; }
    std::int64_t batchesPerEpoch() const override {
        const int global = perRank_ * ranks_;
        return training_ ? data_.count / global : (data_.count + global - 1) / global;
    }
    void startEpoch(int epoch, std::int64_t firstBatch) override {
        order_.resize(std::size_t(data_.count));
        std::iota(order_.begin(), order_.end(), 0);
        if (training_) std::shuffle(order_.begin(), order_.end(), std::mt19937(kDataSeed + std::uint32_t(epoch)));
        batch_ = firstBatch;
    }
    bool next(Batch& batch) override {
        if (batch_ >= batchesPerEpoch()) return false;
        const std::int64_t begin = batch_ * perRank_ * ranks_;
        const std::int64_t end = std::min<std::int64_t>(begin + perRank_ * ranks_, data_.count);
        batch.images.clear();
        batch.labels.clear();
        for (std::int64_t position = begin + rank_; position < end; position += ranks_) {
            const int sample = order_[std::size_t(position)];
            batch.images.insert(batch.images.end(), data_.images.begin() + std::ptrdiff_t(sample) * kValuesPerImage,
                                data_.images.begin() + std::ptrdiff_t(sample + 1) * kValuesPerImage);
            batch.labels.push_back(data_.labels[std::size_t(sample)]);
        }
        batch.count = int(batch.labels.size());
        ++batch_;
        return true;
    }

private:
    const SyntheticData& data_;
    int perRank_, rank_, ranks_;
    bool training_;
    std::vector<int> order_;
    std::int64_t batch_ = 0;
};

RunDescription describeSmallData() {
    RunDescription description;
    description.dataset.name = "synthetic";
    description.dataset.classNames = {"a", "b", "c", "d", "e"};
    description.dataset.channels = 1;
    description.dataset.height = description.dataset.width = 10;
    return description;
}

TrainerConfig twoEpochsOfSgd() {
    TrainerConfig config;
    config.epochs = 2;
    config.optimizer.kind = "sgd";
    config.optimizer.learningRate = 0.1f;
    config.logEvery = 1;
    return config;
}

std::vector<float> parametersOf(Network& network) {
    return std::vector<float>(network.parameters(), network.parameters() + network.parameterCount());
}

TEST(DistributedTrainer, TwoRanksReachTheWeightsOfOneProcessWithTheSameGlobalBatch) {
    auto backend = createBackend("cpu", {.threads = 1});
    auto communicator = createCommunicator(*backend, createDeviceTransport(*backend).get());
    const WorldInfo& world = communicator->world();
    ASSERT_EQ(world.size, 2) << "run this suite with mpirun -np 2";
    const int perRank = 4;
    const SyntheticData data = makeData(40, kDataSeed);  // 5 global batches of 8 per epoch

    Network distributedNetwork(smallNetwork(), *backend, perRank, 7);
    EventWriter silent(false);
    Trainer distributed(distributedNetwork, twoEpochsOfSgd(), silent, communicator.get());
    ShardedSource shard(data, perRank, world.rank, world.size, true);
    const TrainingResult distributedResult = distributed.train(shard, nullptr, nullptr, describeSmallData());

    auto singleBackend = createBackend("cpu", {.threads = 1});
    Network singleNetwork(smallNetwork(), *singleBackend, perRank * world.size, 7);
    Trainer single(singleNetwork, twoEpochsOfSgd(), silent);
    ShardedSource whole(data, perRank * world.size, 0, 1, true);
    const TrainingResult singleResult = single.train(whole, nullptr, nullptr, describeSmallData());

    EXPECT_EQ(distributedResult.steps, singleResult.steps);
    const std::vector<float> expected = parametersOf(singleNetwork), actual = parametersOf(distributedNetwork);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        ASSERT_NEAR(actual[i], expected[i], 1e-5f) << "parameter " << i << " on rank " << world.rank
                                                   << " (data seed " << kDataSeed << ")";
}

// 17 images in global batches of 8: the last holds one image, so rank 1's share of it is empty.
TEST(DistributedTrainer, ShardedEvaluationEqualsSingleProcessEvaluation) {
    auto backend = createBackend("cpu", {.threads = 1});
    auto communicator = createCommunicator(*backend, createDeviceTransport(*backend).get());
    const WorldInfo& world = communicator->world();
    const int perRank = 4;
    const SyntheticData data = makeData(17, kDataSeed + 1);

    Network network(smallNetwork(), *backend, perRank, 11);
    ShardedSource shard(data, perRank, world.rank, world.size, false);
    const EvaluationResult distributed = evaluate(network, shard, communicator.get());

    Network singleNetwork(smallNetwork(), *backend, perRank * world.size, 11);
    ShardedSource whole(data, perRank * world.size, 0, 1, false);
    const EvaluationResult single = evaluate(singleNetwork, whole);

    EXPECT_EQ(distributed.confusion.total(), 17);
    EXPECT_EQ(distributed.confusion.toJson(), single.confusion.toJson()) << "rank " << world.rank;
    EXPECT_NEAR(distributed.loss, single.loss, 1e-5) << "rank " << world.rank;
}

TEST(DistributedTrainer, StopRaisedOnOneRankStopsEveryRankAtTheSameStep) {
    auto backend = createBackend("cpu", {.threads = 1});
    auto communicator = createCommunicator(*backend, createDeviceTransport(*backend).get());
    const WorldInfo& world = communicator->world();
    const SyntheticData data = makeData(40, kDataSeed);
    Network network(smallNetwork(), *backend, 4, 7);
    EventWriter silent(false);
    Trainer trainer(network, twoEpochsOfSgd(), silent, communicator.get());
    std::atomic<bool> stop{world.rank == 1};
    trainer.setStopFlag(&stop);
    ShardedSource shard(data, 4, world.rank, world.size, true);
    const TrainingResult result = trainer.train(shard, nullptr, nullptr, describeSmallData());

    EXPECT_EQ(result.reason, "stopped") << "rank " << world.rank;
    std::vector<double> steps{double(result.steps), double(result.steps) * double(world.rank)};
    communicator->allReduceSumHost(steps);
    EXPECT_EQ(steps[0], 2.0 * double(result.steps)) << "the ranks stopped at different steps";
}

}  // namespace
}  // namespace cnnstudio
