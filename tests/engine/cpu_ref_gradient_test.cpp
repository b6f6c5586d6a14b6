// cpu-ref's backward ops against central differences of its forward ops, and its forward
// convolution and pooling against the definition written as directly as possible and against
// tiny examples computed by hand. Since every other backend is
// tested against cpu-ref, these tests are what ties the whole op table to the mathematics.
//
// The objective of a layer op is L = sum_j r_j out_j with fixed random r, summed in double, so
// the analytic gradient is the op's backward with dy = r. The forward runs in float, so the
// step is large enough for float rounding of L not to drown the difference: kStep for smooth
// ops; piecewise ops get inputs kept further than kStep from their kinks and ties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <utility>
#include <string>
#include <vector>

#include "backend_test_support.h"
#include "cnnstudio/backend.h"

namespace cnnstudio::test {
namespace {

constexpr float kStep = 1e-2f;
// ||analytic - numerical|| / ||numerical||: float forward passes, central differences.
constexpr double kGradientTolerance = 2e-3;

double weightedSum(const std::vector<float>& out, const std::vector<float>& weights) {
    double sum = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i) sum += double(weights[i]) * double(out[i]);
    return sum;
}

// dObjective/dValues[i] by central differences, each element in turn. The divisor is the step
// actually taken in float, not the nominal one.
std::vector<float> centralDifferences(std::vector<float>& values, float step,
                                      const std::function<double()>& objective) {
    std::vector<float> gradient(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        const float original = values[i];
        const float above = original + step, below = original - step;
        values[i] = above;
        const double objectiveAbove = objective();
        values[i] = below;
        const double objectiveBelow = objective();
        values[i] = original;
        gradient[i] = float((objectiveAbove - objectiveBelow) / (double(above) - double(below)));
    }
    return gradient;
}

::testing::AssertionResult matchesNumerical(const std::vector<float>& analytic,
                                            const std::vector<float>& numerical,
                                            const std::string& what) {
    return closeTo(analytic, numerical, kGradientTolerance, what);
}

// Geometries small enough for one forward pass per input element, covering the same cases as
// the conformance suite: odd sizes, stride 2, padding, groups, depthwise, 1x1, 7x7, batch 1 and 2.
std::vector<ConvGeometry> smallConvGeometries() {
    return {
        convGeometry(2, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1),  // odd sizes, same padding
        convGeometry(1, 4, 7, 7, 4, 3, 3, 2, 2, 1, 1, 2),  // stride 2, two groups
        convGeometry(2, 4, 6, 5, 4, 3, 3, 1, 1, 1, 1, 4),  // depthwise
        convGeometry(2, 2, 7, 7, 6, 3, 3, 2, 2, 0, 0, 2),  // depthwise, channel multiplier 3
        convGeometry(1, 3, 8, 8, 2, 1, 1, 1, 1, 0, 0, 1),  // 1x1
        convGeometry(1, 2, 9, 9, 2, 7, 7, 2, 2, 3, 3, 1),  // 7x7 stride 2 pad 3
        convGeometry(2, 2, 6, 7, 3, 2, 3, 2, 1, 1, 0, 1),  // rectangular kernel and stride
    };
}

TEST(CpuRefGradients, ConvBackwardMatchesCentralDifferences) {
    SeededRandom random;
    for (const ConvGeometry& g : smallConvGeometries()) {
        SCOPED_TRACE(describe(g));
        std::vector<float> x = random.uniforms(std::size_t(g.inputCount()));
        std::vector<float> w = random.uniforms(std::size_t(g.weightCount()));
        std::vector<float> bias = random.uniforms(std::size_t(g.outChannels));
        const std::vector<float> r = random.uniforms(std::size_t(g.outputCount()));
        std::vector<float> y(r.size());
        const auto objective = [&] {
            cpuRef().convForward(g, x.data(), w.data(), bias.data(), y.data());
            return weightedSum(y, r);
        };

        std::vector<float> dx(x.size()), dw(w.size()), dbias(bias.size());
        cpuRef().convBackwardData(g, r.data(), w.data(), dx.data());
        cpuRef().convBackwardFilter(g, x.data(), r.data(), dw.data(), dbias.data());
        EXPECT_TRUE(matchesNumerical(dx, centralDifferences(x, kStep, objective), "dL/dx"));
        EXPECT_TRUE(matchesNumerical(dw, centralDifferences(w, kStep, objective), "dL/dw"));
        EXPECT_TRUE(matchesNumerical(dbias, centralDifferences(bias, kStep, objective), "dL/dbias"));
    }
}

// Distinct values at least 10 steps apart: no ties, and no step changes which element wins.
std::vector<float> distinctValues(SeededRandom& random, std::size_t count) {
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = float(i) * 10.0f * kStep - float(count) * 5.0f * kStep;
    std::shuffle(values.begin(), values.end(), random.engine());
    return values;
}

TEST(CpuRefGradients, PoolBackwardMatchesCentralDifferences) {
    SeededRandom random;
    for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
        for (const PoolGeometry& g : poolGeometriesToTest(kind)) {
            SCOPED_TRACE(describe(g));
            std::vector<float> x = distinctValues(random, std::size_t(g.inputCount()));
            const std::vector<float> r = random.uniforms(std::size_t(g.outputCount()));
            std::vector<float> y(r.size());
            const auto objective = [&] {
                cpuRef().poolForward(g, x.data(), y.data());
                return weightedSum(y, r);
            };
            objective();
            std::vector<float> dx(x.size());
            cpuRef().poolBackward(g, x.data(), y.data(), r.data(), dx.data());
            EXPECT_TRUE(matchesNumerical(dx, centralDifferences(x, kStep / 2, objective), "dL/dx"));
        }
    }
}

