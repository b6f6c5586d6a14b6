// The conventions backend.h documents, pinned on cpu-ref with small hand-computed cases (batch
// norm statistics and momentum, weighted and smoothed cross-entropy, torch.optim's SGD and
// Adam/AdamW, dropout masks, derivatives at activation kinks), and the errors bad arguments give.
// The conformance suite then carries these conventions to every other backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backend_test_support.h"
#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/ops/dropout_hash.h"

namespace cnnstudio::test {
namespace {

// Float results of double formulas: a few ulps apart at most.
constexpr float kHandTolerance = 1e-6f;

// Runs `call` and returns the Error it throws; fails the test when it throws nothing.
template <typename Call>
Error errorFrom(Call&& call) {
    try {
        call();
    } catch (const Error& error) {
        return error;
    }
    ADD_FAILURE() << "expected a cnnstudio::Error";
    return Error("no error");
}

// ---- batch normalisation ---------------------------------------------------------------------

TEST(CpuRefSemantics, BatchNormTrainingNormalisesWithBiasedVarianceAndTracksUnbiased) {
    // One channel, x = 1, 2, 3, 4: mean 2.5, biased variance 1.25, unbiased 5/3.
    BatchNormGeometry g{4, 1, 1, 1e-5f, 0.1f};
    const std::vector<float> x = {1, 2, 3, 4};
    const float gamma = 2.0f, beta = 0.5f;
    float runningMean = 1.0f, runningVar = 1.0f, savedMean = 0.0f, savedInvStd = 0.0f;
    std::vector<float> y(4);
    cpuRef().batchNormForwardTraining(g, x.data(), &gamma, &beta, y.data(), &runningMean,
                                      &runningVar, &savedMean, &savedInvStd);
    const double invStd = 1.0 / std::sqrt(1.25 + 1e-5);
    EXPECT_NEAR(savedMean, 2.5f, kHandTolerance);
    EXPECT_NEAR(savedInvStd, invStd, kHandTolerance);
    EXPECT_NEAR(runningMean, 0.9 * 1.0 + 0.1 * 2.5, kHandTolerance);       // PyTorch's momentum
    EXPECT_NEAR(runningVar, 0.9 * 1.0 + 0.1 * (5.0 / 3.0), kHandTolerance);  // unbiased
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], 2.0 * (x[i] - 2.5) * invStd + 0.5, 1e-5) << i;
}

TEST(CpuRefSemantics, BatchNormInferenceUsesTheRunningStatistics) {
    BatchNormGeometry g{1, 2, 2, 1e-3f, 0.1f};
    const std::vector<float> x = {1, 3, 10, 20}, gamma = {1, 2}, beta = {0, -1};
    const std::vector<float> runningMean = {2, 15}, runningVar = {4, 25};
    std::vector<float> y(4);
    cpuRef().batchNormForwardInference(g, x.data(), gamma.data(), beta.data(), runningMean.data(),
                                       runningVar.data(), y.data());
    EXPECT_NEAR(y[0], (1 - 2) / std::sqrt(4.001), kHandTolerance);
    EXPECT_NEAR(y[1], (3 - 2) / std::sqrt(4.001), kHandTolerance);
    EXPECT_NEAR(y[2], 2 * (10 - 15) / std::sqrt(25.001) - 1, 1e-5);
    EXPECT_NEAR(y[3], 2 * (20 - 15) / std::sqrt(25.001) - 1, 1e-5);
}

// ---- loss ------------------------------------------------------------------------------------

