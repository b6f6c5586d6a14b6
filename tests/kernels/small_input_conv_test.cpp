// The direct kernels for convolutions over inputs of fewer than 8 channels
// (kernels/cuda/small_input_conv.h), called directly on bf16 channels-last tensors, against
// cpu-ref's fp32 convolution of the same bf16 values: fer-cnn's input layer (the 16-channel and
// 4-pixel paths), an RGB stem with stride, padding and a 7x7 kernel (several passes of tap rows in
// the filter gradient), and ragged output channels (the one-channel paths, the filter gradient
// on the CUDA cores; the others take the tensor cores). The cudnn backend's
// conformance suite covers them through the backend; this test also runs where a sanitizer
// cannot attach to cuDNN's kernels, and checks that the filter gradient repeats bit for bit.
// Every test skips, saying why, when this machine has no usable CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <cuda_bf16.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_buffer.h"
#include "cnnstudio/backend_registry.h"
#include "cuda/cuda_backend.h"
#include "cuda/small_input_conv.h"
#include "engine/backend_test_support.h"
#include "kernels/bf16_values.h"

namespace cnnstudio::test {
namespace {

using Bf16 = __nv_bfloat16;

// (N, C, H*W) <-> (N, H*W, C)
std::vector<float> toChannelsLast(const std::vector<float>& nchw, int batch, int channels, int pixels) {
    std::vector<float> nhwc(nchw.size());
    for (int n = 0; n < batch; ++n)
        for (int c = 0; c < channels; ++c)
            for (int p = 0; p < pixels; ++p)
                nhwc[(std::size_t(n) * pixels + p) * channels + c] =
                    nchw[(std::size_t(n) * channels + c) * pixels + p];
    return nhwc;
}

std::vector<float> bf16Values(SeededRandom& random, std::int64_t count) {
    std::vector<float> values = random.uniforms(std::size_t(count));
    for (float& value : values) value = roundToBf16(value);
    return values;
}

class SmallInputConvTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (std::string why = backendUnavailableReason("cuda"); !why.empty())
            GTEST_SKIP() << "no CUDA device: " << why;
        backend_ = std::make_unique<kernels::CudaBackend>(BackendOptions{});
    }

    template <class T>
    BackendBuffer<T> upload(const std::vector<T>& values) {
        return bufferFromHost(*backend_, std::span<const T>(values));
    }
    template <class T>
    std::vector<T> download(const BackendBuffer<T>& buffer) {
        std::vector<T> values(buffer.count());
        backend_->synchronize();
        backend_->download(values.data(), buffer.data(), values.size() * sizeof(T));
        return values;
    }
    int multiprocessors() const {
        int device = 0, count = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
        return count;
    }

    void expectForwardMatchesCpuRef(const ConvGeometry& g, bool withBias);
    void expectFilterGradientMatchesCpuRef(const ConvGeometry& g, bool withBias);

    std::unique_ptr<kernels::CudaBackend> backend_;
};

void SmallInputConvTest::expectForwardMatchesCpuRef(const ConvGeometry& g, bool withBias) {
    SCOPED_TRACE(describe(g) + (withBias ? " with bias" : " without bias"));
    ASSERT_TRUE(kernels::isSmallInputConv(g));
    SeededRandom random;
    const std::vector<float> x = bf16Values(random, g.inputCount());
    const std::vector<float> w = random.uniforms(std::size_t(g.weightCount()));
    const std::vector<float> bias = random.uniforms(std::size_t(g.outChannels));
    std::vector<float> expected(std::size_t(g.outputCount()));
    cpuRef().convForward(g, x.data(), w.data(), withBias ? bias.data() : nullptr, expected.data());
    const int outPixels = g.outHeight * g.outWidth;
    expected = toChannelsLast(expected, g.batch, g.outChannels, outPixels);

    const BackendBuffer<Bf16> deviceX = upload(toBf16(toChannelsLast(x, g.batch, g.inChannels, g.inHeight * g.inWidth)));
    const BackendBuffer<float> deviceW = upload(w), deviceBias = upload(bias);
    const BackendBuffer<Bf16> deviceY = upload(std::vector<Bf16>(expected.size(), __float2bfloat16(NAN)));
    kernels::smallInputConvForward(g, deviceX.data(), deviceW.data(),
                                   withBias ? deviceBias.data() : nullptr, deviceY.data(),
                                   multiprocessors(), backend_->stream());
    const std::vector<Bf16> y = download(deviceY);
    // fp32 sums in another order, then one rounding to bf16: within one bf16 ulp.
    for (std::size_t i = 0; i < y.size(); ++i)
        ASSERT_NEAR(__bfloat162float(y[i]), expected[i], std::ldexp(std::fabs(expected[i]), -7) + 1e-5)
            << "y element " << i << " (channels last)";
}