TEST(CpuRefGradients, BatchNormTrainingBackwardMatchesCentralDifferences) {
    SeededRandom random;
    const BatchNormGeometry geometries[] = {
        {3, 2, 5, 1e-5f, 0.1f}, {6, 3, 1, 1e-5f, 0.1f}, {1, 2, 9, 1e-3f, 0.1f}, {4, 2, 6, 1e-5f, 0.1f}};
    for (const BatchNormGeometry& g : geometries) {
        SCOPED_TRACE(describe(g));
        const auto channels = std::size_t(g.channels);
        std::vector<float> x = random.uniforms(std::size_t(g.count()), -2.0f, 3.0f);
        std::vector<float> gamma = random.uniforms(channels, 0.5f, 1.5f);
        std::vector<float> beta = random.uniforms(channels);
        const std::vector<float> r = random.uniforms(std::size_t(g.count()));
        std::vector<float> y(x.size()), runningMean(channels), runningVar(channels, 1.0f);
        std::vector<float> savedMean(channels), savedInvStd(channels);
        const auto objective = [&] {
            cpuRef().batchNormForwardTraining(g, x.data(), gamma.data(), beta.data(), y.data(),
                                              runningMean.data(), runningVar.data(),
                                              savedMean.data(), savedInvStd.data());
            return weightedSum(y, r);
        };
        objective();
        std::vector<float> dx(x.size()), dgamma(channels), dbeta(channels);
        cpuRef().batchNormBackward(g, x.data(), r.data(), gamma.data(), savedMean.data(),
                                   savedInvStd.data(), dx.data(), dgamma.data(), dbeta.data());
        EXPECT_TRUE(matchesNumerical(dx, centralDifferences(x, kStep, objective), "dL/dx"));
        EXPECT_TRUE(matchesNumerical(dgamma, centralDifferences(gamma, kStep, objective), "dL/dgamma"));
        EXPECT_TRUE(matchesNumerical(dbeta, centralDifferences(beta, kStep, objective), "dL/dbeta"));
    }
}

TEST(CpuRefGradients, ActivationBackwardMatchesCentralDifferences) {
    SeededRandom random;
    const std::pair<Activation, float> activations[] = {
        {Activation::Relu, 0.0f}, {Activation::LeakyRelu, 0.1f}, {Activation::Elu, 1.0f},
        {Activation::Elu, 0.4f},  {Activation::Silu, 0.0f}};
    for (auto [kind, alpha] : activations) {
        SCOPED_TRACE(describe(kind, alpha));
        const std::size_t count = 301;
        std::vector<float> x = random.uniforms(count, -3.0f, 3.0f);
        for (float& value : x)  // keep every input well away from the kink at 0
            if (std::abs(value) < 5 * kStep) value += value < 0 ? -5 * kStep : 5 * kStep;
        const std::vector<float> r = random.uniforms(count);
        std::vector<float> y(count);
        const auto objective = [&] {
            cpuRef().activationForward(kind, alpha, x.data(), y.data(), count);
            return weightedSum(y, r);
        };
        objective();
        std::vector<float> dx(count);
        cpuRef().activationBackward(kind, alpha, x.data(), y.data(), r.data(), dx.data(), count);
        EXPECT_TRUE(matchesNumerical(dx, centralDifferences(x, kStep, objective), "dL/dx"));
    }
}

