// Activations stored bf16 and channels-last on the cuda kernels: the conversions and channel
// ops of kernels/cuda/layout.h (transposeImages for its three type pairs, the channels-last bias
// add and channel sums) against host loops, and the CudaBackend ops that follow
// activationFormat() (elementwise, activations, dropout mask, loss, copyChannels) run in the
// bf16 channels-last format the cudnn backend's bf16 mode uses, against host references on
// the same bf16 inputs. Every test skips, saying why, when this machine has no usable CUDA
// device.
//
// Tolerances: results the kernels compute with one fp32 operation and one rounding to bf16 (as
// the host does) must match exactly; results through exp/expm1 (whose fp32 values may differ
// by an ulp between device and host) within one bf16 ulp; fp32 sums in another order within
// 1e-5 of the sum of magnitudes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_bf16.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_buffer.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/ops/dropout_hash.h"
#include "cuda/cuda_backend.h"
#include "cuda/layout.h"
#include "engine/backend_test_support.h"
#include "kernels/bf16_values.h"

namespace cnnstudio::test {
namespace {

using Bf16 = __nv_bfloat16;

const double kSumTolerance = 1e-5;  // times the sum of magnitudes

float asFloat(float value) { return value; }
float asFloat(Bf16 value) { return __bfloat162float(value); }

template <class T>
T fromFloat(float value) {
    if constexpr (std::is_same_v<T, Bf16>) return __float2bfloat16(value);  // nearest even
    else return value;
}

template <class T>
std::vector<float> toFloats(const std::vector<T>& values) {
    std::vector<float> result;
    result.reserve(values.size());
    for (const T& value : values) result.push_back(asFloat(value));
    return result;
}

// |out - ref| within `ulps` bf16 units in the last place of ref (0: identical), per element.
::testing::AssertionResult withinBf16Ulps(const std::vector<float>& out,
                                          const std::vector<float>& ref, int ulps) {
    if (out.size() != ref.size())
        return ::testing::AssertionFailure()
               << out.size() << " elements where " << ref.size() << " were expected";
    for (std::size_t i = 0; i < out.size(); ++i) {
        const double allowed = ulps * std::ldexp(std::fabs(double(ref[i])), -7);
        if (!(std::fabs(double(out[i]) - ref[i]) <= allowed))
            return ::testing::AssertionFailure() << "element " << i << " is " << out[i]
                                                 << ", expected " << ref[i];
    }
    return ::testing::AssertionSuccess();
}

class LayoutTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (std::string why = backendUnavailableReason("cuda"); !why.empty())
            GTEST_SKIP() << "no CUDA device: " << why;
        BackendOptions bf16;  // activations bf16 channels-last, the format these ops serve
        bf16.precision = Precision::Bf16;
        backend_ = std::make_unique<kernels::CudaBackend>(bf16);
    }

public:  // for the checking functions below
    template <class T>
    BackendBuffer<T> upload(const std::vector<T>& values) {
        return bufferFromHost(*backend_, std::span<const T>(values));
    }
    template <class T>
    BackendBuffer<T> filled(std::size_t count, T value) {
        return upload(std::vector<T>(count, value));
    }
    // Waits for the stream, then copies the buffer (or its first `count` elements) out.
    template <class T>
    std::vector<T> download(const BackendBuffer<T>& buffer, std::size_t count = 0) {
        std::vector<T> values(count ? count : buffer.count());
        backend_->synchronize();
        backend_->download(values.data(), buffer.data(), values.size() * sizeof(T));
        return values;
    }
    cudaStream_t stream() const { return backend_->stream(); }

    std::unique_ptr<kernels::CudaBackend> backend_;
};

float* asActivations(const BackendBuffer<Bf16>& buffer) {
    return reinterpret_cast<float*>(buffer.data());
}

// ---- transposeImages -------------------------------------------------------------------------