void SmallInputConvTest::expectFilterGradientMatchesCpuRef(const ConvGeometry& g, bool withBias) {
    SCOPED_TRACE(describe(g) + (withBias ? " with dbias" : " without dbias"));
    ASSERT_TRUE(kernels::isSmallInputConv(g));
    SeededRandom random;
    const std::vector<float> x = bf16Values(random, g.inputCount());
    const std::vector<float> dy = bf16Values(random, g.outputCount());
    std::vector<float> expectedDw(std::size_t(g.weightCount())), expectedDbias(std::size_t(g.outChannels));
    cpuRef().convBackwardFilter(g, x.data(), dy.data(), expectedDw.data(),
                                withBias ? expectedDbias.data() : nullptr);

    const BackendBuffer<Bf16> deviceX = upload(toBf16(toChannelsLast(x, g.batch, g.inChannels, g.inHeight * g.inWidth)));
    const BackendBuffer<Bf16> deviceDy = upload(toBf16(toChannelsLast(dy, g.batch, g.outChannels, g.outHeight * g.outWidth)));
    const BackendBuffer<std::byte> workspace(*backend_, kernels::smallInputConvBackwardFilterWorkspaceBytes(g));
    auto run = [&] {
        const BackendBuffer<float> dw = upload(std::vector<float>(expectedDw.size(), NAN));
        const BackendBuffer<float> dbias = upload(std::vector<float>(expectedDbias.size(), NAN));
        kernels::smallInputConvBackwardFilter(g, deviceX.data(), deviceDy.data(), dw.data(),
                                              withBias ? dbias.data() : nullptr, workspace.data(),
                                              backend_->stream());
        return std::pair{download(dw), download(dbias)};
    };
    const auto [dw, dbias] = run();
    // Sums of a few thousand products of values below 1, in fp32 in another order.
    const double tolerance = 1e-6 * double(g.batch) * g.outHeight * g.outWidth;
    for (std::size_t i = 0; i < dw.size(); ++i)
        ASSERT_NEAR(dw[i], expectedDw[i], tolerance) << "dw element " << i;
    if (withBias) {
        for (std::size_t k = 0; k < dbias.size(); ++k)
            ASSERT_NEAR(dbias[k], expectedDbias[k], tolerance) << "dbias element " << k;
    }
    const auto [dwAgain, dbiasAgain] = run();
    EXPECT_EQ(0, std::memcmp(dw.data(), dwAgain.data(), dw.size() * sizeof(float)))
        << "two runs on the same input differ";
}

const ConvGeometry kFerInputLayer = convGeometry(3, 1, 48, 48, 64, 3, 3, 1, 1, 1, 1, 1);
const ConvGeometry kRgbStem = convGeometry(2, 3, 17, 19, 16, 7, 7, 2, 2, 3, 3, 1);
const ConvGeometry kRaggedOutputs = convGeometry(2, 2, 9, 7, 5, 3, 3, 1, 1, 1, 1, 1);
// Grey 3x3 with 16 filters (two channel packs a pixel in the filter gradient), strided
// and unpadded
const ConvGeometry kGreyStrided = convGeometry(2, 1, 11, 13, 16, 3, 3, 2, 2, 0, 0, 1);

TEST_F(SmallInputConvTest, ForwardMatchesCpuRef) {
    for (const ConvGeometry& g : {kFerInputLayer, kGreyStrided, kRgbStem, kRaggedOutputs})
        for (bool withBias : {true, false}) expectForwardMatchesCpuRef(g, withBias);
}

TEST_F(SmallInputConvTest, FilterGradientMatchesCpuRefAndRepeatsBitForBit) {
    for (const ConvGeometry& g : {kFerInputLayer, kGreyStrided, kRgbStem, kRaggedOutputs})
        for (bool withBias : {true, false}) expectFilterGradientMatchesCpuRef(g, withBias);
}