TEST(CpuRefGradients, DenseBackwardMatchesCentralDifferences) {
    SeededRandom random;
    const DenseGeometry geometries[] = {{3, 5, 4}, {1, 7, 2}, {4, 1, 3}, {2, 40, 7}};
    for (const DenseGeometry& g : geometries) {
        SCOPED_TRACE(describe(g));
        std::vector<float> x = random.uniforms(std::size_t(g.batch) * g.inFeatures);
        std::vector<float> w = random.uniforms(std::size_t(g.outFeatures) * g.inFeatures);
        std::vector<float> bias = random.uniforms(std::size_t(g.outFeatures));
        const std::vector<float> r = random.uniforms(std::size_t(g.batch) * g.outFeatures);
        std::vector<float> y(r.size());
        const auto objective = [&] {
            cpuRef().denseForward(g, x.data(), w.data(), bias.data(), y.data());
            return weightedSum(y, r);
        };
        std::vector<float> dx(x.size()), dw(w.size()), dbias(bias.size());
        cpuRef().denseBackwardData(g, r.data(), w.data(), dx.data());
        cpuRef().denseBackwardWeights(g, x.data(), r.data(), dw.data(), dbias.data());
        EXPECT_TRUE(matchesNumerical(dx, centralDifferences(x, kStep, objective), "dL/dx"));
        EXPECT_TRUE(matchesNumerical(dw, centralDifferences(w, kStep, objective), "dL/dw"));
        EXPECT_TRUE(matchesNumerical(dbias, centralDifferences(bias, kStep, objective), "dL/dbias"));
    }
}

TEST(CpuRefGradients, SoftmaxCrossEntropyBackwardMatchesCentralDifferences) {
    SeededRandom random;
    for (bool weighted : {false, true}) {
        for (float smoothing : {0.0f, 0.1f, 0.3f}) {
            LossGeometry g;
            g.batch = 4;
            g.classes = 5;
            g.labelSmoothing = smoothing;
            SCOPED_TRACE(describe(g) + (weighted ? " with class weights" : " without class weights"));
            std::vector<float> logits = random.uniforms(std::size_t(g.batch) * g.classes, -2.0f, 2.0f);
            const std::vector<std::int32_t> labels = random.labels(std::size_t(g.batch), g.classes);
            const std::vector<float> classWeights = random.uniforms(std::size_t(g.classes), 0.2f, 3.0f);
            const float* weights = weighted ? classWeights.data() : nullptr;
            std::vector<float> probabilities(logits.size());
            float loss = 0.0f;
            const auto objective = [&] {
                cpuRef().softmaxCrossEntropyForward(g, logits.data(), labels.data(), weights,
                                                    probabilities.data(), &loss);
                return double(loss);
            };
            objective();
            std::vector<float> dlogits(logits.size());
            cpuRef().softmaxCrossEntropyBackward(g, probabilities.data(), labels.data(), weights, dlogits.data());
            EXPECT_TRUE(matchesNumerical(dlogits, centralDifferences(logits, kStep, objective), "dL/dlogits"));
        }
    }
}

