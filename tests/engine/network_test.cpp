// The network built from a spec: gradients of every layer type against numerical ones on
// cpu-ref (the layer wiring; the ops themselves are checked in cpu_ref_gradient_test.cpp),
// fan-out sums, flat-buffer layout, a few training steps, and a network built for inference.
#include <malloc.h>

#include <cmath>
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/spec.h"
#include "engine/expect_error.h"

namespace cnnstudio {
namespace {

NodeSpec node(std::string name, std::string type, std::vector<std::string> inputs,
              nlohmann::json params = nlohmann::json::object()) {
    return {std::move(name), std::move(type), std::move(params), std::move(inputs)};
}

// input (c, h, w) -> body... -> flatten -> dense(classes)
NetworkSpec chain(int channels, int size, std::vector<NodeSpec> body, int classes = 3) {
    NetworkSpec spec;
    spec.name = "test";
    spec.nodes.push_back(node("input", "Input", {}, {{"channels", channels}, {"height", size}, {"width", size}}));
    std::string last = "input";
    for (NodeSpec& n : body) {
        if (n.inputs.empty()) n.inputs = {last};
        last = n.name;
        spec.nodes.push_back(n);
    }
    spec.nodes.push_back(node("flatten", "Flatten", {last}));
    spec.nodes.push_back(node("logits", "Dense", {"flatten"}, {{"units", classes}}));
    return spec;
}

void fillRandom(Network& network, std::uint64_t seed) {
    std::mt19937 random{std::uint32_t(seed)};
    std::normal_distribution<float> normal;
    std::vector<float> images(static_cast<std::size_t>(network.input().count()));
    for (float& v : images) v = normal(random);
    network.input().fromHost(images);
    std::uniform_int_distribution<std::int32_t> label(0, network.classes() - 1);
    std::vector<std::int32_t> labels(static_cast<std::size_t>(network.batch()));
    for (auto& l : labels) l = label(random);
    network.backend().upload(network.labels(), labels.data(), labels.size() * sizeof(std::int32_t));
}

float lossAt(Network& network) {
    network.forward(Phase::Training);
    network.computeLoss();
    return network.downloadLoss();
}

// Central differences on a sample of parameters against backward()'s gradients.
void expectGradientsMatch(const NetworkSpec& spec, std::uint64_t seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto backend = createBackend("cpu-ref");
    Network network(spec, *backend, 3, seed);
    fillRandom(network, seed);
    lossAt(network);
    network.backward();
    std::vector<float> analytic(network.parameterCount());
    backend->download(analytic.data(), network.gradients(), analytic.size() * sizeof(float));

    std::mt19937 random{std::uint32_t(seed)};
    const float step = 1e-2f;
    for (const ParameterInfo& parameter : network.parameterInfo()) {
        SCOPED_TRACE(parameter.name);
        for (int sample = 0; sample < 6; ++sample) {
            std::size_t index = parameter.offset + random() % parameter.count();
            float* where = network.parameters() + index;
            float original = *where;  // cpu-ref memory is host memory
            *where = original + step;
            double plus = lossAt(network);
            *where = original - step;
            double minus = lossAt(network);
            *where = original;
            double numeric = (plus - minus) / (2.0 * step);
            EXPECT_NEAR(analytic[index], numeric, 2e-2 * std::max(1.0, std::abs(numeric)))
                << "at flat index " << index;
        }
    }
}

TEST(NetworkGradients, ConvolutionsWithStridePaddingAndGroups) {
    expectGradientsMatch(chain(4, 7, {node("c1", "Conv2D", {}, {{"filters", 6}, {"kernel", 3}, {"padding", "same"}}),
                                      node("c2", "Conv2D", {}, {{"filters", 4}, {"kernel", 3}, {"stride", 2}, {"groups", 2}}),
                                      node("dw", "Conv2D", {}, {{"filters", 4}, {"kernel", 2}, {"groups", 4}, {"bias", false}})}),
                         11);
}

TEST(NetworkGradients, SeparableConvolution) {
    expectGradientsMatch(chain(3, 6, {node("s", "SeparableConv2D", {}, {{"filters", 5}, {"kernel", 3}, {"padding", 1}})}), 12);
}

TEST(NetworkGradients, PoolingBatchNormAndActivations) {
    expectGradientsMatch(chain(2, 9, {node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", 2}}),
                                      node("bn", "BatchNorm2D", {}),
                                      node("leaky", "LeakyReLU", {}, {{"alpha", 0.1}}),
                                      node("max", "MaxPool2D", {}, {{"kernel", 2}}),
                                      node("elu", "ELU", {}),
                                      node("avg", "AvgPool2D", {}, {{"kernel", 3}, {"stride", 1}, {"padding", 1}}),
                                      node("relu", "ReLU", {}),
                                      node("gap", "GlobalAvgPool", {})}),
                         13);
}

// BatchNorm2D -> ReLU -> MaxPool2D trains as one fused chain (Layer::forwardWithReluMaxPool):
// the network hands the chain's op the ReLU's and the pooling's buffers and gradients.
TEST(NetworkGradients, BatchNormReluMaxPoolChain) {
    expectGradientsMatch(chain(2, 8, {node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", 3}, {"padding", "same"}}),
                                      node("bn", "BatchNorm2D", {}),
                                      node("relu", "ReLU", {}),
                                      node("max", "MaxPool2D", {}, {{"kernel", 2}}),
                                      node("c2", "Conv2D", {}, {{"filters", 3}, {"kernel", 3}}),
                                      node("bn2", "BatchNorm2D", {}),
                                      node("relu2", "ReLU", {}),
                                      node("max2", "MaxPool2D", {}, {{"kernel", 2}})}),
                         14);
}

TEST(NetworkGradients, SiluAfterConvolution) {
    expectGradientsMatch(chain(2, 6, {node("c", "Conv2D", {}, {{"filters", 3}, {"kernel", 3}, {"padding", "same"}}),
                                      node("silu", "SiLU", {}),
                                      node("gap", "GlobalAvgPool", {})}),
                         17);
}

TEST(NetworkGradients, DenseAndDropout) {
    expectGradientsMatch(chain(1, 5, {node("f", "Flatten", {}), node("d", "Dense", {}, {{"units", 8}}),
                                      node("drop", "Dropout", {}, {{"rate", 0.3}}), node("r", "ReLU", {})}),
                         14);
}

TEST(NetworkGradients, ResidualAddSumsFanOutGradients) {
    // c1 feeds both c2 and the Add: its gradient is the sum of two paths.
    expectGradientsMatch(chain(2, 5, {node("c1", "Conv2D", {}, {{"filters", 3}, {"kernel", 3}, {"padding", "same"}}),
                                      node("c2", "Conv2D", {}, {{"filters", 3}, {"kernel", 3}, {"padding", "same"}}),
                                      node("sum", "Add", {"c1", "c2"}),
                                      node("r", "ReLU", {})}),
                         15);
}

TEST(NetworkGradients, ConcatSplitsGradientsByChannel) {
    expectGradientsMatch(chain(2, 5, {node("a", "Conv2D", {}, {{"filters", 2}, {"kernel", 1}}),
                                      node("b", "Conv2D", {"input"}, {{"filters", 3}, {"kernel", 3}, {"padding", 1}}),
                                      node("cat", "Concat", {"a", "b"}),
                                      node("r", "ELU", {})}),
                         16);
}

TEST(Network, FlatBuffersHoldEveryParameterOnceLastLayersFirst) {
    auto backend = createBackend("cpu-ref");
    Network network(loadPreset("fer-cnn"), *backend, 2, 1);
    EXPECT_EQ(network.parameterInfo().front().name, network.shapes().outputNode + ".weight");
    std::size_t end = 0, total = 0;
    for (const ParameterInfo& p : network.parameterInfo()) {
        EXPECT_GE(p.offset, end) << p.name << " overlaps the slice before it";
        EXPECT_EQ(p.offset % 64, 0u) << p.name << " does not start on a 256-byte boundary";
        end = p.offset + p.count();
        total += p.count();
    }
    EXPECT_EQ(total, 3506503u);
    EXPECT_EQ(end, network.parameterCount());

    std::size_t covered = 0;
    network.setGradientsReadyHook([&](std::size_t offset, std::size_t count) {
        EXPECT_EQ(offset, covered) << "gradient slices must arrive front to back";
        covered += count;
    });
    fillRandom(network, 3);
    lossAt(network);
    network.backward();
    EXPECT_EQ(covered, network.parameterCount());
}

TEST(Network, SameSeedGivesSameInitialWeights) {
    auto backend = createBackend("cpu-ref");
    NetworkSpec spec = loadPreset("lenet5");
    Network a(spec, *backend, 1, 42), b(spec, *backend, 1, 42), c(spec, *backend, 1, 43);
    std::vector<float> wa(a.parameters(), a.parameters() + a.parameterCount());
    std::vector<float> wb(b.parameters(), b.parameters() + b.parameterCount());
    std::vector<float> wc(c.parameters(), c.parameters() + c.parameterCount());
    EXPECT_EQ(wa, wb);
    EXPECT_NE(wa, wc);
}

TEST(TrainingStep, LossFallsOnAFixedBatch) {
    auto backend = createBackend("cpu-ref");
    Network network(chain(1, 8, {node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", 3}}), node("r", "ReLU", {})}),
                    *backend, 8, 5);
    fillRandom(network, 5);
    OptimizerConfig config;
    config.learningRate = 0.05f;
    Optimizer optimizer(config, *backend, network.parameterCount());
    TrainingStep step(network, optimizer);
    float first = lossAt(network);
    for (std::uint32_t i = 0; i < 40; ++i) step.run(config.learningRate, i);
    EXPECT_LT(lossAt(network), 0.5f * first);
}

// Heap bytes in use, as glibc counts them (arenas and mmapped blocks); an allocator that
// replaces malloc (a sanitizer's) may report nothing.
std::size_t heapBytesInUse() {
    const struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

NetworkSpec twoConvolutions() {
    return chain(3, 32, {node("c1", "Conv2D", {}, {{"filters", 16}, {"kernel", 3}, {"padding", 1}}),
                         node("r1", "ReLU", {}),
                         node("c2", "Conv2D", {}, {{"filters", 16}, {"kernel", 3}, {"padding", 1}}),
                         node("r2", "ReLU", {})});
}

TEST(Network, BuiltForInferenceAllocatesAboutHalf) {
    auto backend = createBackend("cpu-ref");
    const int batch = 32;
    const std::size_t start = heapBytesInUse();
    auto training = std::make_unique<Network>(twoConvolutions(), *backend, batch, 7);
    const std::size_t afterTraining = heapBytesInUse();
    auto inference = std::make_unique<Network>(twoConvolutions(), *backend, batch, 7, NetworkUse::Inference);
    const std::size_t trainingBytes = afterTraining - start, inferenceBytes = heapBytesInUse() - afterTraining;
    // Less than one activation: this heap is not where the backend allocates (a sanitizer's).
    const std::size_t oneActivation = std::size_t(batch) * 16 * 32 * 32 * sizeof(float);
    if (trainingBytes < oneActivation) GTEST_SKIP() << "this allocator does not report its heap";
    EXPECT_LT(double(inferenceBytes), 0.6 * double(trainingBytes))
        << inferenceBytes << " bytes for inference, " << trainingBytes << " for training";
}

TEST(Network, BuiltForInferencePredictsAlikeAndRefusesGradients) {
    auto backend = createBackend("cpu-ref");
    const int batch = 4;
    Network training(twoConvolutions(), *backend, batch, 7);
    Network inference(twoConvolutions(), *backend, batch, 7, NetworkUse::Inference);
    fillRandom(training, 7);
    inference.input().fromHost(training.input().toHost());
    training.forward(Phase::Inference);
    inference.forward(Phase::Inference);
    EXPECT_EQ(inference.logits().toHost(), training.logits().toHost());
    testing::expectError([&] { inference.backward(); }, "Network::backward", {"built for inference"});
    testing::expectError([&] { inference.explainLogits(std::vector<int>(batch, 0), "c2"); },
                         "Network::explainLogits", {"built for inference"});
    testing::expectError([&] { inference.activationGradient("c2"); }, "Network::activationGradient",
                         {"built for inference"});
}

TEST(Network, RejectsBadBatchAndBadLossOptions) {
    auto backend = createBackend("cpu-ref");
    NetworkSpec spec = loadPreset("lenet5");
    EXPECT_THROW(Network(spec, *backend, 0, 1), Error);
    Network network(spec, *backend, 2, 1);
    EXPECT_THROW(network.setLossOptions({{1.0f, 2.0f}, 0.0f}), Error);
    EXPECT_THROW(network.setLossOptions({{}, 1.5f}), Error);
}

}  // namespace
}  // namespace cnnstudio