template <class In, class Out>
void expectTransposeMatchesHost(LayoutTest& test, int images, int rows, int cols) {
    SCOPED_TRACE("images " + std::to_string(images) + ", rows " + std::to_string(rows) +
                 ", cols " + std::to_string(cols));
    SeededRandom random;
    const std::size_t count = std::size_t(images) * rows * cols;
    std::vector<In> in;
    for (float value : random.uniforms(count, -3.0f, 3.0f)) in.push_back(fromFloat<In>(value));
    std::vector<float> expected(count);
    for (int n = 0; n < images; ++n)
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) {
                const std::size_t image = std::size_t(n) * rows * cols;
                expected[image + std::size_t(c) * rows + r] =
                    asFloat(fromFloat<Out>(asFloat(in[image + std::size_t(r) * cols + c])));
            }
    const BackendBuffer<In> source = test.upload(in);
    const BackendBuffer<Out> destination =
        test.filled(count, fromFloat<Out>(std::nanf("")));
    kernels::transposeImages(source.data(), destination.data(), images, rows, cols, test.stream());
    EXPECT_TRUE(withinBf16Ulps(toFloats(test.download(destination)), expected, 0));
}

// Whole images in shared memory (256 to 12288 elements, padded: filters KCRS <-> KRSC, a small
// feature map's flatten), tiled (larger, both sides >= 8, partial edge tiles), direct (larger, a
// side under 8) and the degenerate shapes.
template <class In, class Out>
void expectTransposeMatchesHostOnEveryPath(LayoutTest& test) {
    expectTransposeMatchesHost<In, Out>(test, 5, 64, 9);     // a 3x3 filter's KCRS -> KRSC
    expectTransposeMatchesHost<In, Out>(test, 5, 9, 64);     // and back
    expectTransposeMatchesHost<In, Out>(test, 3, 36, 256);   // NHWC -> NCHW of 6x6x256
    expectTransposeMatchesHost<In, Out>(test, 2, 2, 6143);   // padded to exactly 12288
    expectTransposeMatchesHost<In, Out>(test, 2, 2, 6144);   // one padded float too many
    expectTransposeMatchesHost<In, Out>(test, 1500, 16, 16); // more images than an H200's blocks
    expectTransposeMatchesHost<In, Out>(test, 3, 137, 170);
    expectTransposeMatchesHost<In, Out>(test, 2, 3, 4101);   // NCHW -> NHWC of RGB images
    expectTransposeMatchesHost<In, Out>(test, 2, 4101, 3);   // and back
    expectTransposeMatchesHost<In, Out>(test, 3, 1, 45);
    expectTransposeMatchesHost<In, Out>(test, 3, 45, 1);
    expectTransposeMatchesHost<In, Out>(test, 1, 1, 1);
}

TEST_F(LayoutTest, TransposeFloatToBf16MatchesHostLoop) {
    expectTransposeMatchesHostOnEveryPath<float, Bf16>(*this);
}

TEST_F(LayoutTest, TransposeBf16ToFloatMatchesHostLoop) {
    expectTransposeMatchesHostOnEveryPath<Bf16, float>(*this);
}

TEST_F(LayoutTest, TransposeBf16ToBf16MatchesHostLoop) {
    expectTransposeMatchesHostOnEveryPath<Bf16, Bf16>(*this);
}

TEST_F(LayoutTest, TransposeRejectsEmptyShapes) {
    const BackendBuffer<float> buffer = filled(4, 0.0f);
    const BackendBuffer<Bf16> out = filled(4, fromFloat<Bf16>(0.0f));
    EXPECT_THROW(kernels::transposeImages(buffer.data(), out.data(), 1, 0, 4, stream()), Error);
}

// ---- addChannelBiasChannelsLast --------------------------------------------------------------

void expectBiasAddMatchesHost(LayoutTest& test, std::int64_t pixels, int channels,
                              std::size_t misalignment) {
    SCOPED_TRACE("pixels " + std::to_string(pixels) + ", channels " + std::to_string(channels) +
                 ", offset " + std::to_string(misalignment));
    SeededRandom random;
    const std::size_t count = std::size_t(pixels) * channels;
    const std::vector<Bf16> y = toBf16(random.uniforms(count + misalignment));
    const std::vector<float> bias = random.uniforms(std::size_t(channels), -2.0f, 2.0f);
    std::vector<float> expected(count);
    for (std::size_t i = 0; i < count; ++i)
        expected[i] = roundToBf16(asFloat(y[misalignment + i]) + bias[i % channels]);
    const BackendBuffer<Bf16> deviceY = test.upload(y);
    const BackendBuffer<float> deviceBias = test.upload(bias);
    kernels::addChannelBiasChannelsLast(deviceY.data() + misalignment, deviceBias.data(), pixels,
                                        channels, test.stream());
    std::vector<float> result = toFloats(test.download(deviceY));
    result.erase(result.begin(), result.begin() + std::ptrdiff_t(misalignment));
    EXPECT_TRUE(withinBf16Ulps(result, expected, 0));
}

