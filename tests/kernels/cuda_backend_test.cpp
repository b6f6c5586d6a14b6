// The cuda backend beyond the shared conformance suite (tests/engine): shapes on which its
// kernels take paths the small conformance geometries never reach (the 128-row GEMM tile,
// split-K over many parts, float4 loads and stores and their unaligned fallbacks, statistics
// over many blocks per channel), the determinism of its reductions, step capture, and its
// errors (out of memory, a missing device, a precision it does not run).
// Every test skips, saying why, when this machine has no usable CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/tensor.h"
#include "engine/backend_test_support.h"

namespace cnnstudio::test {
namespace {

// Conv and dense results are sums of up to a few thousand products: fp32 against cpu-ref's
// plain loops in another order.
const double kTolerance = relativeTolerance(Precision::Fp32);

class CudaBackendTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (std::string why = backendUnavailableReason("cuda"); !why.empty())
            GTEST_SKIP() << "no CUDA device: " << why;
        cuda_ = createBackend("cuda");
        reference_ = createBackend("cpu-ref");
    }

    std::unique_ptr<Backend> cuda_, reference_;
};

// Runs the three convolution ops on cpu-ref and on cuda with the same inputs and compares
// every output.
void expectConvolutionMatchesReference(Backend& cuda, Backend& reference, const ConvGeometry& g,
                                       SeededRandom& random) {
    SCOPED_TRACE(describe(g));
    const std::vector<float> x = random.uniforms(std::size_t(g.inputCount()));
    const std::vector<float> w = random.uniforms(std::size_t(g.weightCount()), -0.2f, 0.2f);
    const std::vector<float> bias = random.uniforms(std::size_t(g.outChannels));
    const std::vector<float> dy = random.uniforms(std::size_t(g.outputCount()));
    std::vector<float> results[2][5];  // [backend][y, dx, dw, dbias, (unused)]
    Backend* backends[2] = {&reference, &cuda};
    for (int side = 0; side < 2; ++side) {
        Backend& backend = *backends[side];
        Tensor tx = tensorFromHost(backend, x), tw = tensorFromHost(backend, w);
        Tensor tb = tensorFromHost(backend, bias), tdy = tensorFromHost(backend, dy);
        Tensor y = poisonedTensor(backend, g.outputCount());
        Tensor dx = poisonedTensor(backend, g.inputCount());
        Tensor dw = poisonedTensor(backend, g.weightCount());
        Tensor db = poisonedTensor(backend, g.outChannels);
        backend.convForward(g, tx.data(), tw.data(), tb.data(), y.data());
        backend.convBackwardData(g, tdy.data(), tw.data(), dx.data());
        backend.convBackwardFilter(g, tx.data(), tdy.data(), dw.data(), db.data());
        results[side][0] = y.toHost();
        results[side][1] = dx.toHost();
        results[side][2] = dw.toHost();
        results[side][3] = db.toHost();
    }
    EXPECT_TRUE(closeTo(results[1][0], results[0][0], kTolerance, "y"));
    EXPECT_TRUE(closeTo(results[1][1], results[0][1], kTolerance, "dx"));
    EXPECT_TRUE(closeTo(results[1][2], results[0][2], kTolerance, "dw"));
    EXPECT_TRUE(closeTo(results[1][3], results[0][3], kTolerance, "dbias"));
}