TEST(CpuRefSemantics, CrossEntropyOfKnownProbabilities) {
    // logits (0, ln 3): p = (1/4, 3/4).
    LossGeometry g;
    g.batch = 1;
    g.classes = 2;
    const std::vector<float> logits = {0.0f, float(std::log(3.0))};
    const std::int32_t label = 1;
    std::vector<float> probabilities(2), dlogits(2);
    float loss = 0.0f;
    cpuRef().softmaxCrossEntropyForward(g, logits.data(), &label, nullptr, probabilities.data(), &loss);
    EXPECT_NEAR(probabilities[0], 0.25f, kHandTolerance);
    EXPECT_NEAR(probabilities[1], 0.75f, kHandTolerance);
    EXPECT_NEAR(loss, -std::log(0.75), kHandTolerance);

    // Smoothing 0.2 over 2 classes: q = (0.1, 0.9).
    g.labelSmoothing = 0.2f;
    cpuRef().softmaxCrossEntropyForward(g, logits.data(), &label, nullptr, probabilities.data(), &loss);
    EXPECT_NEAR(loss, -(0.1 * std::log(0.25) + 0.9 * std::log(0.75)), kHandTolerance);
    cpuRef().softmaxCrossEntropyBackward(g, probabilities.data(), &label, nullptr, dlogits.data());
    EXPECT_NEAR(dlogits[0], 0.25 - 0.1, kHandTolerance);
    EXPECT_NEAR(dlogits[1], 0.75 - 0.9, kHandTolerance);
}

// accumulateMetrics adds: per-sample cross-entropy without a batch loss, the batch loss with one;
// ties go to the first class; the largest loss is kept across calls, the latest replaced.
TEST(CpuRefSemantics, AccumulateMetricsAddsLossesAndConfusionCounts) {
    MetricsGeometry g;
    g.batch = 2;
    g.classes = 2;
    const std::vector<float> logits = {0.0f, 0.0f,                 // a tie: predicted class 0
                                       0.0f, float(std::log(3.0))};  // p = (0.25, 0.75): predicted 1
    const std::vector<std::int32_t> labels = {1, 1};
    std::vector<double> sums(g.sumCount(), 0.0);
    cpuRef().accumulateMetrics(g, logits.data(), labels.data(), nullptr, sums.data());
    const double perSample = std::log(2.0) - std::log(0.75);
    EXPECT_NEAR(sums[MetricsGeometry::kLossSum], perSample, kHandTolerance);
    EXPECT_NEAR(sums[MetricsGeometry::kLargestLoss], std::log(2.0), kHandTolerance);
    EXPECT_NEAR(sums[MetricsGeometry::kLatestLoss], perSample, kHandTolerance);
    EXPECT_EQ(sums[MetricsGeometry::kConfusion + 1 * 2 + 0], 1.0);  // true 1, predicted 0 (the tie)
    EXPECT_EQ(sums[MetricsGeometry::kConfusion + 1 * 2 + 1], 1.0);  // true 1, predicted 1

    const float batchLoss = 0.5f;
    cpuRef().accumulateMetrics(g, logits.data(), labels.data(), &batchLoss, sums.data());
    EXPECT_NEAR(sums[MetricsGeometry::kLossSum], perSample + 0.5, kHandTolerance);
    EXPECT_NEAR(sums[MetricsGeometry::kLargestLoss], std::log(2.0), kHandTolerance) << "0.5 is smaller";
    EXPECT_EQ(sums[MetricsGeometry::kLatestLoss], 0.5);
    EXPECT_EQ(sums[MetricsGeometry::kConfusion + 1 * 2 + 1], 2.0);
    EXPECT_EQ(sums[MetricsGeometry::kConfusion + 0], 0.0);
}

TEST(CpuRefSemantics, ClassWeightsGiveAWeightedMeanOverTheBatch) {
    // Both samples have p = (1/4, 3/4); labels 0 and 1, class weights (1, 3):
    // loss = (1 * -ln 1/4 + 3 * -ln 3/4) / (1 + 3); dlogits_i = w_i / 4 (p - onehot).
    LossGeometry g;
    g.batch = 2;
    g.classes = 2;
    const float ln3 = float(std::log(3.0));
    const std::vector<float> logits = {0.0f, ln3, 0.0f, ln3}, weights = {1.0f, 3.0f};
    const std::vector<std::int32_t> labels = {0, 1};
    std::vector<float> probabilities(4), dlogits(4);
    float loss = 0.0f;
    cpuRef().softmaxCrossEntropyForward(g, logits.data(), labels.data(), weights.data(),
                                        probabilities.data(), &loss);
    EXPECT_NEAR(loss, (-std::log(0.25) - 3.0 * std::log(0.75)) / 4.0, kHandTolerance);
    cpuRef().softmaxCrossEntropyBackward(g, probabilities.data(), labels.data(), weights.data(),
                                         dlogits.data());
    const std::vector<float> expected = {-0.1875f, 0.1875f, 0.1875f, -0.1875f};
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(dlogits[i], expected[i], kHandTolerance) << i;
}