TEST_F(LayoutTest, ChannelBiasAddMatchesHostLoop) {
    expectBiasAddMatchesHost(*this, 37, 24, 0);       // packs of 8
    expectBiasAddMatchesHost(*this, 37, 10, 0);       // packs of 2
    expectBiasAddMatchesHost(*this, 37, 7, 0);        // single elements
    expectBiasAddMatchesHost(*this, 37, 24, 1);       // unaligned: single elements
    expectBiasAddMatchesHost(*this, 1, 1, 0);
    // More packs than the grid has threads: the channel steps by the grid stride.
    expectBiasAddMatchesHost(*this, 100003, 24, 0);
    expectBiasAddMatchesHost(*this, 150001, 7, 0);
}

// ---- channelSumsChannelsLast -----------------------------------------------------------------

std::vector<float> channelSums(LayoutTest& test, const BackendBuffer<Bf16>& dy,
                               std::int64_t pixels, int channels, std::size_t misalignment) {
    const std::size_t bytes = kernels::channelSumsChannelsLastWorkspaceBytes(pixels, channels);
    const BackendBuffer<std::byte> workspace(*test.backend_, bytes > 0 ? bytes : 1);
    const BackendBuffer<float> sums = test.filled(std::size_t(channels), std::nanf(""));
    kernels::channelSumsChannelsLast(dy.data() + misalignment, sums.data(), pixels, channels,
                                     workspace.data(), test.stream());
    return test.download(sums);
}

void expectChannelSumsMatchHost(LayoutTest& test, std::int64_t pixels, int channels,
                                std::size_t misalignment) {
    SCOPED_TRACE("pixels " + std::to_string(pixels) + ", channels " + std::to_string(channels) +
                 ", offset " + std::to_string(misalignment));
    SeededRandom random;
    const std::size_t count = std::size_t(pixels) * channels;
    const std::vector<Bf16> dy = toBf16(random.uniforms(count + misalignment));
    std::vector<double> expected(std::size_t(channels), 0.0);
    std::vector<double> magnitude(std::size_t(channels), 0.0);
    for (std::size_t i = 0; i < count; ++i) {
        const double value = asFloat(dy[misalignment + i]);
        expected[i % channels] += value;
        magnitude[i % channels] += std::fabs(value);
    }
    const BackendBuffer<Bf16> deviceDy = test.upload(dy);
    const std::vector<float> sums = channelSums(test, deviceDy, pixels, channels, misalignment);
    for (int c = 0; c < channels; ++c)
        EXPECT_NEAR(sums[c], expected[c], kSumTolerance * magnitude[c] + 1e-6) << "channel " << c;
    // Deterministic: no atomics, a fixed order.
    const std::vector<float> again = channelSums(test, deviceDy, pixels, channels, misalignment);
    EXPECT_EQ(0, std::memcmp(sums.data(), again.data(), sums.size() * sizeof(float)))
        << "two runs on the same input differ";
}

TEST_F(LayoutTest, ChannelSumsMatchHostLoopAndRepeatBitForBit) {
    expectChannelSumsMatchHost(*this, 37, 24, 0);      // channel pairs, 16 lanes
    expectChannelSumsMatchHost(*this, 37, 7, 0);       // single channels
    expectChannelSumsMatchHost(*this, 37, 24, 1);      // unaligned: single channels
    expectChannelSumsMatchHost(*this, 1, 1, 0);
    expectChannelSumsMatchHost(*this, 300, 100, 0);    // two channel blocks
    expectChannelSumsMatchHost(*this, 100003, 24, 0);  // the most splits
    expectChannelSumsMatchHost(*this, 5000, 3, 0);
}