TEST_F(CudaBackendTest, ConvolutionsOnEveryGemmPathMatchReference) {
    SeededRandom random;
    const ConvGeometry geometries[] = {
        // 130 filters: the 128-row tile, a partly filled second row of tiles; K = 576 and
        // 12x12 maps take the float4 loads and stores.
        convGeometry(2, 64, 12, 12, 130, 3, 3, 1, 1, 1, 1, 1),
        // exactly one 64-row tile, 24x24 maps, K = 288
        convGeometry(3, 32, 24, 24, 64, 3, 3, 1, 1, 1, 1, 1),
        // many channels on small maps: long K, the backward filter split in many parts
        convGeometry(2, 128, 6, 6, 256, 3, 3, 1, 1, 1, 1, 1),
        // two groups of 80 filters (the wide tile per group)
        convGeometry(2, 16, 10, 10, 160, 3, 3, 1, 1, 1, 1, 2),
        // odd sizes everywhere: K = 75 (no float4), 5x5 stride 2, 70 filters
        convGeometry(1, 3, 33, 31, 70, 5, 5, 2, 2, 2, 2, 1),
        // stride 2 with 3x3 (backward data reads dy dilated by the stride), wide tile
        convGeometry(2, 24, 13, 14, 96, 3, 3, 2, 2, 1, 1, 1),
        // depthwise with many positions per filter: the filter gradient in several parts
        convGeometry(32, 4, 24, 24, 4, 3, 3, 1, 1, 1, 1, 4),
        // depthwise 5x5 with a channel multiplier: 25 taps, two passes of the filter gradient
        convGeometry(8, 3, 20, 20, 6, 5, 5, 1, 1, 2, 2, 3),
    };
    for (const ConvGeometry& g : geometries)
        expectConvolutionMatchesReference(*cuda_, *reference_, g, random);
}

// The GEMM core multiplies on TF32 tensor cores with every operand split in two (3xTF32): over
// a long K its error must stay at fp32's order, where TF32 alone (10-bit mantissas) would be
// off by about 3e-4 of the outputs' size.
TEST_F(CudaBackendTest, ConvolutionsOnTensorCoresKeepFp32Accuracy) {
    SeededRandom random;
    const ConvGeometry g = convGeometry(2, 256, 8, 8, 128, 3, 3, 1, 1, 1, 1, 1);  // K = 2304
    SCOPED_TRACE(describe(g));
    const std::vector<float> x = random.uniforms(std::size_t(g.inputCount()));
    const std::vector<float> w = random.uniforms(std::size_t(g.weightCount()));
    std::vector<float> y[2];
    Backend* backends[2] = {reference_.get(), cuda_.get()};
    for (int side = 0; side < 2; ++side) {
        Tensor tx = tensorFromHost(*backends[side], x), tw = tensorFromHost(*backends[side], w);
        Tensor ty = poisonedTensor(*backends[side], g.outputCount());
        backends[side]->convForward(g, tx.data(), tw.data(), nullptr, ty.data());
        y[side] = ty.toHost();
    }
    EXPECT_TRUE(closeTo(y[1], y[0], 2e-5, "y"));
}

TEST_F(CudaBackendTest, DenseLayersMatchReference) {
    SeededRandom random;
    const DenseGeometry geometries[] = {{5, 300, 70}, {130, 64, 200}, {256, 1152, 7}, {3, 9, 1}};
    for (const DenseGeometry& g : geometries) {
        SCOPED_TRACE(describe(g));
        const auto inCount = std::size_t(g.batch) * g.inFeatures;
        const auto outCount = std::size_t(g.batch) * g.outFeatures;
        const auto weightCount = std::size_t(g.outFeatures) * g.inFeatures;
        const std::vector<float> x = random.uniforms(inCount);
        const std::vector<float> w = random.uniforms(weightCount, -0.1f, 0.1f);
        const std::vector<float> bias = random.uniforms(std::size_t(g.outFeatures));
        const std::vector<float> dy = random.uniforms(outCount);
        std::vector<float> results[2][4];
        Backend* backends[2] = {reference_.get(), cuda_.get()};
        for (int side = 0; side < 2; ++side) {
            Backend& backend = *backends[side];
            Tensor tx = tensorFromHost(backend, x), tw = tensorFromHost(backend, w);
            Tensor tb = tensorFromHost(backend, bias), tdy = tensorFromHost(backend, dy);
            Tensor y = poisonedTensor(backend, std::int64_t(outCount));
            Tensor dx = poisonedTensor(backend, std::int64_t(inCount));
            Tensor dw = poisonedTensor(backend, std::int64_t(weightCount));
            Tensor db = poisonedTensor(backend, g.outFeatures);
            backend.denseForward(g, tx.data(), tw.data(), tb.data(), y.data());
            backend.denseBackwardData(g, tdy.data(), tw.data(), dx.data());
            backend.denseBackwardWeights(g, tx.data(), tdy.data(), dw.data(), db.data());
            results[side][0] = y.toHost();
            results[side][1] = dx.toHost();
            results[side][2] = dw.toHost();
            results[side][3] = db.toHost();
        }
        EXPECT_TRUE(closeTo(results[1][0], results[0][0], kTolerance, "y"));
        EXPECT_TRUE(closeTo(results[1][1], results[0][1], kTolerance, "dx"));
        EXPECT_TRUE(closeTo(results[1][2], results[0][2], kTolerance, "dw"));
        EXPECT_TRUE(closeTo(results[1][3], results[0][3], kTolerance, "dbias"));
    }
}