TEST(CpuRefSemantics, CrossEntropyStaysFiniteForHugeLogits) {
    LossGeometry g;
    g.batch = 1;
    g.classes = 3;
    const std::vector<float> logits = {1000.0f, -1000.0f, 999.0f};
    const std::int32_t label = 2;
    std::vector<float> probabilities(3);
    float loss = 0.0f;
    cpuRef().softmaxCrossEntropyForward(g, logits.data(), &label, nullptr, probabilities.data(), &loss);
    EXPECT_NEAR(loss, std::log1p(std::exp(-1.0)) + 1.0, kHandTolerance);
    EXPECT_EQ(probabilities[1], 0.0f);
}

// ---- optimisers --------------------------------------------------------------------------------

TEST(CpuRefSemantics, SgdFollowsTorchOptimSgd) {
    StepScalars step;
    step.learningRate = 0.1f;
    const float grad = 0.5f;
    {  // momentum 0.9: v = 0.5, p = 0.95; then v = 0.95, p = 0.855
        float p = 1.0f, v = 0.0f;
        cpuRef().sgdUpdate({0.9f, false, 0.0f}, &step, &p, &grad, &v, 1);
        EXPECT_NEAR(p, 0.95f, kHandTolerance);
        cpuRef().sgdUpdate({0.9f, false, 0.0f}, &step, &p, &grad, &v, 1);
        EXPECT_NEAR(v, 0.95f, kHandTolerance);
        EXPECT_NEAR(p, 0.855f, kHandTolerance);
    }
    {  // Nesterov: v = 0.5, step along g + 0.9 v = 0.95
        float p = 1.0f, v = 0.0f;
        cpuRef().sgdUpdate({0.9f, true, 0.0f}, &step, &p, &grad, &v, 1);
        EXPECT_NEAR(p, 0.905f, kHandTolerance);
    }
    {  // weight decay 0.1 without momentum: g = 0.5 + 0.1 * 1 (velocity may be null)
        float p = 1.0f;
        cpuRef().sgdUpdate({0.0f, false, 0.1f}, &step, &p, &grad, nullptr, 1);
        EXPECT_NEAR(p, 0.94f, kHandTolerance);
    }
}

TEST(CpuRefSemantics, AdamAndAdamWFollowTorchOptim) {
    // First step: m = 0.1 g, v = 0.001 g^2; with the bias corrections the step is lr * sign(g).
    StepScalars step;
    step.learningRate = 0.1f;
    step.adamCorrection1 = 1.0f - 0.9f;
    step.adamCorrection2 = 1.0f - 0.999f;
    const float grad = 0.5f;
    {
        float p = 1.0f, m = 0.0f, v = 0.0f;
        cpuRef().adamUpdate({0.9f, 0.999f, 1e-8f, 0.0f, false}, &step, &p, &grad, &m, &v, 1);
        EXPECT_NEAR(m, 0.05f, kHandTolerance);
        EXPECT_NEAR(v, 0.00025f, kHandTolerance);
        EXPECT_NEAR(p, 0.9f, 1e-5f);
    }
    {  // Adam's L2 decay goes into the gradient (and so into the moments).
        float p = 1.0f, m = 0.0f, v = 0.0f;
        cpuRef().adamUpdate({0.9f, 0.999f, 1e-8f, 0.1f, false}, &step, &p, &grad, &m, &v, 1);
        EXPECT_NEAR(m, 0.06f, kHandTolerance);
        EXPECT_NEAR(p, 0.9f, 1e-5f);
    }
    {  // AdamW decays the parameter itself: p = 1 * (1 - 0.1 * 0.1) - 0.1.
        float p = 1.0f, m = 0.0f, v = 0.0f;
        cpuRef().adamUpdate({0.9f, 0.999f, 1e-8f, 0.1f, true}, &step, &p, &grad, &m, &v, 1);
        EXPECT_NEAR(m, 0.05f, kHandTolerance);
        EXPECT_NEAR(p, 0.89f, 1e-5f);
    }
}