TEST_F(LayoutTest, ChannelSumsOfNoPixelsAreZero) {
    const BackendBuffer<Bf16> dy = filled(1, fromFloat<Bf16>(1.0f));
    EXPECT_EQ(kernels::channelSumsChannelsLastWorkspaceBytes(0, 5), 0u);
    const BackendBuffer<float> sums = filled(5, std::nanf(""));
    kernels::channelSumsChannelsLast(dy.data(), sums.data(), 0, 5, nullptr, stream());
    EXPECT_EQ(download(sums), std::vector<float>(5, 0.0f));
}

// ---- CudaBackend ops on bf16 activations ---------------------------------------------------

// The vectorised path (aligned, count % 8 != 0 for the tail) and the element path (misaligned).
TEST_F(LayoutTest, ElementwiseOpsOnBf16RoundOnceLikeTheHost) {
    SeededRandom random;
    const std::size_t count = 1003;
    for (std::size_t misalignment : {std::size_t(0), std::size_t(1)}) {
        SCOPED_TRACE("offset " + std::to_string(misalignment));
        const std::vector<Bf16> a = toBf16(random.uniforms(count + misalignment));
        const std::vector<Bf16> b = toBf16(random.uniforms(count + misalignment));
        const float alpha = 0.37f;
        std::vector<float> sum(count), product(count), axpy(count);
        for (std::size_t i = 0; i < count; ++i) {
            const float x = asFloat(a[misalignment + i]), y = asFloat(b[misalignment + i]);
            sum[i] = roundToBf16(x + y);
            product[i] = roundToBf16(x * y);
            axpy[i] = roundToBf16(std::fma(alpha, x, y));
        }
        const BackendBuffer<Bf16> deviceA = upload(a), deviceB = upload(b);
        const BackendBuffer<Bf16> out = filled(count + misalignment, fromFloat<Bf16>(0.0f));
        auto at = [&](const BackendBuffer<Bf16>& buffer) {
            return reinterpret_cast<float*>(buffer.data() + misalignment);
        };
        auto result = [&]() {
            std::vector<float> values = toFloats(download(out));
            values.erase(values.begin(), values.begin() + std::ptrdiff_t(misalignment));
            return values;
        };
        backend_->add(at(deviceA), at(deviceB), at(out), count);
        EXPECT_TRUE(withinBf16Ulps(result(), sum, 0)) << "add";
        backend_->multiply(at(deviceA), at(deviceB), at(out), count);
        EXPECT_TRUE(withinBf16Ulps(result(), product, 0)) << "multiply";
        backend_->copy(out.data(), deviceB.data(), out.bytes());
        backend_->axpy(alpha, at(deviceA), at(out), count);
        EXPECT_TRUE(withinBf16Ulps(result(), axpy, 0)) << "axpy";
    }
}

TEST_F(LayoutTest, ActivationsOnBf16MatchHost) {
    SeededRandom random;
    const std::size_t count = 1001;
    const float alpha = 0.2f;
    const std::vector<Bf16> x = toBf16(random.uniforms(count, -3.0f, 3.0f));
    const std::vector<Bf16> dy = toBf16(random.uniforms(count));
    const BackendBuffer<Bf16> deviceX = upload(x), deviceDy = upload(dy);
    const BackendBuffer<Bf16> out = filled(count, fromFloat<Bf16>(0.0f));
    // The activations in fp32 on the host (backend.h), value and gradient times g at v.
    const auto activate = [alpha](Activation kind, float v) {
        switch (kind) {
        case Activation::Relu: return v > 0.0f ? v : 0.0f;
        case Activation::LeakyRelu: return v > 0.0f ? v : alpha * v;
        case Activation::Elu: return v > 0.0f ? v : alpha * std::expm1(v);
        case Activation::Silu: return v / (1.0f + std::exp(-v));
        }
        return v;
    };
    const auto activateGradient = [alpha](Activation kind, float v, float g) {
        const float s = 1.0f / (1.0f + std::exp(-v));
        switch (kind) {
        case Activation::Relu: return v > 0.0f ? g : 0.0f;
        case Activation::LeakyRelu: return v > 0.0f ? g : alpha * g;
        case Activation::Elu: return v > 0.0f ? g : alpha * std::exp(v) * g;
        case Activation::Silu: return s * (1.0f + v * (1.0f - s)) * g;
        }
        return g;
    };
    for (Activation kind :
         {Activation::Relu, Activation::LeakyRelu, Activation::Elu, Activation::Silu}) {
        SCOPED_TRACE("activation " + std::to_string(int(kind)));
        std::vector<float> forward(count), backward(count);
        for (std::size_t i = 0; i < count; ++i) {
            const float v = asFloat(x[i]), g = asFloat(dy[i]);
            forward[i] = roundToBf16(activate(kind, v));
            backward[i] = roundToBf16(activateGradient(kind, v, g));
        }
        // exp differs in its last bits between host and device: one bf16 ulp after rounding.
        const int ulps = kind == Activation::Elu || kind == Activation::Silu ? 1 : 0;
        backend_->activationForward(kind, alpha, asActivations(deviceX), asActivations(out),
                                    count);
        EXPECT_TRUE(withinBf16Ulps(toFloats(download(out)), forward, ulps)) << "forward";
        backend_->activationBackward(kind, alpha, asActivations(deviceX), asActivations(out),
                                     asActivations(deviceDy), asActivations(out), count);
        EXPECT_TRUE(withinBf16Ulps(toFloats(download(out)), backward, ulps)) << "backward";
    }
}

