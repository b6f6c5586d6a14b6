// Run under `mpirun -np 2` by ctest: data-parallel steps on CPU ranks equal single-process
// steps with the same global batch.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "cnnstudio/spec.h"
#include "mpi/small_network.h"

namespace cnnstudio {
namespace {

struct GlobalBatch {
    std::vector<float> images;
    std::vector<std::int32_t> labels;
};

GlobalBatch makeBatch(int batch, int step) {
    std::mt19937 random(1000 + step);
    std::normal_distribution<float> normal;
    std::uniform_int_distribution<std::int32_t> label(0, 4);
    GlobalBatch global;
    global.images.resize(std::size_t(batch) * 100);
    for (float& v : global.images) v = normal(random);
    global.labels.resize(std::size_t(batch));
    for (auto& l : global.labels) l = label(random);
    return global;
}

// Trains `steps` steps on images [first, first + count) of each global batch.
std::vector<float> train(Communicator* communicator, int globalBatch, int first, int count,
                         std::size_t bucketBytes) {
    auto backend = createBackend("cpu", {.threads = 1});
    Network network(smallNetwork(), *backend, count, 7);
    OptimizerConfig config;
    config.learningRate = 0.1f;
    Optimizer optimizer(config, *backend, network.parameterCount());
    std::unique_ptr<GradientSync> sync;
    if (communicator) sync = std::make_unique<GradientSync>(network, *communicator, bucketBytes);
    TrainingStep trainingStep(network, optimizer, true, sync.get());
    for (int step = 0; step < 4; ++step) {
        GlobalBatch global = makeBatch(globalBatch, step);
        network.input().fromHost(std::span(global.images).subspan(std::size_t(first) * 100, std::size_t(count) * 100));
        backend->upload(network.labels(), global.labels.data() + first, std::size_t(count) * sizeof(std::int32_t));
        trainingStep.run(config.learningRate, std::uint32_t(step));
    }
    return std::vector<float>(network.parameters(), network.parameters() + network.parameterCount());
}

class DataParallel : public ::testing::TestWithParam<std::size_t> {};

TEST_P(DataParallel, StepsEqualSingleProcessWithTheSameGlobalBatch) {
    auto backend = createBackend("cpu", {.threads = 1});
    auto communicator = createCommunicator(*backend, createDeviceTransport(*backend).get());
    const WorldInfo& world = communicator->world();
    ASSERT_EQ(world.size, 2) << "run this suite with mpirun -np 2";
    const int perRank = 4, globalBatch = perRank * world.size;
    std::vector<float> distributed = train(communicator.get(), globalBatch, world.rank * perRank, perRank, GetParam());
    std::vector<float> single = train(nullptr, globalBatch, 0, globalBatch, GetParam());
    ASSERT_EQ(distributed.size(), single.size());
    for (std::size_t i = 0; i < single.size(); ++i)
        ASSERT_NEAR(distributed[i], single[i], 1e-5f) << "parameter " << i << " on rank " << world.rank;
}

// One bucket for everything, and buckets small enough that every layer gets its own.
INSTANTIATE_TEST_SUITE_P(BucketSizes, DataParallel, ::testing::Values(std::size_t(64) << 20, std::size_t(64)));

TEST(Communicator, ReducesBroadcastsAndSumsHostValues) {
    auto backend = createBackend("cpu", {.threads = 1});
    auto communicator = createCommunicator(*backend, createDeviceTransport(*backend).get());
    const WorldInfo& world = communicator->world();
    EXPECT_EQ(communicator->transport(), "mpi");

    std::vector<float> values{float(world.rank), 10.0f * float(world.rank + 1)};
    communicator->allReduceMean(values.data(), values.size());
    EXPECT_FLOAT_EQ(values[0], 0.5f);   // (0 + 1) / 2
    EXPECT_FLOAT_EQ(values[1], 15.0f);  // (10 + 20) / 2

    std::vector<float> broadcast{float(world.rank + 5)};
    communicator->broadcast(broadcast.data(), 1, 1);
    EXPECT_FLOAT_EQ(broadcast[0], 6.0f);

    std::vector<double> counts{1.0, double(world.rank)};
    communicator->allReduceSumHost(counts);
    EXPECT_DOUBLE_EQ(counts[0], 2.0);
    EXPECT_DOUBLE_EQ(counts[1], 1.0);
}

}  // namespace
}  // namespace cnnstudio

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    int result = RUN_ALL_TESTS();
    cnnstudio::finaliseWorld();
    return result;
}