// ---- dropout and activations -----------------------------------------------------------------

TEST(CpuRefSemantics, DropoutMaskFollowsTheSharedHashAndScalesKeptElements) {
    const std::size_t count = 100000;
    const float probability = 0.3f;
    const std::uint64_t seed = 42;
    StepScalars step;
    step.step = 5;
    std::vector<float> mask(count), nextStep(count);
    cpuRef().dropoutMask(probability, seed, &step, mask.data(), count);
    std::size_t dropped = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const bool keep = dropoutKeeps(seed, 5, i, probability);
        ASSERT_EQ(mask[i], keep ? 1.0f / (1.0f - probability) : 0.0f) << i;
        dropped += keep ? 0 : 1;
    }
    EXPECT_NEAR(double(dropped) / count, probability, 0.01);

    step.step = 6;  // a new step draws a new mask
    cpuRef().dropoutMask(probability, seed, &step, nextStep.data(), count);
    EXPECT_NE(mask, nextStep);
}

TEST(CpuRefSemantics, ActivationsTakeTheLeftDerivativeAtZero) {
    const std::vector<float> x = {-2.0f, 0.0f, 3.0f}, dy = {1.0f, 1.0f, 1.0f};
    std::vector<float> y(3), dx(3);

    cpuRef().activationForward(Activation::Relu, 0.0f, x.data(), y.data(), 3);
    cpuRef().activationBackward(Activation::Relu, 0.0f, x.data(), y.data(), dy.data(), dx.data(), 3);
    EXPECT_EQ(y, (std::vector<float>{0.0f, 0.0f, 3.0f}));
    EXPECT_EQ(dx, (std::vector<float>{0.0f, 0.0f, 1.0f}));

    cpuRef().activationForward(Activation::LeakyRelu, 0.1f, x.data(), y.data(), 3);
    cpuRef().activationBackward(Activation::LeakyRelu, 0.1f, x.data(), y.data(), dy.data(), dx.data(), 3);
    EXPECT_EQ(y, (std::vector<float>{-0.2f, 0.0f, 3.0f}));
    EXPECT_EQ(dx, (std::vector<float>{0.1f, 0.1f, 1.0f}));

    cpuRef().activationForward(Activation::Elu, 0.5f, x.data(), y.data(), 3);
    cpuRef().activationBackward(Activation::Elu, 0.5f, x.data(), y.data(), dy.data(), dx.data(), 3);
    EXPECT_NEAR(y[0], 0.5 * std::expm1(-2.0), kHandTolerance);
    EXPECT_EQ(y[1], 0.0f);
    EXPECT_NEAR(dx[0], 0.5 * std::exp(-2.0), kHandTolerance);
    EXPECT_EQ(dx[1], 0.5f);
    EXPECT_EQ(dx[2], 1.0f);
}

// PyTorch's nn.SiLU: y = x sigmoid(x), dy/dx = s (1 + x (1 - s)); smooth, so 0 is no kink
// (silu'(0) = 1/2). SiLU has no parameter: the alpha passed along changes nothing.
TEST(CpuRefSemantics, SiluIsXTimesSigmoidAndIgnoresAlpha) {
    const std::vector<float> x = {-2.0f, 0.0f, 3.0f}, dy = {1.0f, 1.0f, 1.0f};
    std::vector<float> y(3), dx(3);
    for (float alpha : {0.0f, 0.7f}) {
        cpuRef().activationForward(Activation::Silu, alpha, x.data(), y.data(), 3);
        cpuRef().activationBackward(Activation::Silu, alpha, x.data(), y.data(), dy.data(), dx.data(), 3);
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double s = 1.0 / (1.0 + std::exp(-double(x[i])));
            EXPECT_NEAR(y[i], x[i] * s, kHandTolerance) << "x = " << x[i];
            EXPECT_NEAR(dx[i], s * (1.0 + x[i] * (1.0 - s)), kHandTolerance) << "x = " << x[i];
        }
        EXPECT_EQ(dx[1], 0.5f);
    }
}