TEST_F(LayoutTest, DropoutMaskInBf16KeepsTheSharedDecisions) {
    const std::size_t count = 4099;
    const float probability = 0.3f;
    const std::uint64_t seed = 12345;
    StepScalars scalars;
    scalars.step = 7;
    const BackendBuffer<StepScalars> step = bufferFromHost(*backend_, scalars);
    const BackendBuffer<Bf16> mask = filled(count, fromFloat<Bf16>(-1.0f));
    backend_->dropoutMask(probability, seed, step.data(), asActivations(mask), count);
    const float kept = roundToBf16(1.0f / (1.0f - probability));
    std::vector<float> expected(count);
    for (std::size_t i = 0; i < count; ++i)
        expected[i] = dropoutKeeps(seed, scalars.step, i, probability) ? kept : 0.0f;
    EXPECT_TRUE(withinBf16Ulps(toFloats(download(mask)), expected, 0));
}

TEST_F(LayoutTest, SoftmaxCrossEntropyReadsAndWritesBf16Logits) {
    SeededRandom random;
    LossGeometry g;
    g.batch = 5, g.classes = 11, g.labelSmoothing = 0.1f;
    const std::vector<Bf16> logits =
        toBf16(random.uniforms(std::size_t(g.batch) * g.classes, -4.0f, 4.0f));
    const std::vector<std::int32_t> labels = random.labels(std::size_t(g.batch), g.classes);
    const std::vector<float> weights = random.uniforms(std::size_t(g.classes), 0.5f, 2.0f);
    const BackendBuffer<Bf16> deviceLogits = upload(logits);
    const BackendBuffer<std::int32_t> deviceLabels = upload(labels);
    const BackendBuffer<float> deviceWeights = upload(weights);
    const BackendBuffer<float> probabilities = filled(logits.size(), std::nanf(""));
    const BackendBuffer<float> loss = filled(1, std::nanf(""));
    backend_->softmaxCrossEntropyForward(g, asActivations(deviceLogits), deviceLabels.data(),
                                         deviceWeights.data(), probabilities.data(), loss.data());
    const std::vector<float> p = download(probabilities);

    double weightedLoss = 0.0, weightTotal = 0.0;
    for (int i = 0; i < g.batch; ++i) {
        const std::size_t row = std::size_t(i) * g.classes;
        double largest = -INFINITY, expSum = 0.0;
        for (int k = 0; k < g.classes; ++k)
            largest = std::max<double>(largest, asFloat(logits[row + k]));
        for (int k = 0; k < g.classes; ++k)
            expSum += std::exp(asFloat(logits[row + k]) - largest);
        double sampleLoss = 0.0;
        for (int k = 0; k < g.classes; ++k) {
            const double logP = asFloat(logits[row + k]) - largest - std::log(expSum);
            EXPECT_NEAR(p[row + k], std::exp(logP), 1e-5) << "sample " << i << " class " << k;
            const double target = (k == labels[i] ? 1.0 - g.labelSmoothing : 0.0) +
                                  g.labelSmoothing / g.classes;
            sampleLoss -= target * logP;
        }
        weightedLoss += weights[labels[i]] * sampleLoss;
        weightTotal += weights[labels[i]];
    }
    const double expectedLoss = weightedLoss / weightTotal;
    EXPECT_NEAR(download(loss)[0], expectedLoss, 1e-5 * std::fabs(expectedLoss) + 1e-6);

    const BackendBuffer<Bf16> dlogits = filled(logits.size(), fromFloat<Bf16>(0.0f));
    backend_->softmaxCrossEntropyBackward(g, probabilities.data(), deviceLabels.data(),
                                          deviceWeights.data(), asActivations(dlogits));
    std::vector<float> expected(logits.size());
    const float inverseWeightTotal = float(1.0 / weightTotal);
    for (int i = 0; i < g.batch; ++i)
        for (int k = 0; k < g.classes; ++k) {
            const std::size_t e = std::size_t(i) * g.classes + k;
            const float target =
                (k == labels[i] ? 1.0f - g.labelSmoothing : 0.0f) + g.labelSmoothing / g.classes;
            expected[e] = roundToBf16(weights[labels[i]] * inverseWeightTotal * (p[e] - target));
        }
    EXPECT_TRUE(withinBf16Ulps(toFloats(download(dlogits)), expected, 1));
}