// The input block's backward lets dy through where its forward's ReLU did: fer-cnn's layer and
// a 16-filter one on the tensor cores, 5 filters on the CUDA cores.
// dbeta is the sum of the gated dy; on the host that sum over y > 0 (y as the forward left it)
// must agree to within fp32's rounding, where one gate wrong moves it by a whole dy.
TEST_F(SmallInputConvTest, InputBlockGatesDyWhereItsForwardsReluLetItThrough) {
    const ConvGeometry greyFiveFilters = convGeometry(2, 1, 9, 7, 5, 3, 3, 1, 1, 1, 1, 1);
    for (const ConvGeometry& g : {kFerInputLayer, kGreyStrided, greyFiveFilters}) {
        SCOPED_TRACE(describe(g));
        const BackendBuffer<Bf16> c = upload(std::vector<Bf16>(std::size_t(g.outputCount())));
        ASSERT_TRUE(kernels::isSmallInputConvBatchNormRelu(g, c.data()));
        SeededRandom random;
        const auto channels = std::size_t(g.outChannels);
        const std::vector<float> x = bf16Values(random, g.inputCount());
        const std::vector<float> dy = bf16Values(random, g.outputCount());
        const int inPixels = g.inHeight * g.inWidth, outPixels = g.outHeight * g.outWidth;
        const BackendBuffer<Bf16> deviceX = upload(toBf16(toChannelsLast(x, g.batch, g.inChannels, inPixels)));
        const BackendBuffer<Bf16> deviceDy = upload(toBf16(toChannelsLast(dy, g.batch, g.outChannels, outPixels)));
        const BackendBuffer<float> w = upload(random.uniforms(std::size_t(g.weightCount())));
        const BackendBuffer<float> gamma = upload(random.uniforms(channels, 0.5f, 1.5f));
        const BackendBuffer<float> beta = upload(random.uniforms(channels));
        const BackendBuffer<float> runningMean = upload(std::vector<float>(channels, 0.0f));
        const BackendBuffer<float> runningVar = upload(std::vector<float>(channels, 1.0f));
        BackendBuffer<float> savedMean(*backend_, channels), savedInvStd(*backend_, channels);
        BackendBuffer<float> dw(*backend_, std::size_t(g.weightCount())), dgamma(*backend_, channels);
        BackendBuffer<float> dbeta(*backend_, channels);
        const BackendBuffer<Bf16> y = upload(std::vector<Bf16>(std::size_t(g.outputCount()), __float2bfloat16(NAN)));
        const BackendBuffer<std::byte> workspace(*backend_, kernels::smallInputConvBatchNormReluWorkspaceBytes(g));
        const BatchNormGeometry bn{g.batch, g.outChannels, outPixels, 1e-5f, 0.1f};
        kernels::smallInputConvBatchNormReluForwardTraining(
            g, bn, deviceX.data(), w.data(), nullptr, gamma.data(), beta.data(), c.data(), y.data(),
            runningMean.data(), runningVar.data(), savedMean.data(), savedInvStd.data(), workspace.data(),
            multiprocessors(), backend_->stream());
        kernels::smallInputConvBatchNormReluBackward(g, deviceX.data(), w.data(), c.data(), y.data(),
                                                     deviceDy.data(), gamma.data(), savedInvStd.data(),
                                                     dw.data(), nullptr, dgamma.data(), dbeta.data(),
                                                     workspace.data(), backend_->stream());
        const std::vector<Bf16> relu = download(y);
        const std::vector<float> gradient = download(dbeta);
        const std::vector<float> dyLast = toChannelsLast(dy, g.batch, g.outChannels, outPixels);
        std::vector<double> expected(channels, 0.0);
        std::size_t open = 0;
        for (std::size_t i = 0; i < relu.size(); ++i)
            if (__bfloat162float(relu[i]) > 0.0f) {
                expected[i % channels] += dyLast[i];
                ++open;
            }
        EXPECT_GT(open, relu.size() / 4) << "the ReLU lets a fair share through";
        EXPECT_LT(open, relu.size() * 3 / 4);
        for (std::size_t k = 0; k < channels; ++k)
            ASSERT_NEAR(gradient[k], expected[k], 1e-6 * double(relu.size() / channels) + 1e-5) << "dbeta " << k;
    }
}

TEST(SmallInputConv, TakesUngroupedInputLayersWhoseWeightsFitInSharedMemory) {
    EXPECT_TRUE(kernels::isSmallInputConv(kFerInputLayer));
    EXPECT_TRUE(kernels::isSmallInputConv(convGeometry(1, 3, 224, 224, 64, 7, 7, 2, 2, 3, 3, 1)));
    EXPECT_FALSE(kernels::isSmallInputConv(convGeometry(1, 8, 12, 12, 8, 3, 3, 1, 1, 1, 1, 1)))
        << "8 channels fill a 16-byte vector: the tensor cores take them";
    EXPECT_FALSE(kernels::isSmallInputConv(convGeometry(1, 4, 12, 12, 8, 3, 3, 1, 1, 1, 1, 2)))
        << "grouped";
    EXPECT_FALSE(kernels::isSmallInputConv(convGeometry(1, 3, 12, 12, 128, 7, 7, 2, 2, 3, 3, 1)))
        << "18,816 weights do not fit in 48 KiB of shared memory";
}

}  // namespace
}  // namespace cnnstudio::test