TEST_F(CudaBackendTest, BatchNormOverManyBlocksPerChannelMatchesReference) {
    SeededRandom random;
    // 48x48 maps of 64 images: each channel's statistics are summed by many blocks; spatial 1
    // (after a dense layer) reads one value per image and channel.
    const BatchNormGeometry geometries[] = {{64, 3, 48 * 48, 1e-5f, 0.1f},
                                            {256, 100, 1, 1e-5f, 0.1f},
                                            {7, 5, 13 * 13, 1e-3f, 0.3f}};
    for (const BatchNormGeometry& g : geometries) {
        SCOPED_TRACE(describe(g));
        const auto channels = std::size_t(g.channels);
        std::vector<float> x = random.uniforms(std::size_t(g.count()), -2.0f, 3.0f);
        const std::vector<float> gamma = random.uniforms(channels, 0.5f, 1.5f);
        const std::vector<float> beta = random.uniforms(channels);
        const std::vector<float> runningMean = random.uniforms(channels);
        const std::vector<float> runningVar = random.uniforms(channels, 0.5f, 2.0f);
        const std::vector<float> dy = random.uniforms(std::size_t(g.count()));
        std::vector<float> results[2][8];
        Backend* backends[2] = {reference_.get(), cuda_.get()};
        for (int side = 0; side < 2; ++side) {
            Backend& backend = *backends[side];
            Tensor tx = tensorFromHost(backend, x), tg = tensorFromHost(backend, gamma);
            Tensor tb = tensorFromHost(backend, beta), tdy = tensorFromHost(backend, dy);
            Tensor rm = tensorFromHost(backend, runningMean);
            Tensor rv = tensorFromHost(backend, runningVar);
            Tensor y = poisonedTensor(backend, g.count());
            Tensor mean = poisonedTensor(backend, g.channels);
            Tensor invStd = poisonedTensor(backend, g.channels);
            Tensor dx = poisonedTensor(backend, g.count());
            Tensor dgamma = poisonedTensor(backend, g.channels);
            Tensor dbeta = poisonedTensor(backend, g.channels);
            backend.batchNormForwardTraining(g, tx.data(), tg.data(), tb.data(), y.data(),
                                             rm.data(), rv.data(), mean.data(), invStd.data());
            backend.batchNormBackward(g, tx.data(), tdy.data(), tg.data(), mean.data(),
                                      invStd.data(), dx.data(), dgamma.data(), dbeta.data());
            results[side][0] = y.toHost();
            results[side][1] = rm.toHost();
            results[side][2] = rv.toHost();
            results[side][3] = mean.toHost();
            results[side][4] = invStd.toHost();
            results[side][5] = dx.toHost();
            results[side][6] = dgamma.toHost();
            results[side][7] = dbeta.toHost();
        }
        const char* names[] = {"y", "running mean", "running var", "saved mean",
                               "saved inverse std", "dx", "dgamma", "dbeta"};
        for (int i = 0; i < 8; ++i)
            EXPECT_TRUE(closeTo(results[1][i], results[0][i], kTolerance, names[i]));
    }
}

