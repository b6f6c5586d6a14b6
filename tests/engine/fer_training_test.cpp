// Training FER2013-shaped networks from their first steps, and evaluating them with test-time
// augmentation. The stall of issue #12 (fer-cnn's SGD recipe learned nothing for 14 epochs) was
// made much worse by the class-score layer's initialisation: these tests pin that layer's
// initialisation and fer-cnn's first loss (docs/experiments/fer2013.md, "The stall").
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/trainer.h"
#include "engine/expect_error.h"
#include "synthetic_batches.h"

namespace cnnstudio {
namespace {

using testing::expectError;
using testing::InMemoryBatchSource;
using testing::SyntheticImages;

constexpr int kFerClasses = 7;
constexpr std::uint64_t kSeed = 7;

// Normalised FER-shaped images (1 x 48 x 48): Gaussian noise with class c's bright 8x8 square
// at its own place, so that a network can learn them within a few steps.
std::vector<float> ferShapedImages(int count, std::uint64_t seed, std::vector<std::int32_t>& labels) {
    std::mt19937_64 random(seed);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    std::vector<float> images;
    labels.clear();
    for (int i = 0; i < count; ++i) {
        const int label = int(random() % kFerClasses);
        const int top = 4 + (label % 4) * 10, left = 4 + (label / 4) * 20;
        for (int y = 0; y < 48; ++y)
            for (int x = 0; x < 48; ++x) {
                const bool inside = y >= top && y < top + 8 && x >= left && x < left + 8;
                images.push_back((inside ? 2.0f : 0.0f) + noise(random));
            }
        labels.push_back(label);
    }
    return images;
}

double standardDeviation(const std::vector<float>& values) {
    const double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
    double squares = 0;
    for (float v : values) squares += (v - mean) * (v - mean);
    return std::sqrt(squares / double(values.size()));
}

const NamedTensor& tensorNamed(const std::vector<NamedTensor>& tensors, const std::string& name) {
    for (const NamedTensor& tensor : tensors)
        if (tensor.name == name) return tensor;
    throw Error("no tensor " + name, "test");
}

// The class-score layer starts at N(0, 0.01^2), the hidden ones that feed a ReLU at He's
// N(0, 2 / fan_in): fer-cnn's fc1 reads 256 x 6 x 6 = 9216 values.
TEST(FerCnnInitialisation, ClassScoreWeightsAreSmallAndHiddenWeightsAreHe) {
    std::unique_ptr<Backend> backend = createBackend("cpu");
    Network network(loadPreset("fer-cnn"), *backend, 1, kSeed);
    const std::vector<NamedTensor> tensors = networkTensors(network);
    EXPECT_NEAR(standardDeviation(tensorNamed(tensors, "logits.weight").values), 0.01, 0.001);
    EXPECT_NEAR(standardDeviation(tensorNamed(tensors, "fc1.weight").values), std::sqrt(2.0 / 9216), 0.001);
    EXPECT_NEAR(standardDeviation(tensorNamed(tensors, "conv2_1.weight").values), std::sqrt(2.0 / (64 * 9)), 0.002);
}

// With Glorot class-score weights the first loss was 3.6-3.9 (logits of std ~1.8) instead of
// ln 7 = 1.946: the symptom that preceded the stall.
TEST(FerCnnInitialisation, FirstLossIsThatOfAUniformGuess) {
    std::unique_ptr<Backend> backend = createBackend("cpu");
    constexpr int kBatch = 16;
    Network network(loadPreset("fer-cnn"), *backend, kBatch, kSeed);
    std::vector<std::int32_t> labels;
    network.input().fromHost(ferShapedImages(kBatch, kSeed, labels));
    backend->upload(network.labels(), labels.data(), labels.size() * sizeof(std::int32_t));
    network.forward(Phase::Training);
    network.computeLoss();
    EXPECT_NEAR(network.downloadLoss(), std::log(double(kFerClasses)), 0.1);
}

// ---- test-time augmentation ------------------------------------------------------------------

TestTimeAugmentation ttaOf(const std::string& kind, int padding = 4, std::vector<float> fill = {}) {
    TestTimeAugmentation tta;
    tta.kind = kind;
    tta.padding = padding;
    tta.fill = std::move(fill);
    return tta;
}

TEST(TestTimeAugmentation, ViewsAreOneTwoAndTen) {
    EXPECT_EQ(ttaOf("none").views(), 1);
    EXPECT_EQ(ttaOf("flip").views(), 2);
    EXPECT_EQ(ttaOf("tencrop").views(), 10);
    EXPECT_THROW(ttaOf("fivecrop").views(), Error);
}

// A 1 x 3 x 4 image with values 0..11, padding 1, fill -5: view 1 is the top-left window
// (out(y, x) = in(y - 1, x - 1)), view 4 the bottom-right (in(y + 1, x + 1)), view 5 the mirror.
TEST(TestTimeAugmentation, TencropWindowsAreTheCornersAndCentreOfThePaddedImage) {
    const TestTimeAugmentation tta = ttaOf("tencrop", 1, {-5.0f});
    std::vector<float> image(12);
    std::iota(image.begin(), image.end(), 0.0f);
    const TensorShape shape{1, 1, 3, 4};
    std::vector<float> out(12);
    makeTestTimeView(tta, 0, image, 1, shape, out);
    EXPECT_EQ(out, image);
    makeTestTimeView(tta, 1, image, 1, shape, out);
    EXPECT_EQ(out, (std::vector<float>{-5, -5, -5, -5, -5, 0, 1, 2, -5, 4, 5, 6}));
    makeTestTimeView(tta, 4, image, 1, shape, out);
    EXPECT_EQ(out, (std::vector<float>{5, 6, 7, -5, 9, 10, 11, -5, -5, -5, -5, -5}));
    makeTestTimeView(tta, 5, image, 1, shape, out);
    EXPECT_EQ(out, (std::vector<float>{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));
    makeTestTimeView(tta, 6, image, 1, shape, out);  // the top-left window of the mirror
    EXPECT_EQ(out, (std::vector<float>{-5, -5, -5, -5, -5, 3, 2, 1, -5, 7, 6, 5}));
    EXPECT_THROW(makeTestTimeView(tta, 10, image, 1, shape, out), Error);
}

struct EvaluationFixture {
    SyntheticImages data = testing::makeSyntheticImages(21, kSeed);
    std::unique_ptr<Backend> backend = createBackend("cpu-ref");
    Network network{testing::tinyNetworkSpec(), *backend, 8, kSeed};
};

// Every image mirrored onto itself: the flip view is the image, so flip TTA is plain evaluation.
TEST(TestTimeAugmentation, FlipOfMirrorSymmetricImagesEqualsPlainEvaluation) {
    EvaluationFixture f;
    for (std::size_t i = 0; i < f.data.size(); ++i)
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 4; ++x)
                f.data.images[i * 64 + std::size_t(y * 8 + 7 - x)] = f.data.images[i * 64 + std::size_t(y * 8 + x)];
    InMemoryBatchSource plainSource(f.data, 8, false, kSeed), flipSource(f.data, 8, false, kSeed);
    const EvaluationResult plain = evaluate(f.network, plainSource);
    const EvaluationResult flipped = evaluate(f.network, flipSource, nullptr, ttaOf("flip"));
    EXPECT_EQ(flipped.confusion.toJson(), plain.confusion.toJson());
    EXPECT_NEAR(flipped.loss, plain.loss, 1e-5);
}

// What evaluation should give when each image's probabilities are averaged over `networks` and
// the views of `tta`, computed image by image, view by view, with plain forward passes.
EvaluationResult expectedAveragedEvaluation(const std::vector<Network*>& networks, const SyntheticImages& data,
                                            const TestTimeAugmentation& tta) {
    const int classes = 3, predictions = tta.views() * int(networks.size());
    const TensorShape shape{1, 1, 8, 8};
    EvaluationResult expected;
    expected.confusion = ConfusionMatrix(classes);
    double lossSum = 0;
    for (std::size_t i = 0; i < data.size(); ++i) {
        const std::vector<float> image(data.images.begin() + std::ptrdiff_t(i * 64),
                                       data.images.begin() + std::ptrdiff_t(i * 64 + 64));
        std::vector<double> mean(classes, 0.0);
        for (int view = 0; view < tta.views(); ++view)
            for (Network* network : networks) {
                std::vector<float> input(std::size_t(network->batch()) * 64, 0.0f), viewed(64);
                makeTestTimeView(tta, view, image, 1, shape, viewed);
                std::copy(viewed.begin(), viewed.end(), input.begin());
                network->input().fromHost(input);
                network->forward(Phase::Inference);
                const std::vector<float> logits = network->logits().toHost();
                double sum = 0;
                for (int c = 0; c < classes; ++c) sum += std::exp(double(logits[std::size_t(c)]));
                for (int c = 0; c < classes; ++c)
                    mean[std::size_t(c)] += std::exp(double(logits[std::size_t(c)])) / sum / predictions;
            }
        const int label = data.labels[i];
        expected.confusion.add(label, int(std::max_element(mean.begin(), mean.end()) - mean.begin()));
        lossSum -= std::log(mean[std::size_t(label)]);
    }
    expected.loss = lossSum / double(data.size());
    return expected;
}

// Tencrop predicts the class of the mean of the ten views' softmax probabilities.
TEST(TestTimeAugmentation, TencropAveragesTheProbabilitiesOfTenViews) {
    EvaluationFixture f;
    const TestTimeAugmentation tta = ttaOf("tencrop", 2, {-1.0f});
    InMemoryBatchSource source(f.data, 8, false, kSeed);
    const EvaluationResult result = evaluate(f.network, source, nullptr, tta);
    const EvaluationResult expected = expectedAveragedEvaluation({&f.network}, f.data, tta);
    EXPECT_EQ(result.confusion.toJson(), expected.confusion.toJson());
    EXPECT_NEAR(result.loss, expected.loss, 1e-5);
}

// An ensemble predicts the class of the mean of its networks' probabilities, over the views of
// its test-time augmentation too.
TEST(EnsembleEvaluation, AveragesTheProbabilitiesOfItsNetworksAndViews) {
    EvaluationFixture f;
    Network other{testing::tinyNetworkSpec(), *f.backend, 8, kSeed + 1};
    for (const char* kind : {"none", "flip"}) {
        InMemoryBatchSource source(f.data, 8, false, kSeed);
        const EvaluationResult result = evaluate({&f.network, &other}, source, nullptr, ttaOf(kind));
        const EvaluationResult expected = expectedAveragedEvaluation({&f.network, &other}, f.data, ttaOf(kind));
        EXPECT_EQ(result.confusion.toJson(), expected.confusion.toJson()) << kind;
        EXPECT_NEAR(result.loss, expected.loss, 1e-5) << kind;
    }
}

// The host's averaging of an ensemble agrees with the backend's metrics of one network.
TEST(EnsembleEvaluation, OfOneNetworkTwiceIsThatNetworkAlone) {
    EvaluationFixture f;
    InMemoryBatchSource alone(f.data, 8, false, kSeed), twice(f.data, 8, false, kSeed);
    const EvaluationResult plain = evaluate(f.network, alone);
    const EvaluationResult doubled = evaluate({&f.network, &f.network}, twice);
    EXPECT_EQ(doubled.confusion.toJson(), plain.confusion.toJson());
    EXPECT_NEAR(doubled.loss, plain.loss, 1e-5);
}

TEST(EnsembleEvaluation, NetworksOfAnotherShapeAreRefusedNamingWhich) {
    EvaluationFixture f;
    NetworkSpec fourClasses = testing::tinyNetworkSpec();
    fourClasses.nodes.back().params["units"] = 4;
    Network other{fourClasses, *f.backend, 8, kSeed};
    Network wider{testing::tinyNetworkSpec(), *f.backend, 16, kSeed};
    InMemoryBatchSource source(f.data, 8, false, kSeed);
    expectError([&] { evaluate({&f.network, &other}, source); }, "network 2 of the ensemble", {"4 classes"});
    expectError([&] { evaluate({&f.network, &f.network, &wider}, source); }, "network 3 of the ensemble", {"batch"});
    expectError([&] { evaluate(std::vector<Network*>{}, source); }, "evaluation", {"no network"});
}

}  // namespace
}  // namespace cnnstudio