// Mixup and cutmix: each sample's target is a share of two labels (LabelMix); the shares at
// the ends (0 and 1) and in between, with and without class weights and smoothing; and the same
// with distillation's soft targets beside them (two sets, as two teachers give), at temperature
// 1 and above.
TEST(CpuRefGradients, SoftmaxCrossEntropyWithMixedLabelsAndSoftTargetsMatchesCentralDifferences) {
    SeededRandom random;
    struct Distillation {
        int sets;
        float weight, temperature;
    };
    for (bool weighted : {false, true}) {
        for (float smoothing : {0.0f, 0.1f}) {
            for (const Distillation distillation : {Distillation{0, 0.0f, 1.0f}, Distillation{2, 0.7f, 1.0f},
                                                    Distillation{2, 0.7f, 2.5f}}) {
                LossGeometry g;
                g.batch = 5;
                g.classes = 4;
                g.labelSmoothing = smoothing;
                g.temperature = distillation.temperature;
                SCOPED_TRACE(describe(g) + (weighted ? " with class weights, " : " without class weights, ") +
                             std::to_string(distillation.sets) + " soft target sets at temperature " +
                             std::to_string(distillation.temperature));
                std::vector<float> logits = random.uniforms(std::size_t(g.batch) * g.classes, -2.0f, 2.0f);
                const std::vector<std::int32_t> labels = random.labels(std::size_t(g.batch), g.classes);
                const std::vector<std::int32_t> secondLabels = random.labels(std::size_t(g.batch), g.classes);
                std::vector<float> shares = random.uniforms(std::size_t(g.batch), 0.0f, 1.0f);
                shares[0] = 0.0f;
                shares[1] = 1.0f;
                const LabelMix mix{secondLabels.data(), shares.data()};
                const std::vector<float> teachers = random.probabilityRows(2 * g.batch, g.classes);
                const SoftTargets soft{distillation.sets ? teachers.data() : nullptr, distillation.sets,
                                       distillation.weight};
                const std::vector<float> classWeights = random.uniforms(std::size_t(g.classes), 0.2f, 3.0f);
                const float* weights = weighted ? classWeights.data() : nullptr;
                std::vector<float> probabilities(logits.size());
                float loss = 0.0f;
                const auto objective = [&] {
                    cpuRef().softmaxCrossEntropyForward(g, logits.data(), labels.data(), weights,
                                                        probabilities.data(), &loss, mix, soft);
                    return double(loss);
                };
                objective();
                std::vector<float> dlogits(logits.size());
                cpuRef().softmaxCrossEntropyBackward(g, probabilities.data(), labels.data(), weights,
                                                     dlogits.data(), mix, soft);
                EXPECT_TRUE(matchesNumerical(dlogits, centralDifferences(logits, kStep, objective), "dL/dlogits"));
            }
        }
    }
}

// A mix whose every weight is 1 is the plain loss; one whose weights are 1/2 is the mean of the
// two plain losses (without class weights).
TEST(CpuRefGradients, MixedLabelLossIsTheWeightedSumOfThePlainOnes) {
    SeededRandom random;
    LossGeometry g;
    g.batch = 6;
    g.classes = 7;
    g.labelSmoothing = 0.1f;
    const std::vector<float> logits = random.uniforms(std::size_t(g.batch) * g.classes, -2.0f, 2.0f);
    const std::vector<std::int32_t> first = random.labels(std::size_t(g.batch), g.classes);
    const std::vector<std::int32_t> second = random.labels(std::size_t(g.batch), g.classes);
    std::vector<float> probabilities(logits.size());
    auto lossOf = [&](const std::int32_t* labels, const LabelMix& mix) {
        float loss = 0.0f;
        cpuRef().softmaxCrossEntropyForward(g, logits.data(), labels, nullptr, probabilities.data(), &loss, mix);
        return loss;
    };
    const std::vector<float> ones(std::size_t(g.batch), 1.0f), halves(std::size_t(g.batch), 0.5f);
    EXPECT_FLOAT_EQ(lossOf(first.data(), {second.data(), ones.data()}), lossOf(first.data(), {}));
    EXPECT_NEAR(lossOf(first.data(), {second.data(), halves.data()}),
                0.5f * (lossOf(first.data(), {}) + lossOf(second.data(), {})), 1e-5);
}