TEST_F(CudaBackendTest, SplitKReductionsAreDeterministic) {
    SeededRandom random;
    // 64 images of 24x24 against 32 filters: the filter gradient has few output tiles and a
    // K of 36864, so it is split across many blocks; a dense layer with batch 8 splits its
    // forward K as well.
    const ConvGeometry g = convGeometry(64, 32, 24, 24, 32, 3, 3, 1, 1, 1, 1, 1);
    Tensor x = tensorFromHost(*cuda_, random.uniforms(std::size_t(g.inputCount())));
    Tensor dy = tensorFromHost(*cuda_, random.uniforms(std::size_t(g.outputCount())));
    Tensor dw = poisonedTensor(*cuda_, g.weightCount());
    Tensor db = poisonedTensor(*cuda_, g.outChannels);
    cuda_->convBackwardFilter(g, x.data(), dy.data(), dw.data(), db.data());
    const std::vector<float> firstDw = dw.toHost(), firstDb = db.toHost();
    cuda_->convBackwardFilter(g, x.data(), dy.data(), dw.data(), db.data());
    EXPECT_TRUE(identical(dw.toHost(), firstDw, "dw of the second run"));
    EXPECT_TRUE(identical(db.toHost(), firstDb, "dbias of the second run"));

    const DenseGeometry dense{8, 4096, 16};
    Tensor dx = tensorFromHost(*cuda_, random.uniforms(std::size_t(8 * 4096)));
    Tensor w = tensorFromHost(*cuda_, random.uniforms(std::size_t(16 * 4096)));
    Tensor y = poisonedTensor(*cuda_, 8 * 16);
    cuda_->denseForward(dense, dx.data(), w.data(), nullptr, y.data());
    const std::vector<float> firstY = y.toHost();
    cuda_->denseForward(dense, dx.data(), w.data(), nullptr, y.data());
    EXPECT_TRUE(identical(y.toHost(), firstY, "dense y of the second run"));
}

// An allocation one float larger, used from its second float: a pointer that is 4 but not 16
// bytes aligned, which sends the kernels down their one-element-at-a-time paths.
struct MisalignedTensor {
    Tensor storage;
    float* data() { return storage.data() + 1; }
    std::vector<float> toHost() const {
        std::vector<float> all = storage.toHost();
        return std::vector<float>(all.begin() + 1, all.end());
    }
};

MisalignedTensor misaligned(Backend& backend, const std::vector<float>& values) {
    std::vector<float> padded(values.size() + 1, 0.0f);
    std::copy(values.begin(), values.end(), padded.begin() + 1);
    return {tensorFromHost(backend, padded)};
}