TEST_F(LayoutTest, SoftmaxCrossEntropyBackwardRefusesBf16InPlace) {
    LossGeometry g;
    g.batch = 2, g.classes = 3;
    const BackendBuffer<float> probabilities = filled(6, 0.5f);
    const BackendBuffer<std::int32_t> labels = upload(std::vector<std::int32_t>{0, 1});
    EXPECT_THROW(backend_->softmaxCrossEntropyBackward(g, probabilities.data(), labels.data(),
                                                       nullptr, probabilities.data()),
                 Error);
}

// Channels-last: for every (image, position) row, channels [srcOffset, srcOffset + channels)
// go to [dstOffset, ...); the destination's other channels are left alone.
void expectChannelsLastCopyMatchesHost(LayoutTest& test, int batch, int spatial, int channels,
                                       int srcChannels, int srcOffset, int dstChannels,
                                       int dstOffset) {
    SCOPED_TRACE("batch " + std::to_string(batch) + ", spatial " + std::to_string(spatial) +
                 ", channels " + std::to_string(channels) + " of " + std::to_string(srcChannels) +
                 " at " + std::to_string(srcOffset) + " to " + std::to_string(dstChannels) +
                 " at " + std::to_string(dstOffset));
    SeededRandom random;
    const std::size_t rows = std::size_t(batch) * spatial;
    const std::vector<Bf16> src = toBf16(random.uniforms(rows * srcChannels));
    const std::vector<Bf16> dst = toBf16(random.uniforms(rows * dstChannels));
    std::vector<float> expected = toFloats(dst);
    for (std::size_t row = 0; row < rows; ++row)
        for (int c = 0; c < channels; ++c)
            expected[row * dstChannels + dstOffset + c] =
                asFloat(src[row * srcChannels + srcOffset + c]);
    const BackendBuffer<Bf16> deviceSrc = test.upload(src), deviceDst = test.upload(dst);
    test.backend_->copyChannels(batch, spatial, channels, asActivations(deviceSrc), srcChannels,
                                srcOffset, asActivations(deviceDst), dstChannels, dstOffset);
    EXPECT_TRUE(withinBf16Ulps(toFloats(test.download(deviceDst)), expected, 0));
}

TEST_F(LayoutTest, CopyChannelsChannelsLastMovesEachRowsChannels) {
    expectChannelsLastCopyMatchesHost(*this, 2, 5, 3, 7, 2, 9, 4);      // element by element
    expectChannelsLastCopyMatchesHost(*this, 3, 13, 8, 16, 8, 24, 16);  // 16-byte units
    expectChannelsLastCopyMatchesHost(*this, 2, 1, 5, 5, 0, 12, 7);     // dense-like, 1x1
}

}  // namespace
}  // namespace cnnstudio::test