// What the soft targets mean: at weight 0 they change nothing; at weight 1, one-hot soft
// targets are the labels themselves; two sets count as their mean; a temperature T gives
// softmax(logits / T).
TEST(CpuRefGradients, SoftTargetLossIsTheCrossEntropyAgainstTheTeachersMean) {
    SeededRandom random;
    LossGeometry g;
    g.batch = 6;
    g.classes = 7;
    const std::vector<float> logits = random.uniforms(std::size_t(g.batch) * g.classes, -2.0f, 2.0f);
    const std::vector<std::int32_t> labels = random.labels(std::size_t(g.batch), g.classes);
    const std::vector<std::int32_t> otherLabels = random.labels(std::size_t(g.batch), g.classes);
    std::vector<float> probabilities(logits.size());
    auto lossOf = [&](const std::int32_t* forLabels, const SoftTargets& soft) {
        float loss = 0.0f;
        cpuRef().softmaxCrossEntropyForward(g, logits.data(), forLabels, nullptr, probabilities.data(),
                                            &loss, {}, soft);
        return loss;
    };
    auto oneHot = [&](const std::vector<std::int32_t>& of) {
        std::vector<float> rows(logits.size(), 0.0f);
        for (int i = 0; i < g.batch; ++i) rows[std::size_t(i * g.classes + of[std::size_t(i)])] = 1.0f;
        return rows;
    };
    const std::vector<float> teacher = random.probabilityRows(g.batch, g.classes);
    EXPECT_FLOAT_EQ(lossOf(labels.data(), {teacher.data(), 1, 0.0f}), lossOf(labels.data(), {}));
    const std::vector<float> otherRows = oneHot(otherLabels);
    EXPECT_NEAR(lossOf(labels.data(), {otherRows.data(), 1, 1.0f}), lossOf(otherLabels.data(), {}), 1e-5);
    std::vector<float> twoSets = oneHot(labels);
    twoSets.insert(twoSets.end(), otherRows.begin(), otherRows.end());
    EXPECT_NEAR(lossOf(labels.data(), {twoSets.data(), 2, 1.0f}),
                0.5f * (lossOf(labels.data(), {}) + lossOf(otherLabels.data(), {})), 1e-5);

    g.temperature = 4.0f;
    lossOf(labels.data(), {});
    for (int i = 0; i < g.batch; ++i) {
        double sum = 0.0;
        for (int k = 0; k < g.classes; ++k) sum += std::exp(logits[std::size_t(i * g.classes + k)] / 4.0);
        const int k = labels[std::size_t(i)];
        EXPECT_NEAR(probabilities[std::size_t(i * g.classes + k)],
                    std::exp(logits[std::size_t(i * g.classes + k)] / 4.0) / sum, 1e-6);
    }
}

// The backward of a channel copy is the copy back: dsrc gets dst's gradient on the copied
// channels and zero elsewhere.
TEST(CpuRefGradients, CopyChannelsGradientIsTheCopyBack) {
    SeededRandom random;
    const int batch = 2, spatial = 6, channels = 3, srcChannels = 5, srcOffset = 1, dstChannels = 7, dstOffset = 4;
    std::vector<float> src = random.uniforms(std::size_t(batch) * srcChannels * spatial);
    std::vector<float> dst = random.uniforms(std::size_t(batch) * dstChannels * spatial);
    const std::vector<float> r = random.uniforms(dst.size());
    const auto objective = [&] {
        cpuRef().copyChannels(batch, spatial, channels, src.data(), srcChannels, srcOffset, dst.data(),
                              dstChannels, dstOffset);
        return weightedSum(dst, r);
    };
    std::vector<float> dsrc(src.size(), 0.0f);
    cpuRef().copyChannels(batch, spatial, channels, r.data(), dstChannels, dstOffset, dsrc.data(),
                          srcChannels, srcOffset);
    EXPECT_TRUE(matchesNumerical(dsrc, centralDifferences(src, kStep, objective), "dL/dsrc"));
}

// ---- forward passes against the definition, written the most direct way --------------------

// y[n,o,oh,ow] = bias[o] + sum over the group's channels and the taps that land inside x.
std::vector<float> convByDefinition(const ConvGeometry& g, const std::vector<float>& x,
                                    const std::vector<float>& w, const std::vector<float>& bias) {
    const int inPerGroup = g.inChannels / g.groups, outPerGroup = g.outChannels / g.groups;
    // Flat NCHW indices of x, w and y.
    const auto at = [](int i0, int size1, int i1, int size2, int i2, int size3, int i3) {
        return ((std::size_t(i0) * size1 + i1) * size2 + i2) * size3 + i3;
    };
    std::vector<float> y(std::size_t(g.outputCount()));
    for (int n = 0; n < g.batch; ++n)
        for (int o = 0; o < g.outChannels; ++o)
            for (int oh = 0; oh < g.outHeight; ++oh)
                for (int ow = 0; ow < g.outWidth; ++ow) {
                    double sum = bias[std::size_t(o)];
                    for (int c = 0; c < inPerGroup; ++c)
                        for (int kh = 0; kh < g.kernelHeight; ++kh)
                            for (int kw = 0; kw < g.kernelWidth; ++kw) {
                                const int ih = oh * g.strideHeight + kh - g.padHeight;
                                const int iw = ow * g.strideWidth + kw - g.padWidth;
                                if (ih < 0 || ih >= g.inHeight || iw < 0 || iw >= g.inWidth) continue;
                                const int channel = (o / outPerGroup) * inPerGroup + c;
                                sum += double(x[at(n, g.inChannels, channel, g.inHeight, ih, g.inWidth, iw)]) *
                                       w[at(o, inPerGroup, c, g.kernelHeight, kh, g.kernelWidth, kw)];
                            }
                    y[at(n, g.outChannels, o, g.outHeight, oh, g.outWidth, ow)] = float(sum);
                }
    return y;
}