TEST_F(CudaBackendTest, MisalignedPointersGiveTheSameResults) {
    SeededRandom random;
    const std::size_t count = 4099;
    const std::vector<float> a = random.uniforms(count), b = random.uniforms(count);

    // Elementwise: the same arithmetic per element on either path, so identical results.
    Tensor alignedY = tensorFromHost(*cuda_, b);
    MisalignedTensor shiftedY = misaligned(*cuda_, b);
    Tensor alignedA = tensorFromHost(*cuda_, a);
    MisalignedTensor shiftedA = misaligned(*cuda_, a);
    cuda_->axpy(0.5f, alignedA.data(), alignedY.data(), count);
    cuda_->axpy(0.5f, shiftedA.data(), shiftedY.data(), count);
    EXPECT_TRUE(identical(shiftedY.toHost(), alignedY.toHost(), "axpy"));
    cuda_->activationForward(Activation::Elu, 1.0f, alignedA.data(), alignedY.data(), count);
    cuda_->activationForward(Activation::Elu, 1.0f, shiftedA.data(), shiftedY.data(), count);
    EXPECT_TRUE(identical(shiftedY.toHost(), alignedY.toHost(), "elu"));

    // A convolution on 12x12 maps from a misaligned input and into a misaligned output.
    const ConvGeometry g = convGeometry(2, 8, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1);
    const std::vector<float> x = random.uniforms(std::size_t(g.inputCount()));
    Tensor w = tensorFromHost(*cuda_, random.uniforms(std::size_t(g.weightCount())));
    Tensor xAligned = tensorFromHost(*cuda_, x);
    MisalignedTensor xShifted = misaligned(*cuda_, x);
    Tensor yAligned = poisonedTensor(*cuda_, g.outputCount());
    MisalignedTensor yShifted =
        misaligned(*cuda_, std::vector<float>(std::size_t(g.outputCount()), 0.0f));
    cuda_->convForward(g, xAligned.data(), w.data(), nullptr, yAligned.data());
    cuda_->convForward(g, xShifted.data(), w.data(), nullptr, yShifted.data());
    EXPECT_TRUE(identical(yShifted.toHost(), yAligned.toHost(), "conv y"));

    // Batch norm statistics: float4 and one-by-one sums add in other orders.
    const BatchNormGeometry bn{4, 3, 16, 1e-5f, 0.1f};
    const std::vector<float> bnX = random.uniforms(std::size_t(bn.count()));
    Tensor gamma = tensorFromHost(*cuda_, random.uniforms(3, 0.5f, 1.5f));
    Tensor beta = tensorFromHost(*cuda_, random.uniforms(3));
    std::vector<float> outputs[2];
    for (int shifted = 0; shifted < 2; ++shifted) {
        Tensor rm = tensorFromHost(*cuda_, std::vector<float>(3, 0.0f));
        Tensor rv = tensorFromHost(*cuda_, std::vector<float>(3, 1.0f));
        Tensor mean = poisonedTensor(*cuda_, 3), invStd = poisonedTensor(*cuda_, 3);
        MisalignedTensor in = misaligned(*cuda_, bnX);
        Tensor inAligned = tensorFromHost(*cuda_, bnX);
        Tensor out = poisonedTensor(*cuda_, bn.count());
        cuda_->batchNormForwardTraining(bn, shifted ? in.data() : inAligned.data(), gamma.data(),
                                        beta.data(), out.data(), rm.data(), rv.data(),
                                        mean.data(), invStd.data());
        outputs[shifted] = out.toHost();
    }
    EXPECT_TRUE(closeTo(outputs[1], outputs[0], kTolerance, "batch norm y"));
}

// The state one small training step reads and writes: a convolution whose weights SGD updates
// from the gradient of a dropout-masked output. The learning rate and the dropout mask change
// with the uploaded StepScalars. The weight gradient is overlapped, as in a network's backward
// pass: a captured step forks it to the second stream and joins it before the update.
struct TinyStep {
    static ConvGeometry geometry() { return convGeometry(4, 8, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1); }
    ConvGeometry g = geometry();
    SgdSettings sgd{0.9f, true, 1e-4f};
    Tensor x, w, bias, y, mask, masked, dw, db, velocity;
    BackendBuffer<StepScalars> step;

    TinyStep(Backend& backend, const std::vector<float>& xValues, const std::vector<float>& wValues)
        : x(tensorFromHost(backend, xValues)), w(tensorFromHost(backend, wValues)),
          bias(tensorFromHost(backend, std::vector<float>(16, 0.1f))),
          y(backend, flatShape(g.outputCount())), mask(backend, flatShape(g.outputCount())),
          masked(backend, flatShape(g.outputCount())), dw(backend, flatShape(g.weightCount())),
          db(backend, flatShape(16)),
          velocity(tensorFromHost(backend, std::vector<float>(std::size_t(g.weightCount()), 0.0f))),
          step(bufferFromHost(backend, StepScalars{})) {}

    void record(Backend& backend) {
        backend.convForward(g, x.data(), w.data(), bias.data(), y.data());
        backend.dropoutMask(0.3f, 1234, step.data(), mask.data(), std::size_t(g.outputCount()));
        backend.multiply(y.data(), mask.data(), masked.data(), std::size_t(g.outputCount()));
        {
            WeightGradientOverlap overlap(backend);
            backend.convBackwardFilter(g, x.data(), masked.data(), dw.data(), db.data());
        }
        backend.sgdUpdate(sgd, step.data(), w.data(), dw.data(), velocity.data(),
                          std::size_t(g.weightCount()));
    }
};

