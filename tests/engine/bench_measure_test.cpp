// Measuring a benchmark configuration on the CPU: throughput, the profile of every layer in
// both directions, the categories they add up to, and the reduced plan of slow configurations.
#include <cmath>

#include <gtest/gtest.h>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/bench_measure.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/network.h"
#include "cnnstudio/presets.h"
#include "spec_builders.h"

namespace cnnstudio {
namespace {

using namespace spec_testing;

// input 1x8x8 -> conv -> batch norm -> relu -> max pool -> flatten -> dense(3)
NetworkSpec smallNetwork() {
    return network({input(1, 8, 8), node("conv1", "Conv2D", {"input"}, {{"filters", 4}, {"kernel", 3}, {"padding", "same"}}),
                    node("bn1", "BatchNorm2D", {"conv1"}), node("relu1", "ReLU", {"bn1"}),
                    node("pool1", "MaxPool2D", {"relu1"}, {{"kernel", 2}}), node("flatten", "Flatten", {"pool1"}),
                    node("logits", "Dense", {"flatten"}, {{"units", 3}})});
}

TEST(NetworkProfile, EveryLayerThatRunsIsTimedInBothDirections) {
    auto backend = createBackend("cpu", BackendOptions{});
    Network net(smallNetwork(), *backend, 4, 1);
    const std::vector<LayerTime> times = net.profileTrainingPass();
    std::vector<std::string> names;
    for (const LayerTime& time : times) {
        names.push_back(time.name);
        EXPECT_GE(time.forwardMs, 0.0) << time.name;
        EXPECT_GE(time.backwardMs, 0.0) << time.name;
    }
    // relu1 and pool1 are absorbed by bn1 in training (one fused chain), so they have no entry
    // of their own; the loss comes last.
    EXPECT_EQ(names, (std::vector<std::string>{"conv1", "bn1", "flatten", "logits", "loss"}));
    EXPECT_EQ(times.front().type, "Conv2D");
    EXPECT_EQ(times.back().type, "SoftmaxCrossEntropy");
    EXPECT_TRUE(std::isfinite(net.downloadLoss()));
}

// A convolution of the network's input joins its batch norm and ReLU in training (the input
// block, Layer::forwardWithConvRelu): it has no entry of its own, and backward still announces
// its weight gradients to the gradients-ready hook (data parallel reduces what it announces).
TEST(NetworkProfile, TheInputBlockRunsAsItsBatchNorm) {
    auto backend = createBackend("cpu", BackendOptions{});
    Network net(network({input(1, 8, 8),
                         node("conv1", "Conv2D", {"input"}, {{"filters", 4}, {"kernel", 3}, {"padding", "same"}}),
                         node("bn1", "BatchNorm2D", {"conv1"}), node("relu1", "ReLU", {"bn1"}),
                         node("conv2", "Conv2D", {"relu1"}, {{"filters", 2}, {"kernel", 3}}),
                         node("flatten", "Flatten", {"conv2"}), node("logits", "Dense", {"flatten"}, {{"units", 3}})}),
                *backend, 4, 1);
    std::vector<std::string> names;
    for (const LayerTime& time : net.profileTrainingPass()) names.push_back(time.name);
    EXPECT_EQ(names, (std::vector<std::string>{"bn1", "conv2", "flatten", "logits", "loss"}));

    std::size_t announced = 0;
    net.setGradientsReadyHook([&](std::size_t, std::size_t count) { announced += count; });
    net.forward(Phase::Training);
    net.computeLoss();
    net.backward();
    EXPECT_EQ(announced, net.parameterCount()) << "every parameter's gradient announced once";
}

TEST(BenchMeasure, LayerTypesFallIntoTheirCategories) {
    EXPECT_EQ(breakdownCategoryOfLayerType("Conv2D"), "convolution");
    EXPECT_EQ(breakdownCategoryOfLayerType("SeparableConv2D"), "convolution");
    EXPECT_EQ(breakdownCategoryOfLayerType("BatchNorm2D"), "batch_norm");
    EXPECT_EQ(breakdownCategoryOfLayerType("LeakyReLU"), "activation");
    EXPECT_EQ(breakdownCategoryOfLayerType("GlobalAvgPool"), "pooling");
    EXPECT_EQ(breakdownCategoryOfLayerType("Dense"), "dense");
    EXPECT_EQ(breakdownCategoryOfLayerType("SoftmaxCrossEntropy"), "loss");
    EXPECT_EQ(breakdownCategoryOfLayerType("Flatten"), "other");
    EXPECT_EQ(breakdownCategoryOfLayerType("Dropout"), "other");
}

TEST(BenchMeasure, ConfigurationGetsThroughputAndBreakdown) {
    auto backend = createBackend("cpu", BackendOptions{});
    auto communicator = createCommunicator(*backend, nullptr);
    BenchPlan plan;
    plan.steps = 2;
    plan.repeats = 3;
    BenchConfiguration result;
    measureConfiguration(*backend, *communicator, smallNetwork(), 4, plan, result);
    EXPECT_FALSE(result.reduced) << result.reducedReason;
    EXPECT_EQ(result.steps, 2);
    EXPECT_EQ(result.trainImagesPerSecond.repeats.size(), 3u);
    EXPECT_GT(result.trainImagesPerSecond.median, 0.0);
    EXPECT_LE(result.trainImagesPerSecond.min, result.trainImagesPerSecond.median);
    EXPECT_GT(result.inferenceImagesPerSecond, 0.0);
    ASSERT_EQ(result.layers.size(), 5u);  // relu1 and pool1 run inside bn1's chain
    double layerSum = 0;
    for (const BenchLayerTime& layer : result.layers) layerSum += layer.forwardMs + layer.backwardMs;
    EXPECT_NEAR(result.breakdownMs.totalMs() - result.breakdownMs.update, layerSum, 1e-9);
    EXPECT_GT(result.breakdownMs.convolution, 0.0);
    EXPECT_GT(result.breakdownMs.update, 0.0);
    EXPECT_EQ(result.breakdownMs.communication, 0.0) << "one rank does not communicate";
}

// Claims a second rank and counts the gradient all-reduces started; reduces nothing.
class CountingTwoRankCommunicator : public Communicator {
public:
    const WorldInfo& world() const override { return world_; }
    std::string transport() const override { return "counting"; }
    void startAllReduceMean(float*, std::size_t) override { ++started; }
    void finishAllReduces() override {}
    void broadcast(float*, std::size_t, int) override {}
    void allReduceSumHost(std::span<double>) override {}
    void barrier() override {}
    int started = 0;

private:
    WorldInfo world_{.rank = 0, .size = 2, .localRank = 0, .localSize = 1, .host = ""};
};

int allReducesStarted(std::size_t bucketBytes) {
    auto backend = createBackend("cpu", BackendOptions{});
    CountingTwoRankCommunicator communicator;
    BenchPlan plan;
    plan.steps = 2;
    plan.repeats = 1;
    plan.gradientBucketBytes = bucketBytes;
    BenchConfiguration result;
    measureConfiguration(*backend, communicator, smallNetwork(), 4, plan, result);
    return communicator.started;
}

TEST(BenchMeasure, PlanGradientBucketSplitsTheAllReduce) {
    // The small network's gradients fit one default bucket: one all-reduce per training step
    // (plus the profiling pass's). One-float buckets: one per layer with parameters (conv1, bn1,
    // logits), so about three times as many.
    const int oneBucket = allReducesStarted(kDefaultGradientBucketBytes);
    const int perLayer = allReducesStarted(sizeof(float));
    EXPECT_GT(oneBucket, 0);
    EXPECT_GE(perLayer, 2 * oneBucket) << "one-float buckets " << perLayer << ", default " << oneBucket;
}

TEST(BenchMeasure, SlowConfigurationRunsFewerStepsAndSaysWhy) {
    auto backend = createBackend("cpu-ref", BackendOptions{});
    auto communicator = createCommunicator(*backend, nullptr);
    BenchPlan plan;
    plan.steps = 5;
    plan.repeats = 3;
    plan.stepCap = 2;
    plan.stepCapReason = "cpu-ref runs plain loops";
    plan.budgetSeconds = 1e-9;  // every step is over budget
    BenchConfiguration result;
    measureConfiguration(*backend, *communicator, smallNetwork(), 2, plan, result);
    EXPECT_TRUE(result.reduced);
    EXPECT_EQ(result.steps, 1);
    EXPECT_EQ(result.repeats, 1);
    EXPECT_EQ(result.trainImagesPerSecond.repeats.size(), 1u);
    EXPECT_NE(result.reducedReason.find("cpu-ref runs plain loops: 2 steps instead of 5"), std::string::npos)
        << result.reducedReason;
    EXPECT_NE(result.reducedReason.find("1 step(s) x 1 repeat(s)"), std::string::npos) << result.reducedReason;
}

TEST(BenchMeasure, NetworkDescriptionCountsTrainingFlops) {
    const NetworkSpec spec = loadPreset("fer-cnn");
    const BenchNetwork described = describeNetwork(spec);
    EXPECT_EQ(described.name, spec.name);
    EXPECT_EQ(described.input, (std::vector<int>{1, 48, 48}));
    EXPECT_EQ(described.classes, 7);
    EXPECT_GT(described.parameters, 0u);
    EXPECT_NEAR(described.trainGflopPerImage, 3.0 * double(inferShapes(spec).totalForwardFlops) / 1e9, 1e-12);
}

}  // namespace
}  // namespace cnnstudio
