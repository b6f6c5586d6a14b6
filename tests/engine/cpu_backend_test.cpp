// Behaviour of the `cpu` backend that the conformance suite (every op against cpu-ref on
// random data) does not pin: thread settings, the precisions it trains in and the activation
// format of each, in-place ReLU, plan reuse across geometries, layout staging across ops of
// different sizes, and the errors bad input gives.
#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cnnstudio/kernels/cpu_backends.h"
#include "backend_test_support.h"
#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/tensor.h"
#include "engine/expect_error.h"

namespace cnnstudio {
namespace {

std::unique_ptr<Backend> cpuBackend(int threads = 2) {
    BackendOptions options;
    options.threads = threads;
    return createCpuBackend(options);
}

TEST(CpuBackend, DescriptionNamesOneDnnVersionAndThreadCount) {
    auto backend = cpuBackend(3);
    EXPECT_EQ(backend->name(), "cpu");
    EXPECT_FALSE(backend->isDevice());
    EXPECT_NE(backend->description().find("oneDNN 2."), std::string::npos)
        << backend->description();
    EXPECT_NE(backend->description().find(", 3 threads"), std::string::npos)
        << backend->description();
}

TEST(CpuBackend, ZeroThreadsMeansEveryCore) {
    auto backend = cpuBackend(0);
    std::string expected = ", " + std::to_string(omp_get_num_procs()) + " thread";
    EXPECT_NE(backend->description().find(expected), std::string::npos)
        << backend->description();
}

// Every way into the backend (a resumed config.json, the GUI, cnnstudio-live) meets this check:
// libgomp crashed creating 100000 threads.
TEST(CpuBackend, ThreadCountBeyondTheMaximumIsAnError) {
    testing::expectError([] { cpuBackend(kMaxCpuThreads + 1); }, "cpu backend", {"4097", "out of range 0..4096"});
    testing::expectError([] { cpuBackend(100000); }, "cpu backend", {"100000"});
}

TEST(CpuBackend, NegativeThreadsTf32OrBf16WithoutBf16InstructionsAreErrors) {
    EXPECT_THROW(cpuBackend(-1), Error);
    BackendOptions tf32;
    tf32.precision = Precision::Tf32;
    EXPECT_THROW(createCpuBackend(tf32), Error);
    BackendOptions bf16;
    bf16.precision = Precision::Bf16;
    const std::string why = cpuPrecisionUnavailableReason(Precision::Bf16);
    if (why.empty()) {
        EXPECT_EQ(createCpuBackend(bf16)->precision(), Precision::Bf16);
    } else {
        EXPECT_NE(why.find("AVX512-BF16 or AMX"), std::string::npos) << why;
        try {
            createCpuBackend(bf16);
            ADD_FAILURE() << "bf16 without bf16 instructions must be refused";
        } catch (const Error& error) {
            EXPECT_NE(std::string(error.what()).find(why), std::string::npos) << error.what();
        }
    }
}

// fp32 stores activations fp32 NCHW; bf16 stores them bf16 channels-last, as the GPU backends'
// bf16 does: element (n, c, h, w) at ((n H + h) W + w) C + c, rounded to nearest even, read back
// exactly.
TEST(CpuBackend, Bf16StoresActivationsBf16ChannelsLast) {
    EXPECT_EQ(cpuBackend()->activationFormat(), ActivationFormat{});
    if (std::string why = cpuPrecisionUnavailableReason(Precision::Bf16); !why.empty()) GTEST_SKIP() << why;
    BackendOptions options;
    options.precision = Precision::Bf16;
    auto backend = createCpuBackend(options);
    EXPECT_EQ(backend->activationFormat(), (ActivationFormat{true, true}));
    EXPECT_EQ(backend->activationBytes(10), 20u);

    test::SeededRandom random;
    const TensorShape shape{2, 3, 4, 5};
    std::vector<float> values = random.uniforms(std::size_t(shape.count()), -10.0f, 10.0f);
    for (float& value : values)  // bf16 values (the upper half of the bits), but for one tie
        value = std::bit_cast<float>(std::bit_cast<std::uint32_t>(value) & 0xffff0000u);
    values[7] = 1.0f + 0x1p-8f;  // halfway between 1 and the next bf16: rounds to even, 1
    Tensor stored = test::activationsFromHost(*backend, shape, values);
    std::vector<std::uint16_t> bits(values.size());
    std::memcpy(bits.data(), stored.data(), bits.size() * sizeof(std::uint16_t));
    for (int n = 0; n < shape.batch; ++n)
        for (int c = 0; c < shape.channels; ++c)
            for (int h = 0; h < shape.height; ++h)
                for (int w = 0; w < shape.width; ++w) {
                    const std::size_t nchw = std::size_t(((n * shape.channels + c) * shape.height + h) * shape.width + w);
                    const std::size_t nhwc = std::size_t(((n * shape.height + h) * shape.width + w) * shape.channels + c);
                    const float expected = nchw == 7 ? 1.0f : values[nchw];
                    EXPECT_EQ(bits[nhwc], std::bit_cast<std::uint32_t>(expected) >> 16)
                        << "element (" << n << ", " << c << ", " << h << ", " << w << ")";
                }
    std::vector<float> expected = values;
    expected[7] = 1.0f;
    EXPECT_TRUE(test::identical(stored.toHost(), expected, "activations downloaded again"));
}

// bf16 dlogits (2 bytes each) written over the fp32 probabilities they are computed from would
// overwrite probabilities not yet read: refused, as on the GPU backends. fp32 may run in place.
TEST(CpuBackend, Bf16LossGradientIsNotComputedInPlaceOverTheProbabilities) {
    if (std::string why = cpuPrecisionUnavailableReason(Precision::Bf16); !why.empty()) GTEST_SKIP() << why;
    BackendOptions options;
    options.precision = Precision::Bf16;
    auto backend = createCpuBackend(options);
    const LossGeometry g{2, 3};
    std::vector<float> probabilities = {0.2f, 0.3f, 0.5f, 0.1f, 0.1f, 0.8f};
    const std::vector<std::int32_t> labels = {0, 2};
    testing::expectError(
        [&] {
            backend->softmaxCrossEntropyBackward(g, probabilities.data(), labels.data(), nullptr,
                                                 probabilities.data());
        },
        "cpu softmaxCrossEntropyBackward", {"in place", "its own buffer"});
}

// Ten fer-cnn training steps in bf16 (bf16 channels-last activations, convolutions on AMX or
// AVX512-BF16) give the losses of fp32 on the same backend, within what bf16 allows (5.6%, as on
// the GPU backends' bf16), and learn: the loss on the fixed batch falls. A small
// learning rate, as the GPU backends' test has: at 0.01 four images with dropout swing the loss
// between 0.0002 and 2.4 within ten steps, in fp32 alone, and the two runs part after three.
TEST(CpuBackend, FerCnnTrainedInBf16FollowsFp32) {
    if (std::string why = cpuPrecisionUnavailableReason(Precision::Bf16); !why.empty()) GTEST_SKIP() << why;
    const NetworkSpec spec = loadPreset("fer-cnn");
    const int batch = 4;
    std::mt19937 generator(11);
    std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
    std::vector<float> images(std::size_t(batch) * 48 * 48);
    for (float& value : images) value = pixel(generator);
    std::vector<std::int32_t> labels(static_cast<std::size_t>(batch));
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = std::int32_t(i % 7);

    auto lossesOf = [&](Precision precision) {
        BackendOptions options;
        options.threads = 2;
        options.precision = precision;
        auto backend = createCpuBackend(options);
        Network network(spec, *backend, batch, 7);
        network.input().fromHost(images);
        backend->upload(network.labels(), labels.data(), labels.size() * sizeof(std::int32_t));
        OptimizerConfig config;
        config.learningRate = 0.001f;
        config.momentum = 0.9f;
        Optimizer optimizer(config, *backend, network.parameterCount());
        TrainingStep step(network, optimizer);
        std::vector<float> losses;
        for (std::uint32_t i = 0; i < 10; ++i) {
            step.run(config.learningRate, i);
            losses.push_back(network.downloadLoss());
        }
        return losses;
    };
    const std::vector<float> fp32 = lossesOf(Precision::Fp32), bf16 = lossesOf(Precision::Bf16);
    EXPECT_LT(test::relativeError(bf16, fp32), 0.056) << "losses over ten steps";
    EXPECT_LT(bf16.back(), bf16.front()) << "the loss on a fixed batch falls";
}

TEST(CpuBackend, OpsLeaveTheCallersOpenMpThreadCountAlone) {
    const int before = omp_get_max_threads();
    auto backend = cpuBackend(before + 1);
    std::vector<float> y(100000);
    backend->fill(y.data(), 2.0f, y.size());
    EXPECT_EQ(omp_get_max_threads(), before);
    EXPECT_EQ(y.back(), 2.0f);
}

// Layers may run ReLU and leaky ReLU in place (x == y, dx == dy), as nn.ReLU(inplace=True);
// the backward must still see the right slope. (ELU's backward needs x itself.)
TEST(CpuBackend, InPlaceReluBackpropagatesCorrectly) {
    auto backend = cpuBackend();
    const std::vector<float> input = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};
    const std::vector<float> dy = {1, 1, 1, 1, 1};
    struct Case {
        Activation kind;
        float alpha;
        std::vector<float> slope;
    };
    const std::vector<Case> cases = {
        {Activation::Relu, 0.0f, {0, 0, 0, 1, 1}},
        {Activation::LeakyRelu, 0.1f, {0.1f, 0.1f, 0.1f, 1, 1}},
    };
    for (const Case& c : cases) {
        std::vector<float> data = input, gradient = dy;
        backend->activationForward(c.kind, c.alpha, data.data(), data.data(), data.size());
        backend->activationBackward(c.kind, c.alpha, data.data(), data.data(), gradient.data(),
                                    gradient.data(), gradient.size());
        for (std::size_t i = 0; i < gradient.size(); ++i)
            EXPECT_NEAR(gradient[i], c.slope[i], 1e-6f) << "activation " << int(c.kind) << " at x = "
                                                   << input[i];
    }
}

// Plans are cached per geometry: alternating two geometries must not mix them up.
TEST(CpuBackend, AlternatingGeometriesKeepTheirOwnPlans) {
    auto backend = cpuBackend();
    for (int round = 0; round < 2; ++round)
        for (int size : {2, 3}) {
            DenseGeometry g{1, size, 1};
            std::vector<float> x(std::size_t(size), 1.0f), w(std::size_t(size), 2.0f), y(1);
            backend->denseForward(g, x.data(), w.data(), nullptr, y.data());
            EXPECT_FLOAT_EQ(y[0], 2.0f * float(size)) << "round " << round;
        }
}

ConvGeometry squareConv(int channels, int size) {
    ConvGeometry g;
    g.batch = 2;
    g.inChannels = g.outChannels = channels;
    g.inHeight = g.inWidth = g.outHeight = g.outWidth = size;
    g.kernelHeight = g.kernelWidth = 3;
    g.padHeight = g.padWidth = 1;
    return g;
}

// Convolutions stage blocked copies in buffers shared by every plan; a larger geometry grows
// (moves) them, and plans built earlier must follow.
TEST(CpuBackend, SharedStagingBuffersSurviveGrowth) {
    const unsigned seed = 7;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    auto random = [&](std::int64_t count) {
        std::vector<float> values(static_cast<std::size_t>(count));
        for (float& value : values) value = normal(rng);
        return values;
    };
    auto backend = cpuBackend();
    const ConvGeometry small = squareConv(16, 6), large = squareConv(32, 20);
    const auto x = random(small.inputCount()), w = random(small.weightCount());
    const auto bigX = random(large.inputCount()), bigW = random(large.weightCount());
    std::vector<float> first(small.outputCount()), again(small.outputCount()),
        big(large.outputCount());
    backend->convForward(small, x.data(), w.data(), nullptr, first.data());
    backend->convForward(large, bigX.data(), bigW.data(), nullptr, big.data());
    backend->convForward(small, x.data(), w.data(), nullptr, again.data());
    EXPECT_EQ(first, again) << "seed " << seed;
}

// fer-cnn-sized 3x3 layers (64 channels, batch 16) are where oneDNN's convolution_auto picks
// Winograd on AVX-512 (forward and backward data on one thread); its transforms round
// differently from the direct sum, and must stay within the fp32 tolerance of cpu-ref. The
// conformance suite's small geometries run the direct kernels.
TEST(CpuBackend, WinogradSizedConvolutionsMatchReference) {
    test::SeededRandom random;
    auto backend = cpuBackend(1);
    auto reference = createCpuRefBackend({});
    const ConvGeometry g = test::convGeometry(16, 64, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1);
    const auto x = random.uniforms(std::size_t(g.inputCount()));
    const auto w = random.uniforms(std::size_t(g.weightCount()), -0.05f, 0.05f);
    const auto dy = random.uniforms(std::size_t(g.outputCount()));
    const double tolerance = test::relativeTolerance(Precision::Fp32);
    struct Results {
        Tensor y, dx, dw;
    };
    auto run = [&](Backend& b) {
        Tensor tx = test::tensorFromHost(b, x), tw = test::tensorFromHost(b, w),
               tdy = test::tensorFromHost(b, dy);
        Results r{test::poisonedTensor(b, g.outputCount()), test::poisonedTensor(b, g.inputCount()),
                  test::poisonedTensor(b, g.weightCount())};
        b.convForward(g, tx.data(), tw.data(), nullptr, r.y.data());
        b.convBackwardData(g, tdy.data(), tw.data(), r.dx.data());
        b.convBackwardFilter(g, tx.data(), tdy.data(), r.dw.data(), nullptr);
        return r;
    };
    Results tested = run(*backend), expected = run(*reference);
    EXPECT_TRUE(test::closeTo(tested.y.toHost(), expected.y.toHost(), tolerance, "y"));
    EXPECT_TRUE(test::closeTo(tested.dx.toHost(), expected.dx.toHost(), tolerance, "dx"));
    EXPECT_TRUE(test::closeTo(tested.dw.toHost(), expected.dw.toHost(), tolerance, "dw"));
}

TEST(CpuBackend, InconsistentConvGeometryNamesTheAxis) {
    auto backend = cpuBackend();
    ConvGeometry g;
    g.inChannels = g.outChannels = 1;
    g.inHeight = g.inWidth = 5;
    g.kernelHeight = g.kernelWidth = 3;
    g.outHeight = 4;  // 5 - 3 + 1 = 3
    g.outWidth = 3;
    std::vector<float> x(25), w(9), y(12);
    try {
        backend->convForward(g, x.data(), w.data(), nullptr, y.data());
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("outHeight is 4"), std::string::npos) << error.what();
        EXPECT_NE(error.where().find("cpu convForward"), std::string::npos) << error.what();
    }
}

TEST(CpuBackend, OutOfRangeLabelNamesTheSample) {
    auto backend = cpuBackend();
    LossGeometry g{2, 3, 0.0f};
    std::vector<float> logits(6), probabilities(6), loss(1);
    std::vector<std::int32_t> labels = {1, 3};
    try {
        backend->softmaxCrossEntropyForward(g, logits.data(), labels.data(), nullptr,
                                            probabilities.data(), loss.data());
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("sample 1"), std::string::npos) << error.what();
    }
}

}  // namespace
}  // namespace cnnstudio