TEST_F(CudaBackendTest, CapturedStepReplaysLikeEagerCalls) {
    SeededRandom random;
    const ConvGeometry g = TinyStep::geometry();
    const std::vector<float> x = random.uniforms(std::size_t(g.inputCount()));
    const std::vector<float> w = random.uniforms(std::size_t(g.weightCount()), -0.2f, 0.2f);
    const StepScalars steps[] = {{0.05f, 1.0f, 1.0f, 0}, {0.02f, 1.0f, 1.0f, 1},
                                 {0.01f, 1.0f, 1.0f, 2}};

    TinyStep eager(*cuda_, x, w);
    for (const StepScalars& scalars : steps) {
        cuda_->upload(eager.step.data(), &scalars, sizeof scalars);
        eager.record(*cuda_);
    }
    const std::vector<float> eagerWeights = eager.w.toHost();

    // A fresh backend captures before running anything, so the scratch memory the ops need is
    // first allocated while capturing.
    std::unique_ptr<Backend> capturing = createBackend("cuda");
    TinyStep replayed(*capturing, x, w);
    std::unique_ptr<StepGraph> graph = capturing->captureStep([&] { replayed.record(*capturing); });
    ASSERT_NE(graph, nullptr) << "the cuda backend captures steps";
    EXPECT_TRUE(identical(replayed.w.toHost(), w, "weights after capture (nothing ran)"));
    for (const StepScalars& scalars : steps) {
        capturing->upload(replayed.step.data(), &scalars, sizeof scalars);
        graph->replay();
    }
    EXPECT_TRUE(identical(replayed.w.toHost(), eagerWeights, "weights after three replays"));
}

TEST_F(CudaBackendTest, AllocatingWhileCapturingIsRefusedAndTheBackendStaysUsable) {
    try {
        cuda_->captureStep([&] { cuda_->allocateBytes(1024); });
        ADD_FAILURE() << "an allocation inside captureStep was accepted";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("captured"), std::string::npos) << error.what();
    }
    Tensor t(*cuda_, flatShape(5));
    cuda_->fill(t.data(), 2.5f, 5);
    EXPECT_TRUE(identical(t.toHost(), std::vector<float>(5, 2.5f), "fill after the refusal"));
}

TEST_F(CudaBackendTest, OutOfMemorySaysHowMuchWhereAndWhatToDo) {
    const std::size_t onePebibyte = std::size_t(1) << 50;
    try {
        void* pointer = cuda_->allocateBytes(onePebibyte);
        cuda_->freeBytes(pointer);
        FAIL() << "allocating 1 PiB succeeded";
    } catch (const Error& error) {
        const std::string text = error.what();
        EXPECT_NE(text.find("out of GPU memory allocating 1073741824 MiB on device 0"),
                  std::string::npos)
            << text;
        EXPECT_NE(error.hint().find("batch size"), std::string::npos) << text;
    }
    // The failure leaves no error behind: the next allocation and op work.
    Tensor t(*cuda_, flatShape(3));
    cuda_->fill(t.data(), 1.0f, 3);
    EXPECT_TRUE(identical(t.toHost(), std::vector<float>(3, 1.0f), "fill after the failure"));
}

// Allocates device memory from `backend` until none is left; the caller frees the blocks.
std::vector<void*> takeAllDeviceMemory(Backend& backend) {
    std::vector<void*> blocks;
    for (std::size_t bytes = std::size_t(1) << 30; bytes >= (std::size_t(1) << 20);) {
        try {
            blocks.push_back(backend.allocateBytes(bytes));
        } catch (const Error&) {
            bytes /= 2;
        }
    }
    return blocks;
}