// ---- the backend object ----------------------------------------------------------------------

TEST(CpuRefBackend, IsFp32OnlyHostMemoryAligned) {
    BackendOptions options;
    options.precision = Precision::Bf16;
    const Error error = errorFrom([&] { createBackend("cpu-ref", options); });
    EXPECT_NE(error.reason().find("fp32 only"), std::string::npos) << error.what();

    auto backend = createBackend("cpu-ref");
    EXPECT_EQ(backend->name(), "cpu-ref");
    EXPECT_FALSE(backend->isDevice());
    EXPECT_EQ(backend->precision(), Precision::Fp32);
    for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(100), std::size_t(1) << 20}) {
        void* memory = backend->allocateBytes(bytes);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory) % 64, 0u) << bytes << " bytes";
        backend->freeBytes(memory);
    }
}

TEST(CpuRefBackend, ImpossibleAllocationIsAnError) {
    auto backend = createBackend("cpu-ref");
    const Error error = errorFrom([&] { backend->allocateBytes(std::numeric_limits<std::size_t>::max() / 2); });
    EXPECT_NE(std::string(error.what()).find("cpu-ref allocateBytes"), std::string::npos) << error.what();
}

// ---- bad arguments ---------------------------------------------------------------------------

TEST(CpuRefArguments, ConvWithWrongOutputSizeNamesTheField) {
    ConvGeometry g = convGeometry(1, 1, 8, 8, 1, 3, 3, 2, 2, 1, 1, 1);
    g.outHeight += 1;
    std::vector<float> x(64), w(9), y(100);
    const Error error = errorFrom([&] { cpuRef().convForward(g, x.data(), w.data(), nullptr, y.data()); });
    EXPECT_NE(error.reason().find("outHeight is 5"), std::string::npos) << error.what();
    EXPECT_EQ(error.where(), "cpu-ref convForward");
}

TEST(CpuRefArguments, GroupsMustDivideBothChannelCounts) {
    const ConvGeometry g = convGeometry(1, 4, 5, 5, 6, 3, 3, 1, 1, 1, 1, 4);
    std::vector<float> x(100), w(100), y(200);
    const Error error = errorFrom([&] { cpuRef().convForward(g, x.data(), w.data(), nullptr, y.data()); });
    EXPECT_NE(error.reason().find("groups 4"), std::string::npos) << error.what();
}

// Every backend and the spec share PyTorch's rule (the GPU backends had it, the CPU ones allowed
// up to kernel - 1).
TEST(CpuRefArguments, PoolPaddingMustBeAtMostHalfTheKernel) {
    const PoolGeometry g = poolGeometry(PoolKind::Average, 1, 1, 4, 4, 3, 3, 1, 1, 2, 2);
    std::vector<float> x(16), y(64);
    EXPECT_THROW(cpuRef().poolForward(g, x.data(), y.data()), Error);
}

// The pooled chain's geometries must describe one tensor: the batch norm's is the pooling's input.
TEST(CpuRefArguments, BatchNormReluMaxPoolChainRefusesMismatchedOrAveragePooling) {
    const PoolGeometry pool = poolGeometry(PoolKind::Max, 2, 3, 4, 4, 2, 2, 2, 2, 0, 0);
    std::vector<float> x(96), y(24), parameters(3, 1.0f), statistics(12, 1.0f);
    auto run = [&](const BatchNormGeometry& g, const PoolGeometry& p) {
        float* s = statistics.data();
        cpuRef().batchNormReluMaxPoolForwardTraining(g, p, x.data(), parameters.data(),
                                                     parameters.data(), x.data(), x.data(),
                                                     y.data(), s, s + 3, s + 6, s + 9);
    };
    const Error mismatched = errorFrom([&] { run({2, 3, 9, 1e-5f, 0.1f}, pool); });
    EXPECT_NE(mismatched.reason().find("does not match the pooling's input (batch 2, channels 3, spatial 16)"),
              std::string::npos) << mismatched.what();
    PoolGeometry average = pool;
    average.kind = PoolKind::Average;
    const Error averaged = errorFrom([&] { run({2, 3, 16, 1e-5f, 0.1f}, average); });
    EXPECT_NE(averaged.reason().find("average pooling"), std::string::npos) << averaged.what();
    EXPECT_EQ(averaged.where(), "cpu-ref batchNormReluMaxPoolForwardTraining");
}

