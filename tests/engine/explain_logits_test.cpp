// Network::explainLogits, the gradient Grad-CAM weighs: checked on cpu-ref against central
// differences of the logit with respect to the explained activation. The differences are taken
// on a second network, the "head" that starts at the explained activation and shares every
// later weight, because the explained activation cannot be perturbed inside the full network
// (its forward recomputes it).
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "spec_builders.h"

namespace cnnstudio {
namespace {

using spec_testing::input;
using spec_testing::network;
using spec_testing::node;

constexpr std::uint64_t kSeed = 20261201;
constexpr int kBatch = 2;

// conv1 -> bn1 -> relu1 -> conv2 (explained) -> bn2 -> relu2 -> dropout -> gap -> dense: batch
// norm and dropout are where inference differs from training.
std::vector<NodeSpec> headNodes() {
    return {node("bn2", "BatchNorm2D", {"conv2"}),
            node("relu2", "ReLU", {"bn2"}),
            node("drop", "Dropout", {"relu2"}, {{"rate", 0.5}}),
            node("gap", "GlobalAvgPool", {"drop"}),
            node("flat", "Flatten", {"gap"}),
            node("logits", "Dense", {"flat"}, {{"units", 4}})};
}

NetworkSpec fullSpec() {
    std::vector<NodeSpec> nodes = {input(2, 8, 8),
                                   node("conv1", "Conv2D", {"input"}, {{"filters", 3}, {"kernel", 3}}),
                                   node("bn1", "BatchNorm2D", {"conv1"}),
                                   node("relu1", "ReLU", {"bn1"}),
                                   node("conv2", "Conv2D", {"relu1"}, {{"filters", 5}, {"kernel", 3}})};
    for (NodeSpec& n : headNodes()) nodes.push_back(n);
    return network(nodes, "explain-full");
}

// The layers after conv2, fed conv2's output (5 maps of 4x4) as their input.
NetworkSpec headSpec() {
    std::vector<NodeSpec> nodes = {input(5, 4, 4, "conv2")};
    for (NodeSpec& n : headNodes()) nodes.push_back(n);
    return network(nodes, "explain-head");
}

// Running statistics away from (0, 1), so that inference batch norm is not the identity.
void randomiseRunningStatistics(Network& net, std::mt19937& random) {
    std::uniform_real_distribution<float> mean(-0.5f, 0.5f), variance(0.3f, 2.0f);
    std::vector<NamedTensor> tensors = networkTensors(net);
    for (NamedTensor& tensor : tensors) {
        if (tensor.name.ends_with("running_mean"))
            for (float& v : tensor.values) v = mean(random);
        if (tensor.name.ends_with("running_var"))
            for (float& v : tensor.values) v = variance(random);
    }
    loadNetworkTensors(net, tensors, "test");
}

std::vector<NamedTensor> tensorsOfHead(Network& full, Network& head) {
    std::vector<NamedTensor> all = networkTensors(full), kept;
    for (const NamedTensor& headTensor : networkTensors(head))
        for (const NamedTensor& tensor : all)
            if (tensor.name == headTensor.name) kept.push_back(tensor);
    return kept;
}

std::vector<float> randomImages(const Network& net, std::mt19937& random) {
    std::normal_distribution<float> normal;
    std::vector<float> images(std::size_t(net.inputShape().count()));
    for (float& v : images) v = normal(random);
    return images;
}

TEST(ExplainLogits, GradientMatchesFiniteDifferencesOfTheLogit) {
    SCOPED_TRACE("seed " + std::to_string(kSeed));
    std::mt19937 random{std::uint32_t(kSeed)};
    auto backend = createBackend("cpu-ref");
    Network full(fullSpec(), *backend, kBatch, kSeed);
    randomiseRunningStatistics(full, random);
    full.input().fromHost(randomImages(full, random));
    const std::vector<int> classes = {1, 3};
    full.explainLogits(classes, "conv2");
    const std::vector<float> activation = full.activation("conv2").toHost();
    const std::vector<float> analytic = full.activationGradient("conv2").toHost();
    // relu2's input: a difference step that crosses its kink measures neither side's slope.
    const std::vector<float> beforeRelu = full.activation("bn2").toHost();

    Network head(headSpec(), *backend, kBatch, kSeed);
    loadNetworkTensors(head, tensorsOfHead(full, head), "test");
    auto logitAt = [&](const std::vector<float>& headInput, int image) {
        head.input().fromHost(headInput);
        head.forward(Phase::Inference);
        return double(head.logits().toHost()[std::size_t(image * head.classes() + classes[std::size_t(image)])]);
    };
    const std::size_t perImage = activation.size() / kBatch;
    const float step = 1e-3f;
    int checked = 0;
    for (std::size_t index = 0; index < activation.size(); index += 3) {
        if (std::abs(beforeRelu[index]) < 10 * step) continue;  // the batch norm scales by at most 1.9 here
        const int image = int(index / perImage);
        std::vector<float> shifted = activation;
        shifted[index] = activation[index] + step;
        const double plus = logitAt(shifted, image);
        shifted[index] = activation[index] - step;
        const double minus = logitAt(shifted, image);
        const double numeric = (plus - minus) / (2.0 * step);
        EXPECT_NEAR(analytic[index], numeric, 2e-3 * std::max(1.0, std::abs(numeric))) << "at element " << index;
        ++checked;
    }
    EXPECT_GT(checked, 40);
}

TEST(ExplainLogits, LogitsEqualThoseOfTheFusedInferenceForward) {
    std::mt19937 random{std::uint32_t(kSeed + 1)};
    auto backend = createBackend("cpu-ref");
    Network net(fullSpec(), *backend, kBatch, kSeed);
    randomiseRunningStatistics(net, random);
    net.input().fromHost(randomImages(net, random));
    net.forward(Phase::Inference);
    const std::vector<float> fused = net.logits().toHost();
    net.explainLogits({0, 0}, "relu1");
    const std::vector<float> unfused = net.logits().toHost();
    ASSERT_EQ(fused.size(), unfused.size());
    for (std::size_t i = 0; i < fused.size(); ++i) EXPECT_NEAR(fused[i], unfused[i], 1e-5) << i;
}

TEST(ExplainLogits, GradientOfTheLogitsThemselvesIsTheOneHotSeed) {
    auto backend = createBackend("cpu-ref");
    Network net(fullSpec(), *backend, kBatch, kSeed);
    net.explainLogits({2, 0}, "logits");
    EXPECT_EQ(net.activationGradient("logits").toHost(),
              (std::vector<float>{0, 0, 1, 0, 1, 0, 0, 0}));
}

TEST(ExplainLogits, LastConvolutionalLayerIsTheLastSpatialConvolution) {
    auto backend = createBackend("cpu-ref");
    Network net(fullSpec(), *backend, 1, kSeed);
    EXPECT_EQ(net.lastConvolutionalLayer(), "conv2");
    Network dense(network({input(1, 4, 4), node("flat", "Flatten", {"input"}),
                           node("logits", "Dense", {"flat"}, {{"units", 2}})}),
                  *backend, 1, kSeed);
    EXPECT_THROW(dense.lastConvolutionalLayer(), Error);
}

TEST(ExplainLogits, RefusesAClassOutsideTheNetworkAndAnUnknownNode) {
    auto backend = createBackend("cpu-ref");
    Network net(fullSpec(), *backend, kBatch, kSeed);
    EXPECT_THROW(net.explainLogits({0, 4}, "conv2"), Error);
    EXPECT_THROW(net.explainLogits({0}, "conv2"), Error);
    EXPECT_THROW(net.explainLogits({0, 1}, "no-such-node"), Error);
    EXPECT_THROW(net.explainLogits({0, 1}, "input"), Error);
    EXPECT_THROW(net.activationGradient("input"), Error);
}

}  // namespace
}  // namespace cnnstudio