// The weight-gradient stream has scratch memory of its own; with no room left for it, an
// overlapped weight gradient runs in order with the step's scratch instead of failing.
TEST_F(CudaBackendTest, OverlappedWeightGradientWithoutRoomForItsScratchRunsInOrder) {
    SeededRandom random;
    const ConvGeometry g = convGeometry(8, 64, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1);
    Tensor x = tensorFromHost(*cuda_, random.uniforms(std::size_t(g.inputCount())));
    Tensor dy = tensorFromHost(*cuda_, random.uniforms(std::size_t(g.outputCount())));
    Tensor dwInOrder = poisonedTensor(*cuda_, g.weightCount()), dw = poisonedTensor(*cuda_, g.weightCount());
    Tensor dbInOrder = poisonedTensor(*cuda_, g.outChannels), db = poisonedTensor(*cuda_, g.outChannels);
    // In order first: the step's scratch grows to what the op needs.
    cuda_->convBackwardFilter(g, x.data(), dy.data(), dwInOrder.data(), dbInOrder.data());
    std::vector<void*> blocks = takeAllDeviceMemory(*cuda_);
    ASSERT_FALSE(blocks.empty());
    try {
        WeightGradientOverlap overlap(*cuda_);
        cuda_->convBackwardFilter(g, x.data(), dy.data(), dw.data(), db.data());
    } catch (const Error& error) {
        ADD_FAILURE() << "the overlapped weight gradient failed: " << error.what();
    }
    for (void* block : blocks) cuda_->freeBytes(block);
    EXPECT_TRUE(identical(dw.toHost(), dwInOrder.toHost(), "dw overlapped, without room"));
    EXPECT_TRUE(identical(db.toHost(), dbInOrder.toHost(), "dbias overlapped, without room"));
}

TEST_F(CudaBackendTest, Tf32IsRefusedAndCudnnIsNamedForIt) {
    BackendOptions options;
    options.precision = Precision::Tf32;
    try {
        createBackend("cuda", options);
        ADD_FAILURE() << "tf32 was accepted";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("cudnn"), std::string::npos) << error.what();
    }
    EXPECT_EQ(cuda_->precision(), Precision::Fp32);
    EXPECT_EQ(cuda_->name(), "cuda");
    EXPECT_NE(cuda_->description().find("fp32"), std::string::npos) << cuda_->description();
    EXPECT_EQ(cuda_->activationFormat(), ActivationFormat{});
}

TEST_F(CudaBackendTest, Bf16KeepsActivationsBf16ChannelsLast) {
    BackendOptions options;
    options.precision = Precision::Bf16;
    const std::unique_ptr<Backend> bf16 = createBackend("cuda", options);
    EXPECT_EQ(bf16->precision(), Precision::Bf16);
    EXPECT_EQ(bf16->activationFormat(), (ActivationFormat{true, true}));
    EXPECT_NE(bf16->description().find("bf16"), std::string::npos) << bf16->description();
}

TEST_F(CudaBackendTest, MissingDeviceIndexIsNamed) {
    BackendOptions options;
    options.device = 4096;
    try {
        createBackend("cuda", options);
        FAIL() << "device 4096 was accepted";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("CUDA device 4096 does not exist"),
                  std::string::npos)
            << error.what();
    }
}

TEST_F(CudaBackendTest, BadGeometryIsAnErrorNotALaunch) {
    ConvGeometry g = convGeometry(2, 6, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1);
    g.groups = 4;  // does not divide 6 input channels
    Tensor x(*cuda_, flatShape(g.inputCount())), w(*cuda_, flatShape(64)),
        y(*cuda_, flatShape(g.outputCount()));
    try {
        cuda_->convForward(g, x.data(), w.data(), nullptr, y.data());
        FAIL() << "groups 4 with 6 input channels was accepted";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("groups"), std::string::npos) << error.what();
        EXPECT_NE(error.where().find("convForward"), std::string::npos) << error.what();
    }
}

}  // namespace
}  // namespace cnnstudio::test