std::vector<float> poolByDefinition(const PoolGeometry& g, const std::vector<float>& x) {
    std::vector<float> y(std::size_t(g.outputCount()));
    for (int plane = 0; plane < g.batch * g.channels; ++plane)
        for (int oh = 0; oh < g.outHeight; ++oh)
            for (int ow = 0; ow < g.outWidth; ++ow) {
                double best = -INFINITY, sum = 0.0;
                int count = 0;
                for (int kh = 0; kh < g.kernelHeight; ++kh)
                    for (int kw = 0; kw < g.kernelWidth; ++kw) {
                        const int ih = oh * g.strideHeight + kh - g.padHeight;
                        const int iw = ow * g.strideWidth + kw - g.padWidth;
                        if (ih < 0 || ih >= g.inHeight || iw < 0 || iw >= g.inWidth) continue;
                        const double value = x[(std::size_t(plane) * g.inHeight + ih) * g.inWidth + iw];
                        best = std::max(best, value);
                        sum += value;
                        ++count;
                    }
                y[(std::size_t(plane) * g.outHeight + oh) * g.outWidth + ow] =
                    float(g.kind == PoolKind::Max ? best : sum / count);
            }
    return y;
}

TEST(CpuRefDefinition, ConvForwardMatchesTheDirectSum) {
    SeededRandom random;
    for (const ConvGeometry& g : convGeometriesToTest()) {
        SCOPED_TRACE(describe(g));
        const std::vector<float> x = random.uniforms(std::size_t(g.inputCount()));
        const std::vector<float> w = random.uniforms(std::size_t(g.weightCount()));
        const std::vector<float> bias = random.uniforms(std::size_t(g.outChannels));
        std::vector<float> y(std::size_t(g.outputCount()));
        cpuRef().convForward(g, x.data(), w.data(), bias.data(), y.data());
        EXPECT_TRUE(closeTo(y, convByDefinition(g, x, w, bias), 1e-5, "y"));
    }
}

TEST(CpuRefDefinition, PoolForwardMatchesTheDirectWindow) {
    SeededRandom random;
    for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
        for (const PoolGeometry& g : poolGeometriesToTest(kind)) {
            SCOPED_TRACE(describe(g));
            const std::vector<float> x = random.uniforms(std::size_t(g.inputCount()));
            std::vector<float> y(std::size_t(g.outputCount()));
            cpuRef().poolForward(g, x.data(), y.data());
            EXPECT_TRUE(closeTo(y, poolByDefinition(g, x), 1e-6, "y"));
        }
    }
}

// ---- forward passes computed by hand ----------------------------------------------------------

TEST(CpuRefHandComputed, ConvForwardCrossCorrelatesWithBias) {
    // x = 1..9 in a 3x3 image, w = [[1, 2], [3, 4]], bias 0.5, stride 1, no padding:
    // y[0][0] = 1*1 + 2*2 + 4*3 + 5*4 + 0.5 = 37.5, and so on (no kernel flip).
    const ConvGeometry g = convGeometry(1, 1, 3, 3, 1, 2, 2, 1, 1, 0, 0, 1);
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 2, 3, 4}, bias = {0.5f};
    std::vector<float> y(4);
    cpuRef().convForward(g, x.data(), w.data(), bias.data(), y.data());
    EXPECT_EQ(y, (std::vector<float>{37.5f, 47.5f, 67.5f, 77.5f}));
}