TEST(CpuRefArguments, BatchNormTrainingNeedsTwoValuesPerChannel) {
    const BatchNormGeometry g{1, 3, 1, 1e-5f, 0.1f};
    std::vector<float> values(3, 1.0f);
    float* v = values.data();
    const Error error = errorFrom([&] { cpuRef().batchNormForwardTraining(g, v, v, v, v, v, v, v, v); });
    EXPECT_NE(error.hint().find("batch size"), std::string::npos) << error.what();
    // Inference on the same geometry is fine: it uses the running statistics.
    EXPECT_NO_THROW(cpuRef().batchNormForwardInference(g, v, v, v, v, v, v));
}

TEST(CpuRefArguments, LabelOutsideTheClassesNamesTheSample) {
    LossGeometry g;
    g.batch = 3;
    g.classes = 7;
    const std::vector<float> logits(21);
    const std::vector<std::int32_t> labels = {0, 6, 7};
    std::vector<float> probabilities(21);
    float loss = 0.0f;
    const Error error = errorFrom([&] {
        cpuRef().softmaxCrossEntropyForward(g, logits.data(), labels.data(), nullptr, probabilities.data(), &loss);
    });
    EXPECT_NE(error.reason().find("label 7 of sample 2"), std::string::npos) << error.what();
}

TEST(CpuRefArguments, ClassWeightsSummingToZeroAreAnError) {
    LossGeometry g;
    g.batch = 2;
    g.classes = 2;
    const std::vector<float> logits(4), weights = {0.0f, 1.0f};
    const std::vector<std::int32_t> labels = {0, 0};
    std::vector<float> probabilities(4);
    float loss = 0.0f;
    EXPECT_THROW(cpuRef().softmaxCrossEntropyForward(g, logits.data(), labels.data(), weights.data(),
                                                     probabilities.data(), &loss),
                 Error);
}

TEST(CpuRefArguments, NullPointerNamesTheArgument) {
    const DenseGeometry g{2, 3, 4};
    std::vector<float> x(6), y(8);
    const Error error = errorFrom([&] { cpuRef().denseForward(g, x.data(), nullptr, nullptr, y.data()); });
    EXPECT_NE(error.reason().find("'w'"), std::string::npos) << error.what();
}

TEST(CpuRefArguments, OptimiserAndDropoutSettingsAreChecked) {
    StepScalars step;
    float p = 1.0f, g = 1.0f, m = 0.0f, v = 0.0f;
    step.adamCorrection1 = 0.0f;  // a trainer that forgot to set the corrections
    EXPECT_THROW(cpuRef().adamUpdate({}, &step, &p, &g, &m, &v, 1), Error);
    EXPECT_THROW(cpuRef().sgdUpdate({0.0f, true, 0.0f}, &step, &p, &g, &v, 1), Error);  // Nesterov, no momentum
    EXPECT_THROW(cpuRef().dropoutMask(1.5f, 1, &step, &p, 1), Error);
    EXPECT_THROW(cpuRef().dropoutMask(0.5f, 1, nullptr, &p, 1), Error);
}

TEST(CpuRefArguments, CopyChannelsOutsideEitherTensorIsAnError) {
    std::vector<float> src(2 * 4 * 3), dst(2 * 6 * 3);
    EXPECT_THROW(cpuRef().copyChannels(2, 3, 3, src.data(), 4, 2, dst.data(), 6, 0), Error);
    EXPECT_THROW(cpuRef().copyChannels(2, 3, 3, src.data(), 4, 0, dst.data(), 6, 4), Error);
    EXPECT_NO_THROW(cpuRef().copyChannels(2, 3, 3, src.data(), 4, 1, dst.data(), 6, 3));
}

}  // namespace
}  // namespace cnnstudio::test