TEST(CpuRefHandComputed, ConvForwardZeroPadsSymmetricallyAndStrides) {
    // Same x and w, padding 1 and stride 2: windows start at (-1, -1), (-1, 1), (1, -1), (1, 1).
    // y[0][0] = x[0][0] w[1][1] = 4; y[0][1] = 2*3 + 3*4 = 18; y[1][0] = 4*2 + 7*4 = 36;
    // y[1][1] = 5*1 + 6*2 + 8*3 + 9*4 = 77.
    const ConvGeometry g = convGeometry(1, 1, 3, 3, 1, 2, 2, 2, 2, 1, 1, 1);
    ASSERT_EQ(g.outHeight, 2);
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 2, 3, 4};
    std::vector<float> y(4);
    cpuRef().convForward(g, x.data(), w.data(), nullptr, y.data());
    EXPECT_EQ(y, (std::vector<float>{4, 18, 36, 77}));
}

TEST(CpuRefHandComputed, SamePaddedConvSumsNeighbourhoods) {
    // x = 1..9, a 3x3 kernel of ones, padding 1, stride 1: each output is the sum of the
    // pixel's neighbourhood inside the image (corners 4 pixels, edges 6, the centre 9).
    const ConvGeometry g = convGeometry(1, 1, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1);
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w(9, 1.0f);
    std::vector<float> y(9);
    cpuRef().convForward(g, x.data(), w.data(), nullptr, y.data());
    EXPECT_EQ(y, (std::vector<float>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
}

TEST(CpuRefHandComputed, GroupedConvKeepsGroupsApart) {
    // Two groups, one input and two output channels each, 1x1 kernels:
    // out 0, 1 see only input channel 0; out 2, 3 only input channel 1.
    const ConvGeometry g = convGeometry(1, 2, 1, 2, 4, 1, 1, 1, 1, 0, 0, 2);
    const std::vector<float> x = {1, 2, 10, 20}, w = {1, -1, 2, 3};
    std::vector<float> y(8);
    cpuRef().convForward(g, x.data(), w.data(), nullptr, y.data());
    EXPECT_EQ(y, (std::vector<float>{1, 2, -1, -2, 20, 40, 30, 60}));
}

TEST(CpuRefHandComputed, PoolForwardTakesWindowMaxAndNonPaddingMean) {
    // x = 1..16 in a 4x4 image.
    std::vector<float> x(16);
    std::iota(x.begin(), x.end(), 1.0f);
    std::vector<float> y(4);

    cpuRef().poolForward(poolGeometry(PoolKind::Max, 1, 1, 4, 4, 2, 2, 2, 2, 0, 0), x.data(), y.data());
    EXPECT_EQ(y, (std::vector<float>{6, 8, 14, 16}));
    cpuRef().poolForward(poolGeometry(PoolKind::Average, 1, 1, 4, 4, 2, 2, 2, 2, 0, 0), x.data(), y.data());
    EXPECT_EQ(y, (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));

    // 3x3 stride 2 padding 1: the corner window holds 4 real values {1, 2, 5, 6} -> 14 / 4,
    // the edge windows 6 ({2,3,4,6,7,8} -> 30 / 6, {5,6,9,10,13,14} -> 57 / 6), the last 9.
    cpuRef().poolForward(poolGeometry(PoolKind::Average, 1, 1, 4, 4, 3, 3, 2, 2, 1, 1), x.data(), y.data());
    EXPECT_EQ(y, (std::vector<float>{3.5f, 5.0f, 9.5f, 11.0f}));
    // Padding never wins a max, even over negative values.
    for (float& value : x) value -= 100.0f;
    cpuRef().poolForward(poolGeometry(PoolKind::Max, 1, 1, 4, 4, 3, 3, 2, 2, 1, 1), x.data(), y.data());
    EXPECT_EQ(y, (std::vector<float>{-94, -92, -86, -84}));
}

TEST(CpuRefHandComputed, MaxPoolBackwardSendsTiesToTheFirstMaximum) {
    // A 2x3 image of equal values, 2x2 windows at stride 1: each window's first element in
    // row-major order (its top-left) takes the gradient.
    const PoolGeometry g = poolGeometry(PoolKind::Max, 1, 1, 2, 3, 2, 2, 1, 1, 0, 0);
    const std::vector<float> x(6, 1.0f), y = {1.0f, 1.0f}, dy = {0.25f, 0.5f};
    std::vector<float> dx(6);
    cpuRef().poolBackward(g, x.data(), y.data(), dy.data(), dx.data());
    EXPECT_EQ(dx, (std::vector<float>{0.25f, 0.5f, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace cnnstudio::test
