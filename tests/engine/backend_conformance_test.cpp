// Every op of every available backend against cpu-ref, forward and backward, on fresh seeded
// random inputs over several geometries. Each op's outputs are poisoned with NaN first, so an
// element a backend forgets to write (or accumulates into) fails the comparison. Relative error
// ||out - ref|| / ||ref|| must stay under the tolerance of the backend's precision, and no
// element may stray far from its reference (closeTo and relativeTolerance in
// backend_test_support.h); fills, copies, flattens and dropout masks must be exact.
// Activation operands (backend.h: x, y, dx, dy of layer ops, logits, dlogits, masks, the
// operands of axpy, add and multiply) are activation tensors of their true NCHW shape, since a
// backend may store them bf16 and channels-last; parameters, gradients and state are fp32.
// One instance per (backend, precision); a backend that runs a requested precision as another
// one is skipped there (its own precision's instance covers it).
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend_test_support.h"
#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio::test {
namespace {

struct BackendUnderTest {
    std::string name;
    Precision precision = Precision::Fp32;
};

void PrintTo(const BackendUnderTest& backend, std::ostream* out) {
    *out << backend.name << " " << toString(backend.precision);
}

std::vector<BackendUnderTest> backendsUnderTest() {
    std::vector<BackendUnderTest> backends;
    for (const std::string& name : availableBackends())
        if (name != "cpu-ref")
            for (const std::string& precision : backendPrecisions(name))
                backends.push_back({name, parsePrecision(precision)});
    return backends;
}

std::string instanceName(const ::testing::TestParamInfo<BackendUnderTest>& info) {
    std::string name = info.param.name + "_" + toString(info.param.precision);
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name;
}

enum class Side { Reference, Tested };

// The same host data on the reference backend and on the backend under test.
struct TwinTensor {
    Tensor reference, tested;
    float* at(Side side) { return side == Side::Reference ? reference.data() : tested.data(); }
    std::span<const float> span(Side side) { return {at(side), std::size_t(reference.count())}; }
};

template <typename T>
struct TwinBuffer {
    BackendBuffer<T> reference, tested;
    T* at(Side side) const { return side == Side::Reference ? reference.data() : tested.data(); }
};

std::vector<float> difference(const std::vector<float>& after, const std::vector<float>& before) {
    std::vector<float> delta(after.size());
    for (std::size_t i = 0; i < after.size(); ++i) delta[i] = after[i] - before[i];
    return delta;
}

class BackendConformance : public ::testing::TestWithParam<BackendUnderTest> {
protected:
    void SetUp() override {
        reference_ = createBackend("cpu-ref");
        BackendOptions options;
        options.precision = GetParam().precision;
        try {
            tested_ = createBackend(GetParam().name, options);
        } catch (const Error& error) {
            GTEST_SKIP() << GetParam().name << " cannot be created with "
                         << toString(GetParam().precision) << ": " << error.what();
        }
        if (tested_->precision() != GetParam().precision)
            GTEST_SKIP() << GetParam().name << " runs " << toString(GetParam().precision)
                         << " as " << toString(tested_->precision())
                         << "; the " << toString(tested_->precision()) << " instance covers it";
        tolerance_ = relativeTolerance(tested_->precision());
    }

    TwinTensor input(std::span<const float> values) {
        return {tensorFromHost(*reference_, values), tensorFromHost(*tested_, values)};
    }
    TwinTensor poisoned(std::int64_t count) {
        return {poisonedTensor(*reference_, count), poisonedTensor(*tested_, count)};
    }
    // The reference gets the values as the tested backend stores them (rounded to bf16, say),
    // so that the comparison measures the op, not the activation format.
    TwinTensor activationInput(TensorShape shape, std::span<const float> values) {
        Tensor tested = activationsFromHost(*tested_, shape, values);
        return {activationsFromHost(*reference_, shape, tested.toHost()), std::move(tested)};
    }
    // A batch norm's parameters and running statistics, as training might leave them: gamma in
    // [0.5, 1.5], beta and the running mean in [-1, 1], the running variance in [0.5, 2].
    struct BatchNormTwins {
        TwinTensor gamma, beta, runningMean, runningVar;
    };
    BatchNormTwins batchNormParameters(SeededRandom& random, std::size_t channels) {
        return {input(random.uniforms(channels, 0.5f, 1.5f)), input(random.uniforms(channels)),
                input(random.uniforms(channels)), input(random.uniforms(channels, 0.5f, 2.0f))};
    }
    TwinTensor poisonedActivations(TensorShape shape) {
        return {test::poisonedActivations(*reference_, shape),
                test::poisonedActivations(*tested_, shape)};
    }
    template <typename T>
    TwinBuffer<T> buffer(std::span<const T> values) {
        return {bufferFromHost(*reference_, values), bufferFromHost(*tested_, values)};
    }
    template <typename T>
    TwinBuffer<T> buffer(const T& value) {
        return {bufferFromHost(*reference_, value), bufferFromHost(*tested_, value)};
    }

    // Runs `op(backend, side)` on the reference, then on the backend under test.
    template <typename Op>
    void runOnBoth(Op&& op) {
        op(*reference_, Side::Reference);
        op(*tested_, Side::Tested);
        tested_->synchronize();
    }

    void expectClose(const TwinTensor& twin, const std::string& what, double scale = 0.0) {
        EXPECT_TRUE(closeTo(twin.tested.toHost(), twin.reference.toHost(), tolerance_, what, scale));
    }
    // A layer's weights w held from its forward pass to its backward data pass: forward(backend,
    // side) and backwardData(backend, side, dx) in one hold, then w changed to `changed` and
    // backwardData alone in a new hold, into `dxAfterTheChange`.
    template <typename Forward, typename BackwardData>
    void runWithWeightsHeld(TwinTensor& w, const std::vector<float>& changed, TwinTensor& dx,
                            TwinTensor& dxAfterTheChange, Forward&& forward,
                            BackwardData&& backwardData) {
        runOnBoth([&](Backend& backend, Side side) {
            {
                WeightsHeld held(backend, w.span(side));
                forward(backend, side);
                backwardData(backend, side, dx.at(side));
            }
            backend.upload(w.at(side), changed.data(), changed.size() * sizeof(float));
            WeightsHeld held(backend, w.span(side));
            backwardData(backend, side, dxAfterTheChange.at(side));
        });
    }
    // Activations are compared with the reference's values as the tested backend stores them
    // (rounded to bf16 there, say): an exact op moves stored values without changing them.
    void expectIdentical(const TwinTensor& twin, const std::string& what) {
        std::vector<float> expected = twin.reference.toHost();
        if (twin.tested.holdsActivations())
            expected = asStoredActivations(*tested_, twin.tested.shape(), expected);
        EXPECT_TRUE(identical(twin.tested.toHost(), expected, what));
    }

    std::unique_ptr<Backend> reference_, tested_;
    double tolerance_ = 0.0;
};

// ---- memory and elementwise -----------------------------------------------------------------

// Shapes of elementwise activation operands: one value, odd sizes, and more than 65536 values.
std::vector<TensorShape> elementwiseShapesToTest() {
    return {{1, 1, 1, 1}, {1, 7, 11, 13}, {3, 17, 37, 41}};
}

TEST_P(BackendConformance, UploadCopyDownloadRoundTripsExactly) {
    SeededRandom random;
    const std::vector<float> values = random.uniforms(1237, -1e6f, 1e6f);
    Tensor source = tensorFromHost(*tested_, values);
    Tensor destination = poisonedTensor(*tested_, std::int64_t(values.size()));
    tested_->copy(destination.data(), source.data(), source.bytes());
    tested_->synchronize();
    EXPECT_TRUE(identical(destination.toHost(), values, "copied tensor"));

    // An activation tensor's bytes() are those of its activation format: copying them moves
    // every stored activation.
    const TensorShape shape{3, 5, 7, 9};
    Tensor activations = activationsFromHost(*tested_, shape, random.uniforms(std::size_t(shape.count())));
    Tensor copied = test::poisonedActivations(*tested_, shape);
    tested_->copy(copied.data(), activations.data(), activations.bytes());
    tested_->synchronize();
    EXPECT_TRUE(identical(copied.toHost(), activations.toHost(), "copied activations"));
}

// Activations uploaded and downloaded again come back exactly when the activation format is
// fp32, within the precision's tolerance when it is narrower. Odd sizes in every dimension, so
// that a channels-last conversion that mixes up two dimensions cannot go unnoticed.
TEST_P(BackendConformance, ActivationsRoundTripThroughTheActivationFormat) {
    SeededRandom random;
    for (const TensorShape& shape :
         {TensorShape{3, 5, 7, 9}, TensorShape{2, 13, 1, 1}, TensorShape{1, 1, 11, 3},
          TensorShape{5, 3, 1, 17}}) {
        SCOPED_TRACE(describe(shape));
        const std::vector<float> values = random.uniforms(std::size_t(shape.count()), -100.0f, 100.0f);
        Tensor stored = Tensor::activations(*tested_, shape);
        tested_->uploadActivations(shape, values.data(), stored.data());
        std::vector<float> back(values.size(), std::numeric_limits<float>::quiet_NaN());
        tested_->downloadActivations(shape, stored.data(), back.data());
        if (tested_->activationFormat().bf16)
            EXPECT_TRUE(closeTo(back, values, tolerance_, "activations after the round trip"));
        else
            EXPECT_TRUE(identical(back, values, "activations after the round trip"));
    }
}

// Flatten hands a dense layer the NCHW element order whatever layout the image is stored in:
// forward from (N, C, H, W) into (N, C*H*W, 1, 1), backward the inverse, both exact.
TEST_P(BackendConformance, FlattenGivesTheNchwElementOrder) {
    SeededRandom random;
    for (const TensorShape& shape :
         {TensorShape{2, 3, 5, 7}, TensorShape{1, 4, 1, 1}, TensorShape{3, 1, 6, 5},
          TensorShape{2, 16, 3, 3}}) {
        SCOPED_TRACE(describe(shape));
        const auto count = std::size_t(shape.count());
        const TensorShape flat{shape.batch, int(shape.countPerImage()), 1, 1};
        TwinTensor x = activationInput(shape, random.uniforms(count));
        TwinTensor y = poisonedActivations(flat);
        runOnBoth([&](Backend& backend, Side side) { backend.flattenForward(shape, x.at(side), y.at(side)); });
        expectIdentical(y, "flattened y");

        TwinTensor dy = activationInput(flat, random.uniforms(count));
        TwinTensor dx = poisonedActivations(shape);
        runOnBoth([&](Backend& backend, Side side) { backend.flattenBackward(shape, dy.at(side), dx.at(side)); });
        expectIdentical(dx, "unflattened dx");
    }
}

TEST_P(BackendConformance, FillWritesEveryElement) {
    SeededRandom random;
    for (std::size_t count : {std::size_t(1), std::size_t(17), std::size_t(4099), std::size_t(65537)}) {
        SCOPED_TRACE("count " + std::to_string(count));
        const float value = random.uniform(-5.0f, 5.0f);
        TwinTensor y = poisoned(std::int64_t(count));
        runOnBoth([&](Backend& backend, Side side) { backend.fill(y.at(side), value, count); });
        expectIdentical(y, "filled y");
    }
}

TEST_P(BackendConformance, AxpyAccumulatesScaledInput) {
    SeededRandom random;
    for (const TensorShape& shape : elementwiseShapesToTest()) {
        SCOPED_TRACE(describe(shape));
        const auto count = std::size_t(shape.count());
        const float alpha = random.uniform(-2.0f, 2.0f);
        TwinTensor x = activationInput(shape, random.uniforms(count));
        TwinTensor y = activationInput(shape, random.uniforms(count));
        runOnBoth([&](Backend& backend, Side side) { backend.axpy(alpha, x.at(side), y.at(side), count); });
        expectClose(y, "y += alpha x");
    }
}

TEST_P(BackendConformance, AddAndMultiplyCombineElementwise) {
    SeededRandom random;
    for (const TensorShape& shape : elementwiseShapesToTest()) {
        SCOPED_TRACE(describe(shape));
        const auto count = std::size_t(shape.count());
        TwinTensor a = activationInput(shape, random.uniforms(count));
        TwinTensor b = activationInput(shape, random.uniforms(count));
        TwinTensor sum = poisonedActivations(shape);
        TwinTensor product = poisonedActivations(shape);
        runOnBoth([&](Backend& backend, Side side) {
            backend.add(a.at(side), b.at(side), sum.at(side), count);
            backend.multiply(a.at(side), b.at(side), product.at(side), count);
        });
        expectClose(sum, "a + b");
        expectClose(product, "a * b");
    }
}

TEST_P(BackendConformance, ScaleMultipliesInPlace) {
    SeededRandom random;
    for (std::size_t count : {std::size_t(1), std::size_t(1001), std::size_t(65537)}) {
        SCOPED_TRACE("count " + std::to_string(count));
        const float alpha = random.uniform(-3.0f, 3.0f);
        TwinTensor y = input(random.uniforms(count));
        runOnBoth([&](Backend& backend, Side side) { backend.scale(y.at(side), alpha, count); });
        expectClose(y, "y *= alpha");
    }
}

// ---- convolution ---------------------------------------------------------------------------

TEST_P(BackendConformance, ConvForwardMatchesReference) {
    SeededRandom random;
    for (const ConvGeometry& g : convGeometriesToTest()) {
        for (bool withBias : {true, false}) {
            SCOPED_TRACE(describe(g) + (withBias ? " with bias" : " without bias"));
            TwinTensor x = activationInput(convInputShape(g), random.uniforms(std::size_t(g.inputCount())));
            TwinTensor w = input(random.uniforms(std::size_t(g.weightCount())));
            TwinTensor bias = input(random.uniforms(std::size_t(g.outChannels)));
            TwinTensor y = poisonedActivations(convOutputShape(g));
            runOnBoth([&](Backend& backend, Side side) {
                backend.convForward(g, x.at(side), w.at(side), withBias ? bias.at(side) : nullptr, y.at(side));
            });
            expectClose(y, "y");
        }
    }
}

TEST_P(BackendConformance, ConvBackwardDataMatchesReference) {
    SeededRandom random;
    for (const ConvGeometry& g : convGeometriesToTest()) {
        SCOPED_TRACE(describe(g));
        TwinTensor dy = activationInput(convOutputShape(g), random.uniforms(std::size_t(g.outputCount())));
        TwinTensor w = input(random.uniforms(std::size_t(g.weightCount())));
        TwinTensor dx = poisonedActivations(convInputShape(g));
        runOnBoth([&](Backend& backend, Side side) {
            backend.convBackwardData(g, dy.at(side), w.at(side), dx.at(side));
        });
        expectClose(dx, "dx");
    }
}

TEST_P(BackendConformance, ConvBackwardFilterMatchesReference) {
    SeededRandom random;
    for (const ConvGeometry& g : convGeometriesToTest()) {
        for (bool withBias : {true, false}) {
            SCOPED_TRACE(describe(g) + (withBias ? " with dbias" : " without dbias"));
            TwinTensor x = activationInput(convInputShape(g), random.uniforms(std::size_t(g.inputCount())));
            TwinTensor dy = activationInput(convOutputShape(g), random.uniforms(std::size_t(g.outputCount())));
            TwinTensor dw = poisoned(g.weightCount());
            TwinTensor dbias = poisoned(g.outChannels);
            runOnBoth([&](Backend& backend, Side side) {
                backend.convBackwardFilter(g, x.at(side), dy.at(side), dw.at(side),
                                           withBias ? dbias.at(side) : nullptr);
            });
            expectClose(dw, "dw");
            if (withBias) expectClose(dbias, "dbias");
        }
    }
}

// Inside a weight-gradient overlap (the network's backward pass) a backend may compute dw and
// dbias beside the ops called after them; once awaitWeightGradients() returns, a later op sees
// them whole and may overwrite the x and dy they were computed from.
TEST_P(BackendConformance, ConvBackwardFilterInAnOverlapIsWholeAfterTheAwait) {
    SeededRandom random;
    std::vector<ConvGeometry> geometries = convGeometriesToTest();
    geometries.push_back(convGeometry(16, 64, 24, 24, 128, 3, 3, 1, 1, 1, 1, 1));  // fer-cnn's conv2_1
    for (const ConvGeometry& g : geometries) {
        SCOPED_TRACE(describe(g));
        TwinTensor x = activationInput(convInputShape(g), random.uniforms(std::size_t(g.inputCount())));
        TwinTensor dy = activationInput(convOutputShape(g), random.uniforms(std::size_t(g.outputCount())));
        TwinTensor dw = poisoned(g.weightCount()), dwSeen = poisoned(g.weightCount());
        TwinTensor dbias = poisoned(g.outChannels), dbiasSeen = poisoned(g.outChannels);
        runOnBoth([&](Backend& backend, Side side) {
            WeightGradientOverlap overlap(backend);
            backend.convBackwardFilter(g, x.at(side), dy.at(side), dw.at(side), dbias.at(side));
            backend.awaitWeightGradients();
            backend.copy(dwSeen.at(side), dw.at(side), std::size_t(g.weightCount()) * sizeof(float));
            backend.copy(dbiasSeen.at(side), dbias.at(side), std::size_t(g.outChannels) * sizeof(float));
            backend.fill(x.at(side), 0.0f, std::size_t(g.inputCount()));
            backend.fill(dy.at(side), 0.0f, std::size_t(g.outputCount()));
        });
        expectClose(dw, "dw");
        expectClose(dbias, "dbias");
        EXPECT_TRUE(identical(dwSeen.tested.toHost(), dw.tested.toHost(),
                              "dw as the copy after the await read it"));
        EXPECT_TRUE(identical(dbiasSeen.tested.toHost(), dbias.tested.toHost(),
                              "dbias as the copy after the await read it"));
    }
}

// Inside a hold of the weights (the training step's forward and backward passes) a backend may
// read again in backward data the copy of w it staged for the forward pass. The copy belongs to
// its hold: once the hold has ended and w has changed, backward data in the next hold reads the
// new w, with no forward pass before it to stage it.
TEST_P(BackendConformance, ConvWeightsHeldFromForwardToBackwardAndNoLonger) {
    SeededRandom random;
    for (const ConvGeometry& g : convGeometriesToTest()) {
        SCOPED_TRACE(describe(g));
        const auto weights = std::size_t(g.weightCount());
        const std::vector<float> changed = random.uniforms(weights);
        TwinTensor x = activationInput(convInputShape(g), random.uniforms(std::size_t(g.inputCount())));
        TwinTensor dy = activationInput(convOutputShape(g), random.uniforms(std::size_t(g.outputCount())));
        TwinTensor w = input(random.uniforms(weights));
        TwinTensor y = poisonedActivations(convOutputShape(g));
        TwinTensor dx = poisonedActivations(convInputShape(g));
        TwinTensor dxAfterTheChange = poisonedActivations(convInputShape(g));
        runWithWeightsHeld(
            w, changed, dx, dxAfterTheChange,
            [&](Backend& backend, Side side) {
                backend.convForward(g, x.at(side), w.at(side), nullptr, y.at(side));
            },
            [&](Backend& backend, Side side, float* gradient) {
                backend.convBackwardData(g, dy.at(side), w.at(side), gradient);
            });
        expectClose(y, "y");
        expectClose(dx, "dx in the forward pass's hold");
        expectClose(dxAfterTheChange, "dx in a later hold, after w changed");
    }
}

TEST_P(BackendConformance, ConvBatchNormReluInferenceMatchesTheThreeOps) {
    SeededRandom random;
    for (const ConvGeometry& g : convGeometriesToTest()) {
        for (bool withBias : {true, false}) {
            SCOPED_TRACE(describe(g) + (withBias ? " with bias" : " without bias"));
            BatchNormGeometry bn;
            bn.batch = g.batch, bn.channels = g.outChannels, bn.spatial = g.outHeight * g.outWidth;
            const auto channels = std::size_t(g.outChannels);
            TwinTensor x = activationInput(convInputShape(g), random.uniforms(std::size_t(g.inputCount())));
            TwinTensor w = input(random.uniforms(std::size_t(g.weightCount())));
            TwinTensor bias = input(random.uniforms(channels));
            auto [gamma, beta, runningMean, runningVar] = batchNormParameters(random, channels);
            TwinTensor y = poisonedActivations(convOutputShape(g));
            runOnBoth([&](Backend& backend, Side side) {
                backend.convBatchNormReluInference(g, x.at(side), w.at(side),
                                                   withBias ? bias.at(side) : nullptr, bn,
                                                   gamma.at(side), beta.at(side),
                                                   runningMean.at(side), runningVar.at(side),
                                                   y.at(side));
            });
            // The error of a bf16 convolution with the batch norm folded in is relative to the
            // values before the ReLU, whose cut can leave a few small outputs (3 channels of one
            // pixel, say): y is measured on their scale.
            Tensor z = test::poisonedActivations(*reference_, convOutputShape(g));
            reference_->convForward(g, x.reference.data(), w.reference.data(),
                                    withBias ? bias.reference.data() : nullptr, z.data());
            reference_->batchNormForwardInference(bn, z.data(), gamma.reference.data(),
                                                  beta.reference.data(), runningMean.reference.data(),
                                                  runningVar.reference.data(), z.data());
            expectClose(y, "relu(batchNorm(conv(x)))", rootMeanSquare(z.toHost()));
        }
    }
}

// ---- pooling -------------------------------------------------------------------------------

TEST_P(BackendConformance, PoolForwardAndBackwardMatchReference) {
    SeededRandom random;
    for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
        for (const PoolGeometry& g : poolGeometriesToTest(kind)) {
            SCOPED_TRACE(describe(g));
            TwinTensor x = activationInput(poolInputShape(g), random.uniforms(std::size_t(g.inputCount())));
            TwinTensor y = poisonedActivations(poolOutputShape(g));
            runOnBoth([&](Backend& backend, Side side) { backend.poolForward(g, x.at(side), y.at(side)); });
            expectClose(y, "y");

            TwinTensor dy = activationInput(poolOutputShape(g), random.uniforms(std::size_t(g.outputCount())));
            TwinTensor dx = poisonedActivations(poolInputShape(g));
            runOnBoth([&](Backend& backend, Side side) {
                backend.poolBackward(g, x.at(side), y.at(side), dy.at(side), dx.at(side));
            });
            expectClose(dx, "dx");
        }
    }
}

// Inputs drawn from {0, 1, 2} tie in most windows; the gradient must go to the first maximum
// in row-major order, as PyTorch's argmax does.
TEST_P(BackendConformance, MaxPoolBackwardSendsTiesToTheFirstMaximum) {
    SeededRandom random;
    for (const PoolGeometry& g : poolGeometriesToTest(PoolKind::Max)) {
        SCOPED_TRACE(describe(g));
        std::vector<float> values(std::size_t(g.inputCount()));
        for (float& value : values) value = float(random.integer(0, 2));
        TwinTensor x = activationInput(poolInputShape(g), values);
        TwinTensor y = poisonedActivations(poolOutputShape(g));
        TwinTensor dy = activationInput(poolOutputShape(g), random.uniforms(std::size_t(g.outputCount())));
        TwinTensor dx = poisonedActivations(poolInputShape(g));
        runOnBoth([&](Backend& backend, Side side) {
            backend.poolForward(g, x.at(side), y.at(side));
            backend.poolBackward(g, x.at(side), y.at(side), dy.at(side), dx.at(side));
        });
        expectIdentical(y, "y");
        expectClose(dx, "dx");
    }
}

// ---- batch normalisation ---------------------------------------------------------------------

std::vector<BatchNormGeometry> batchNormGeometriesToTest() {
    return {
        {4, 3, 25, 1e-5f, 0.1f},    // conv feature maps
        {1, 5, 49, 1e-3f, 0.01f},   // batch 1: statistics over space alone
        {16, 7, 1, 1e-5f, 0.1f},    // after a dense layer
        {2, 2, 3, 1e-5f, 1.0f},     // batch 2; momentum 1 keeps only the batch statistics
        {3, 4, 121, 1e-5f, 0.1f},   // odd spatial size
    };
}

// Inputs with a channel offset far from zero, which a one-pass variance gets wrong.
std::vector<float> batchNormInput(SeededRandom& random, const BatchNormGeometry& g) {
    std::vector<float> x = random.uniforms(std::size_t(g.count()), -2.0f, 2.0f);
    for (int n = 0; n < g.batch; ++n)
        for (int c = 0; c < g.channels; ++c)
            for (int s = 0; s < g.spatial; ++s)
                x[(std::size_t(n) * g.channels + c) * g.spatial + s] += float(c) * 3.0f;
    return x;
}

TEST_P(BackendConformance, BatchNormTrainingForwardMatchesReference) {
    SeededRandom random;
    for (const BatchNormGeometry& g : batchNormGeometriesToTest()) {
        SCOPED_TRACE(describe(g));
        const auto channels = std::size_t(g.channels);
        TwinTensor x = activationInput(batchNormShape(g), batchNormInput(random, g));
        auto [gamma, beta, runningMean, runningVar] = batchNormParameters(random, channels);
        TwinTensor y = poisonedActivations(batchNormShape(g));
        TwinTensor savedMean = poisoned(g.channels);
        TwinTensor savedInvStd = poisoned(g.channels);
        runOnBoth([&](Backend& backend, Side side) {
            backend.batchNormForwardTraining(g, x.at(side), gamma.at(side), beta.at(side), y.at(side),
                                             runningMean.at(side), runningVar.at(side),
                                             savedMean.at(side), savedInvStd.at(side));
        });
        expectClose(y, "y");
        expectClose(runningMean, "running mean");
        expectClose(runningVar, "running variance");
        expectClose(savedMean, "saved mean");
        expectClose(savedInvStd, "saved 1/std");
    }
}

// The fused training pair against cpu-ref's two ops; the inner tensors z and dz are room a
// backend may leave unwritten, so only the chain's outputs are compared. Every geometry that
// can train (batch x spatial > 1) is one the network would fuse.
TEST_P(BackendConformance, BatchNormReluTrainingMatchesTheTwoOps) {
    SeededRandom random;
    for (const BatchNormGeometry& g : batchNormGeometriesToTest()) {
        SCOPED_TRACE(describe(g));
        const auto channels = std::size_t(g.channels);
        const std::size_t count = std::size_t(g.count());
        TwinTensor x = activationInput(batchNormShape(g), batchNormInput(random, g));
        auto [gamma, beta, runningMean, runningVar] = batchNormParameters(random, channels);
        TwinTensor dy = activationInput(batchNormShape(g), random.uniforms(count));
        TwinTensor z = poisonedActivations(batchNormShape(g));
        TwinTensor y = poisonedActivations(batchNormShape(g));
        TwinTensor dz = poisonedActivations(batchNormShape(g));
        TwinTensor dx = poisonedActivations(batchNormShape(g));
        TwinTensor savedMean = poisoned(g.channels), savedInvStd = poisoned(g.channels);
        TwinTensor dgamma = poisoned(g.channels), dbeta = poisoned(g.channels);
        runOnBoth([&](Backend& backend, Side side) {
            backend.batchNormReluForwardTraining(g, x.at(side), gamma.at(side), beta.at(side),
                                                 z.at(side), y.at(side), runningMean.at(side),
                                                 runningVar.at(side), savedMean.at(side),
                                                 savedInvStd.at(side));
            backend.batchNormReluBackward(g, x.at(side), y.at(side), dy.at(side), gamma.at(side),
                                          beta.at(side), savedMean.at(side),
                                          savedInvStd.at(side), dz.at(side), dx.at(side),
                                          dgamma.at(side), dbeta.at(side));
        });
        expectClose(y, "relu(batchNorm(x))");
        expectClose(runningMean, "running mean");
        expectClose(runningVar, "running variance");
        expectClose(dx, "dx");
        expectClose(dgamma, "dgamma");
        expectClose(dbeta, "dbeta");
    }
}

// The pooled chain against cpu-ref's ops, on every max pooling geometry (the backends run 2x2
// windows of stride 2 tiling the image in one pass, the rest through the default). As for the
// pair above only the chain's outputs are compared. x lies on a lattice of step 1/4 (exact in
// bf16) with a per-channel offset: equal inputs tie exactly on both sides and distinct ones stay
// distinct after the ReLU's output is rounded to bf16, so both sides route dy to the same place.
TEST_P(BackendConformance, BatchNormReluMaxPoolTrainingMatchesTheOps) {
    SeededRandom random;
    for (const PoolGeometry& pool : poolGeometriesToTest(PoolKind::Max)) {
        SCOPED_TRACE(describe(pool));
        const BatchNormGeometry g{pool.batch, pool.channels, pool.inHeight * pool.inWidth, 1e-5f,
                                  0.1f};
        const auto channels = std::size_t(g.channels);
        std::vector<float> xValues(std::size_t(g.count()));
        for (std::size_t i = 0; i < xValues.size(); ++i)
            xValues[i] = 0.25f * float(random.integer(-8, 8)) +
                         3.0f * float((i / std::size_t(g.spatial)) % channels);
        TwinTensor x = activationInput(poolInputShape(pool), xValues);
        auto [gamma, beta, runningMean, runningVar] = batchNormParameters(random, channels);
        TwinTensor dy = activationInput(poolOutputShape(pool),
                                        random.uniforms(std::size_t(pool.outputCount())));
        TwinTensor z = poisonedActivations(poolInputShape(pool));
        TwinTensor r = poisonedActivations(poolInputShape(pool));
        TwinTensor y = poisonedActivations(poolOutputShape(pool));
        TwinTensor dr = poisonedActivations(poolInputShape(pool));
        TwinTensor dz = poisonedActivations(poolInputShape(pool));
        TwinTensor dx = poisonedActivations(poolInputShape(pool));
        TwinTensor savedMean = poisoned(g.channels), savedInvStd = poisoned(g.channels);
        TwinTensor dgamma = poisoned(g.channels), dbeta = poisoned(g.channels);
        runOnBoth([&](Backend& backend, Side side) {
            backend.batchNormReluMaxPoolForwardTraining(
                g, pool, x.at(side), gamma.at(side), beta.at(side), z.at(side), r.at(side),
                y.at(side), runningMean.at(side), runningVar.at(side), savedMean.at(side),
                savedInvStd.at(side));
            backend.batchNormReluMaxPoolBackward(
                g, pool, x.at(side), r.at(side), y.at(side), dy.at(side), gamma.at(side),
                beta.at(side), savedMean.at(side), savedInvStd.at(side), dr.at(side), dz.at(side),
                dx.at(side), dgamma.at(side), dbeta.at(side));
        });
        expectClose(y, "maxPool(relu(batchNorm(x)))");
        expectClose(runningMean, "running mean");
        expectClose(runningVar, "running variance");
        expectClose(savedMean, "saved mean");
        expectClose(savedInvStd, "saved 1/std");
        expectClose(dx, "dx");
        // dgamma and dbeta sum over the windows: the terms (dy uniform in [-1, 1], times xhat for
        // dgamma) may nearly cancel, and where windows overlap the pooling's gradient dr is the
        // sum of several dy stored as activations (bf16), so errors are measured on their scale.
        const double sumScale = std::sqrt(double(pool.outputCount() / pool.channels) / 3.0);
        expectClose(dgamma, "dgamma", sumScale);
        expectClose(dbeta, "dbeta", sumScale);
    }
}

// The input block (Conv2D -> BatchNorm -> ReLU in training, the convolution reading the
// network's input) against cpu-ref's ops, on every convolution geometry whose output holds more
// than one value per channel: cuda and cudnn in bf16 take fewer than 8 input channels through
// the patches' moments, the rest through the default. Only the chain's outputs are compared; c,
// z and their gradients are room a backend may leave unwritten. Values of z near zero may fall on
// either side of the ReLU in another precision or summation order, and each that does moves a
// gradient sum by a whole dy; so both backward passes are given the tested side's y, whose
// positive values are where the ReLU lets dy through, and differentiate the same function.
TEST_P(BackendConformance, ConvBatchNormReluTrainingMatchesTheOps) {
    SeededRandom random;
    std::vector<ConvGeometry> geometries = convGeometriesToTest();
    geometries.push_back(convGeometry(3, 1, 7, 9, 8, 3, 3, 2, 2, 1, 1, 1));   // grey, stride 2
    geometries.push_back(convGeometry(2, 2, 6, 6, 16, 2, 2, 1, 1, 0, 0, 1));  // 8 taps, no padding
    // grey, c (2x2x2x8 values) smaller than the patch moments the GPU forward keeps in its room
    geometries.push_back(convGeometry(2, 1, 2, 2, 8, 3, 3, 1, 1, 1, 1, 1));
    for (const ConvGeometry& g : geometries) {
        const int pixels = g.batch * g.outHeight * g.outWidth;
        if (pixels < 2) continue;  // a batch norm over one value has no variance to train with
        for (bool withBias : {true, false}) {
            SCOPED_TRACE(describe(g) + (withBias ? " with bias" : " without bias"));
            const BatchNormGeometry bn{g.batch, g.outChannels, g.outHeight * g.outWidth, 1e-5f, 0.1f};
            const auto channels = std::size_t(g.outChannels);
            // x with an offset, which moments taken about zero would have to survive.
            TwinTensor x = activationInput(convInputShape(g),
                                           random.uniforms(std::size_t(g.inputCount()), 1.0f, 3.0f));
            TwinTensor w = input(random.uniforms(std::size_t(g.weightCount())));
            TwinTensor bias = input(random.uniforms(channels));
            auto [gamma, beta, runningMean, runningVar] = batchNormParameters(random, channels);
            TwinTensor dy = activationInput(convOutputShape(g),
                                            random.uniforms(std::size_t(g.outputCount())));
            TwinTensor c = poisonedActivations(convOutputShape(g));
            TwinTensor z = poisonedActivations(convOutputShape(g));
            TwinTensor y = poisonedActivations(convOutputShape(g));
            TwinTensor dz = poisonedActivations(convOutputShape(g));
            TwinTensor dc = poisonedActivations(convOutputShape(g));
            TwinTensor savedMean = poisoned(g.outChannels), savedInvStd = poisoned(g.outChannels);
            TwinTensor dw = poisoned(g.weightCount()), dbias = poisoned(g.outChannels);
            TwinTensor dgamma = poisoned(g.outChannels), dbeta = poisoned(g.outChannels);
            runOnBoth([&](Backend& backend, Side side) {
                backend.convBatchNormReluForwardTraining(
                    g, x.at(side), w.at(side), withBias ? bias.at(side) : nullptr, bn,
                    gamma.at(side), beta.at(side), c.at(side), z.at(side), y.at(side),
                    runningMean.at(side), runningVar.at(side), savedMean.at(side),
                    savedInvStd.at(side));
            });
            TwinTensor testedY = activationInput(convOutputShape(g), y.tested.toHost());
            runOnBoth([&](Backend& backend, Side side) {
                backend.convBatchNormReluBackward(
                    g, x.at(side), w.at(side), withBias ? bias.at(side) : nullptr, bn, c.at(side),
                    testedY.at(side), dy.at(side), gamma.at(side), beta.at(side),
                    savedMean.at(side), savedInvStd.at(side), dz.at(side), dc.at(side),
                    dw.at(side), withBias ? dbias.at(side) : nullptr, dgamma.at(side),
                    dbeta.at(side));
            });
            expectClose(y, "relu(batchNorm(conv(x)))");
            expectClose(runningMean, "running mean");
            expectClose(runningVar, "running variance");
            expectClose(savedMean, "saved mean");
            expectClose(savedInvStd, "saved 1/std");
            // Sums over the output pixels of terms about dy's size (uniform in [-1, 1]), which
            // the batch norm's gradient nearly cancels (dbias to zero): measured on that scale.
            // dw's terms are dc times x, whose rms (x uniform in [1, 3]) is sqrt(13 / 3).
            const double sumScale = std::sqrt(double(pixels) / 3.0);
            // The tested side stores c as activations: its rounding, a unit roundoff u of
            // |c| ~ |mean|, is kappa = max |mean| / std times larger against c's spread, and
            // the normalised c, dc and the sums over them inherit it. The sums are measured on
            // their scale times max(1, kappa u / tolerance): a 1x1 grouped layer with kappa 10
            // missed 2% by 0.05% on cudnn bf16 (seed 10276847059161050820), and on cuda bf16
            // by 0.2% (docs/logs/2026-12-04-closing/tests).
            const std::vector<float> mean = savedMean.reference.toHost();
            const std::vector<float> invStd = savedInvStd.reference.toHost();
            double kappa = 0.0;
            for (std::size_t channel = 0; channel < channels; ++channel)
                kappa = std::max(kappa, double(std::abs(mean[channel]) * invStd[channel]));
            const double conditioning = std::max(
                1.0, kappa * activationRoundoff(tested_->precision()) / tolerance_);
            expectClose(dw, "dw", sumScale * std::sqrt(13.0 / 3.0) * conditioning);
            if (withBias) expectClose(dbias, "dbias", sumScale * conditioning);
            expectClose(dgamma, "dgamma", sumScale * conditioning);
            expectClose(dbeta, "dbeta", sumScale);
        }
    }
}

TEST_P(BackendConformance, BatchNormInferenceForwardMatchesReference) {
    SeededRandom random;
    for (const BatchNormGeometry& g : batchNormGeometriesToTest()) {
        SCOPED_TRACE(describe(g));
        const auto channels = std::size_t(g.channels);
        TwinTensor x = activationInput(batchNormShape(g), batchNormInput(random, g));
        auto [gamma, beta, runningMean, runningVar] = batchNormParameters(random, channels);
        TwinTensor y = poisonedActivations(batchNormShape(g));
        runOnBoth([&](Backend& backend, Side side) {
            backend.batchNormForwardInference(g, x.at(side), gamma.at(side), beta.at(side),
                                              runningMean.at(side), runningVar.at(side), y.at(side));
        });
        expectClose(y, "y");
    }
}

TEST_P(BackendConformance, BatchNormBackwardMatchesReference) {
    SeededRandom random;
    for (const BatchNormGeometry& g : batchNormGeometriesToTest()) {
        SCOPED_TRACE(describe(g));
        const auto channels = std::size_t(g.channels);
        // As the tested backend stores x, so that both sides normalise the same values.
        const std::vector<float> xValues =
            asStoredActivations(*tested_, batchNormShape(g), batchNormInput(random, g));
        const std::vector<float> gammaValues = random.uniforms(channels, 0.5f, 1.5f);

        // The saved statistics come from the reference forward, so both sides differentiate
        // the same normalisation.
        Tensor x = activationsFromHost(*reference_, batchNormShape(g), xValues);
        Tensor gamma = tensorFromHost(*reference_, gammaValues);
        Tensor beta = tensorFromHost(*reference_, random.uniforms(channels));
        Tensor runningMean = tensorFromHost(*reference_, random.uniforms(channels));
        Tensor runningVar = tensorFromHost(*reference_, random.uniforms(channels, 0.5f, 2.0f));
        Tensor y = test::poisonedActivations(*reference_, batchNormShape(g));
        Tensor mean = poisonedTensor(*reference_, g.channels);
        Tensor invStd = poisonedTensor(*reference_, g.channels);
        reference_->batchNormForwardTraining(g, x.data(), gamma.data(), beta.data(), y.data(),
                                             runningMean.data(), runningVar.data(), mean.data(),
                                             invStd.data());

        TwinTensor twinX = activationInput(batchNormShape(g), xValues);
        TwinTensor twinGamma = input(gammaValues);
        TwinTensor savedMean = input(mean.toHost());
        TwinTensor savedInvStd = input(invStd.toHost());
        TwinTensor dy = activationInput(batchNormShape(g), random.uniforms(std::size_t(g.count())));
        TwinTensor dx = poisonedActivations(batchNormShape(g));
        TwinTensor dgamma = poisoned(g.channels);
        TwinTensor dbeta = poisoned(g.channels);
        runOnBoth([&](Backend& backend, Side side) {
            backend.batchNormBackward(g, twinX.at(side), dy.at(side), twinGamma.at(side),
                                      savedMean.at(side), savedInvStd.at(side), dx.at(side),
                                      dgamma.at(side), dbeta.at(side));
        });
        expectClose(dx, "dx");
        expectClose(dgamma, "dgamma");
        expectClose(dbeta, "dbeta");
    }
}

// ---- activations ---------------------------------------------------------------------------

TEST_P(BackendConformance, ActivationsMatchReferenceForwardAndBackward) {
    SeededRandom random;
    const std::pair<Activation, float> activations[] = {
        {Activation::Relu, 0.0f},      {Activation::LeakyRelu, 0.01f}, {Activation::LeakyRelu, 0.2f},
        {Activation::Elu, 1.0f},       {Activation::Elu, 0.5f},        {Activation::Silu, 0.0f},
    };
    for (auto [kind, alpha] : activations) {
        for (const TensorShape& shape : elementwiseShapesToTest()) {
            SCOPED_TRACE(describe(kind, alpha) + ", " + describe(shape));
            const auto count = std::size_t(shape.count());
            // Every tenth input exactly zero pins the derivative at the kink (the left one).
            std::vector<float> values = random.uniforms(count, -4.0f, 4.0f);
            for (std::size_t i = 0; i < count; i += 10) values[i] = 0.0f;
            TwinTensor x = activationInput(shape, values);
            TwinTensor y = poisonedActivations(shape);
            TwinTensor dy = activationInput(shape, random.uniforms(count));
            TwinTensor dx = poisonedActivations(shape);
            runOnBoth([&](Backend& backend, Side side) {
                backend.activationForward(kind, alpha, x.at(side), y.at(side), count);
                backend.activationBackward(kind, alpha, x.at(side), y.at(side), dy.at(side), dx.at(side), count);
            });
            expectClose(y, "y");
            expectClose(dx, "dx");
        }
    }
}

// ---- dropout -------------------------------------------------------------------------------

TEST_P(BackendConformance, DropoutMaskIsIdenticalOnEveryBackend) {
    SeededRandom random;
    for (float probability : {0.0f, 0.1f, 0.5f, 0.9f, 1.0f}) {
        for (std::uint32_t stepIndex : {0u, 7u, 123456u}) {
            for (std::size_t count : {std::size_t(1), std::size_t(1000), std::size_t(100003)}) {
                const std::uint64_t seed = random.engine()();
                SCOPED_TRACE("probability " + std::to_string(probability) + ", step " +
                             std::to_string(stepIndex) + ", count " + std::to_string(count) +
                             ", mask seed " + std::to_string(seed));
                StepScalars scalars;
                scalars.step = stepIndex;
                auto step = buffer(scalars);
                // (1, count, 1, 1): the keep decision follows the element's place in memory,
                // which is the same in every layout only for this shape.
                TwinTensor mask = poisonedActivations({1, int(count), 1, 1});
                runOnBoth([&](Backend& backend, Side side) {
                    backend.dropoutMask(probability, seed, step.at(side), mask.at(side), count);
                });
                expectIdentical(mask, "mask");
            }
        }
    }
}

// ---- dense ---------------------------------------------------------------------------------

std::vector<DenseGeometry> denseGeometriesToTest() {
    return {{1, 7, 3}, {8, 64, 10}, {5, 300, 17}, {32, 1152, 7}, {3, 1, 1}, {16, 256, 24}};
}

TEST_P(BackendConformance, DenseForwardAndBackwardMatchReference) {
    SeededRandom random;
    for (const DenseGeometry& g : denseGeometriesToTest()) {
        for (bool withBias : {true, false}) {
            SCOPED_TRACE(describe(g) + (withBias ? " with bias" : " without bias"));
            const std::size_t inputs = std::size_t(g.batch) * g.inFeatures;
            const std::size_t outputs = std::size_t(g.batch) * g.outFeatures;
            const std::size_t weights = std::size_t(g.outFeatures) * g.inFeatures;
            TwinTensor x = activationInput(denseInputShape(g), random.uniforms(inputs));
            TwinTensor w = input(random.uniforms(weights));
            TwinTensor bias = input(random.uniforms(std::size_t(g.outFeatures)));
            TwinTensor dy = activationInput(denseOutputShape(g), random.uniforms(outputs));
            TwinTensor y = poisonedActivations(denseOutputShape(g));
            TwinTensor dx = poisonedActivations(denseInputShape(g));
            TwinTensor dw = poisoned(std::int64_t(weights));
            TwinTensor dbias = poisoned(g.outFeatures);
            runOnBoth([&](Backend& backend, Side side) {
                backend.denseForward(g, x.at(side), w.at(side), withBias ? bias.at(side) : nullptr, y.at(side));
                backend.denseBackwardData(g, dy.at(side), w.at(side), dx.at(side));
                backend.denseBackwardWeights(g, x.at(side), dy.at(side), dw.at(side),
                                             withBias ? dbias.at(side) : nullptr);
            });
            expectClose(y, "y");
            expectClose(dx, "dx");
            // dw and dbias sum over the batch: with a few samples the terms (uniform in [-1, 1],
            // products of rms 1/3) may nearly cancel, so errors are measured on their scale.
            const double sumScale = std::sqrt(double(g.batch)) / 3.0;
            expectClose(dw, "dw", sumScale);
            if (withBias) expectClose(dbias, "dbias", std::sqrt(double(g.batch) / 3.0));
        }
    }
}

// Dense weight gradients in an overlap, as the convolution's above, with backward data called
// between them and the await: a backend that runs dw beside it runs two GEMMs at once (the cudnn
// backend on two cuBLAS handles, each with its own workspace).
TEST_P(BackendConformance, DenseBackwardWeightsInAnOverlapIsWholeAfterTheAwait) {
    SeededRandom random;
    std::vector<DenseGeometry> geometries = denseGeometriesToTest();
    geometries.push_back({32, 9216, 256});  // fer-cnn's fc1 at batch 32
    for (const DenseGeometry& g : geometries) {
        SCOPED_TRACE(describe(g));
        const std::size_t inputs = std::size_t(g.batch) * g.inFeatures;
        const std::size_t outputs = std::size_t(g.batch) * g.outFeatures;
        const std::int64_t weights = std::int64_t(g.outFeatures) * g.inFeatures;
        TwinTensor x = activationInput(denseInputShape(g), random.uniforms(inputs));
        TwinTensor dy = activationInput(denseOutputShape(g), random.uniforms(outputs));
        TwinTensor w = input(random.uniforms(std::size_t(weights)));
        TwinTensor dx = poisonedActivations(denseInputShape(g));
        TwinTensor dw = poisoned(weights), dwSeen = poisoned(weights);
        TwinTensor dbias = poisoned(g.outFeatures), dbiasSeen = poisoned(g.outFeatures);
        runOnBoth([&](Backend& backend, Side side) {
            WeightGradientOverlap overlap(backend);
            backend.denseBackwardWeights(g, x.at(side), dy.at(side), dw.at(side), dbias.at(side));
            backend.denseBackwardData(g, dy.at(side), w.at(side), dx.at(side));
            backend.awaitWeightGradients();
            backend.copy(dwSeen.at(side), dw.at(side), std::size_t(weights) * sizeof(float));
            backend.copy(dbiasSeen.at(side), dbias.at(side), std::size_t(g.outFeatures) * sizeof(float));
            backend.fill(x.at(side), 0.0f, inputs);
            backend.fill(dy.at(side), 0.0f, outputs);
        });
        expectClose(dx, "dx");
        const double sumScale = std::sqrt(double(g.batch)) / 3.0;  // as in the test above
        expectClose(dw, "dw", sumScale);
        expectClose(dbias, "dbias", std::sqrt(double(g.batch) / 3.0));
        EXPECT_TRUE(identical(dwSeen.tested.toHost(), dw.tested.toHost(),
                              "dw as the copy after the await read it"));
        EXPECT_TRUE(identical(dbiasSeen.tested.toHost(), dbias.tested.toHost(),
                              "dbias as the copy after the await read it"));
    }
}

// The dense layer's weights in a hold, as the convolution's above.
TEST_P(BackendConformance, DenseWeightsHeldFromForwardToBackwardAndNoLonger) {
    SeededRandom random;
    for (const DenseGeometry& g : denseGeometriesToTest()) {
        SCOPED_TRACE(describe(g));
        const std::size_t weights = std::size_t(g.outFeatures) * g.inFeatures;
        const std::vector<float> changed = random.uniforms(weights);
        TwinTensor x = activationInput(denseInputShape(g),
                                       random.uniforms(std::size_t(g.batch) * g.inFeatures));
        TwinTensor dy = activationInput(denseOutputShape(g),
                                        random.uniforms(std::size_t(g.batch) * g.outFeatures));
        TwinTensor w = input(random.uniforms(weights));
        TwinTensor y = poisonedActivations(denseOutputShape(g));
        TwinTensor dx = poisonedActivations(denseInputShape(g));
        TwinTensor dxAfterTheChange = poisonedActivations(denseInputShape(g));
        runWithWeightsHeld(
            w, changed, dx, dxAfterTheChange,
            [&](Backend& backend, Side side) {
                backend.denseForward(g, x.at(side), w.at(side), nullptr, y.at(side));
            },
            [&](Backend& backend, Side side, float* gradient) {
                backend.denseBackwardData(g, dy.at(side), w.at(side), gradient);
            });
        expectClose(y, "y");
        expectClose(dx, "dx in the forward pass's hold");
        expectClose(dxAfterTheChange, "dx in a later hold, after w changed");
    }
}

// ---- concat --------------------------------------------------------------------------------

TEST_P(BackendConformance, CopyChannelsMovesOnlyTheChosenChannels) {
    SeededRandom random;
    struct Case {
        int batch, spatial, channels, srcChannels, srcOffset, dstChannels, dstOffset;
    };
    const Case cases[] = {
        {2, 12, 3, 5, 1, 7, 4},   // a middle slice into the end
        {1, 1, 1, 1, 0, 3, 0},    // one value
        {3, 49, 4, 4, 0, 10, 6},  // a whole tensor into a concat output
        {4, 25, 8, 16, 8, 8, 0},  // the second half back out (concat backward)
    };
    for (const Case& c : cases) {
        SCOPED_TRACE("copy " + std::to_string(c.channels) + " channels of (" + std::to_string(c.batch) +
                     "," + std::to_string(c.srcChannels) + "," + std::to_string(c.spatial) + ") at " +
                     std::to_string(c.srcOffset) + " into " + std::to_string(c.dstChannels) +
                     " channels at " + std::to_string(c.dstOffset));
        const TensorShape srcShape{c.batch, c.srcChannels, c.spatial, 1};
        const TensorShape dstShape{c.batch, c.dstChannels, c.spatial, 1};
        TwinTensor src = activationInput(srcShape, random.uniforms(std::size_t(srcShape.count())));
        // The destination starts random, not NaN: channels outside the range must keep it.
        TwinTensor dst = activationInput(dstShape, random.uniforms(std::size_t(dstShape.count())));
        runOnBoth([&](Backend& backend, Side side) {
            backend.copyChannels(c.batch, c.spatial, c.channels, src.at(side), c.srcChannels,
                                 c.srcOffset, dst.at(side), c.dstChannels, c.dstOffset);
        });
        expectIdentical(dst, "dst");
    }
}

// ---- loss ----------------------------------------------------------------------------------

TEST_P(BackendConformance, SoftmaxCrossEntropyMatchesReference) {
    SeededRandom random;
    struct Case {
        int batch, classes;
        float smoothing;
        bool weighted;
        float logitRange;
    };
    const Case cases[] = {
        {1, 7, 0.0f, false, 3.0f},  {16, 7, 0.0f, true, 3.0f},  {16, 7, 0.1f, true, 3.0f},
        {5, 10, 0.2f, false, 3.0f}, {64, 2, 0.05f, true, 3.0f}, {8, 100, 0.0f, false, 40.0f},
        // more samples than the cuda kernel's lane groups take in one pass (128 of 7 classes,
        // 256 of 3), with a ragged last pass; 33 classes: a warp per sample, two lanes' worth each
        {600, 7, 0.1f, true, 3.0f}, {300, 3, 0.0f, false, 3.0f},  {70, 33, 0.0f, true, 3.0f},
    };
    for (const Case& c : cases) {
        LossGeometry g;
        g.batch = c.batch;
        g.classes = c.classes;
        g.labelSmoothing = c.smoothing;
        SCOPED_TRACE(describe(g) + (c.weighted ? " with class weights" : " without class weights"));
        const std::size_t values = std::size_t(c.batch) * c.classes;
        const TensorShape logitShape{c.batch, c.classes, 1, 1};
        TwinTensor logits = activationInput(logitShape, random.uniforms(values, -c.logitRange, c.logitRange));
        const std::vector<std::int32_t> labelValues = random.labels(std::size_t(c.batch), c.classes);
        auto labels = buffer(std::span<const std::int32_t>(labelValues));
        TwinTensor weights = input(random.uniforms(std::size_t(c.classes), 0.2f, 3.0f));
        TwinTensor probabilities = poisoned(std::int64_t(values));
        TwinTensor loss = poisoned(1);
        TwinTensor dlogits = poisonedActivations(logitShape);
        runOnBoth([&](Backend& backend, Side side) {
            const float* classWeights = c.weighted ? weights.at(side) : nullptr;
            backend.softmaxCrossEntropyForward(g, logits.at(side), labels.at(side),
                                               classWeights, probabilities.at(side), loss.at(side));
            backend.softmaxCrossEntropyBackward(g, probabilities.at(side), labels.at(side),
                                                classWeights, dlogits.at(side));
        });
        expectClose(probabilities, "probabilities");
        expectClose(loss, "loss");
        expectClose(dlogits, "dlogits");
    }
}

// Mixed labels, alone and with distillation's soft targets (three sets) beside them, at
// temperature 1 and 3.
TEST_P(BackendConformance, SoftmaxCrossEntropyWithMixedLabelsAndSoftTargetsMatchesReference) {
    SeededRandom random;
    struct Distillation {
        int sets;
        float weight, temperature;
    };
    for (bool weighted : {false, true}) {
        for (float smoothing : {0.0f, 0.1f}) {
            for (const Distillation distillation : {Distillation{0, 0.0f, 1.0f}, Distillation{3, 0.6f, 1.0f},
                                                    Distillation{3, 0.6f, 3.0f}}) {
                LossGeometry g;
                g.batch = 37;
                g.classes = 7;
                g.labelSmoothing = smoothing;
                g.temperature = distillation.temperature;
                SCOPED_TRACE(describe(g) + (weighted ? " with class weights, " : " without class weights, ") +
                             std::to_string(distillation.sets) + " soft target sets at temperature " +
                             std::to_string(distillation.temperature));
                const std::size_t values = std::size_t(g.batch) * g.classes;
                const TensorShape logitShape{g.batch, g.classes, 1, 1};
                TwinTensor logits = activationInput(logitShape, random.uniforms(values, -3.0f, 3.0f));
                const std::vector<std::int32_t> labelValues = random.labels(std::size_t(g.batch), g.classes);
                const std::vector<std::int32_t> secondValues = random.labels(std::size_t(g.batch), g.classes);
                std::vector<float> shares = random.uniforms(std::size_t(g.batch), 0.0f, 1.0f);
                shares[0] = 1.0f;  // the ends of [0, 1]: one label only
                shares[1] = 0.0f;
                auto labels = buffer(std::span<const std::int32_t>(labelValues));
                auto secondLabels = buffer(std::span<const std::int32_t>(secondValues));
                auto labelWeights = buffer(std::span<const float>(shares));
                TwinTensor teachers = input(random.probabilityRows(3 * g.batch, g.classes));
                TwinTensor weights = input(random.uniforms(std::size_t(g.classes), 0.2f, 3.0f));
                TwinTensor probabilities = poisoned(std::int64_t(values));
                TwinTensor loss = poisoned(1);
                TwinTensor dlogits = poisonedActivations(logitShape);
                runOnBoth([&](Backend& backend, Side side) {
                    const float* classWeights = weighted ? weights.at(side) : nullptr;
                    const LabelMix mix{secondLabels.at(side), labelWeights.at(side)};
                    const SoftTargets soft{distillation.sets ? teachers.at(side) : nullptr, distillation.sets,
                                           distillation.weight};
                    backend.softmaxCrossEntropyForward(g, logits.at(side), labels.at(side), classWeights,
                                                       probabilities.at(side), loss.at(side), mix, soft);
                    backend.softmaxCrossEntropyBackward(g, probabilities.at(side), labels.at(side),
                                                        classWeights, dlogits.at(side), mix, soft);
                });
                expectClose(probabilities, "probabilities");
                expectClose(loss, "loss");
                expectClose(dlogits, "dlogits");
            }
        }
    }
}

// ---- augmentation ----------------------------------------------------------------------------

// Random augmentations of every kind: rotations, zooms and shifts (the sampling taps fall
// anywhere, inside and outside the image), flips, both borders, partners with mixup weights and
// cutmix rectangles, and erasing with both fills, rectangles reaching past the edges included.
std::vector<ImageAugmentation> randomAugmentations(SeededRandom& random, const AugmentGeometry& g) {
    std::vector<ImageAugmentation> augmentations(std::size_t(g.batch));
    for (ImageAugmentation& a : augmentations) {
        const double angle = random.uniform(-3.2f, 3.2f), zoom = random.uniform(0.6f, 1.5f);
        const double mirror = random.integer(0, 1) ? -1.0 : 1.0;
        a.sourceFromOutput[0] = float(mirror * std::cos(angle) / zoom);
        a.sourceFromOutput[1] = float(-std::sin(angle) / zoom);
        a.sourceFromOutput[2] = random.uniform(-0.5f, 1.5f) * float(g.width);
        a.sourceFromOutput[3] = float(mirror * std::sin(angle) / zoom);
        a.sourceFromOutput[4] = float(std::cos(angle) / zoom);
        a.sourceFromOutput[5] = random.uniform(-0.5f, 1.5f) * float(g.height);
        a.border = random.integer(0, 1) ? AugmentBorder::Replicate : AugmentBorder::Constant;
        const int mixing = random.integer(0, 2);  // none, mixup, cutmix
        if (mixing > 0) a.partner = random.integer(0, g.batch - 1);
        if (mixing == 1) a.mixKeep = random.uniform(0.0f, 1.0f);
        if (mixing == 2) {
            a.pasteTop = random.integer(-2, g.height);
            a.pasteLeft = random.integer(-2, g.width);
            a.pasteHeight = random.integer(0, g.height);
            a.pasteWidth = random.integer(0, g.width);
        }
        if (random.integer(0, 1)) {
            a.eraseFill = random.integer(0, 1) ? EraseFill::Noise : EraseFill::Zero;
            a.eraseTop = random.integer(-2, g.height);
            a.eraseLeft = random.integer(-2, g.width);
            a.eraseHeight = random.integer(0, g.height);
            a.eraseWidth = random.integer(0, g.width);
            a.noiseSeed = std::uint32_t(random.engine()());
        }
    }
    return augmentations;
}

TEST_P(BackendConformance, AugmentImagesMatchesReference) {
    SeededRandom random;
    for (const AugmentGeometry& g : {AugmentGeometry{1, 1, 1, 1}, AugmentGeometry{5, 1, 48, 48},
                                     AugmentGeometry{7, 3, 13, 29}, AugmentGeometry{64, 1, 48, 48}}) {
        SCOPED_TRACE("augment (" + std::to_string(g.batch) + "," + std::to_string(g.channels) + "," +
                     std::to_string(g.height) + "," + std::to_string(g.width) + ")");
        const TensorShape shape{g.batch, g.channels, g.height, g.width};
        TwinTensor images = activationInput(shape, random.uniforms(std::size_t(g.count()), -2.0f, 2.0f));
        const std::vector<ImageAugmentation> values = randomAugmentations(random, g);
        auto augmentations = buffer(std::span<const ImageAugmentation>(values));
        runOnBoth([&](Backend& backend, Side side) {
            backend.augmentImages(g, augmentations.at(side), images.at(side));
        });
        expectClose(images, "augmented images");
    }
}

TEST_P(BackendConformance, AugmentImagesWithIdentityLeavesTheImagesBitForBit) {
    SeededRandom random;
    const AugmentGeometry g{6, 3, 11, 17};
    const TensorShape shape{g.batch, g.channels, g.height, g.width};
    TwinTensor images = activationInput(shape, random.uniforms(std::size_t(g.count()), -2.0f, 2.0f));
    const std::vector<float> before = images.tested.toHost();
    const std::vector<ImageAugmentation> identity(std::size_t(g.batch));
    auto augmentations = buffer(std::span<const ImageAugmentation>(identity));
    tested_->augmentImages(g, augmentations.tested.data(), images.tested.data());
    tested_->synchronize();
    EXPECT_TRUE(identical(images.tested.toHost(), before, "images after the identity"));
}

// ---- metrics -------------------------------------------------------------------------------
// Two batches added onto sums that start non-zero (so an implementation that overwrites instead
// of adding fails); confusion counts must be exact, the loss sums within the precision's
// tolerance. Integer logits make ties, which must go to the first largest class.

TEST_P(BackendConformance, AccumulateMetricsMatchesReference) {
    SeededRandom random;
    struct Case {
        int batch, classes;
        bool withBatchLoss, integerLogits;
    };
    const Case cases[] = {
        {1, 7, true, false},  {128, 7, true, false}, {128, 7, false, false},
        {37, 10, false, true}, {300, 3, true, true}, {9, 100, false, false},
    };
    for (const Case& c : cases) {
        MetricsGeometry g;
        g.batch = c.batch;
        g.classes = c.classes;
        SCOPED_TRACE("metrics batch " + std::to_string(c.batch) + " classes " + std::to_string(c.classes) +
                     (c.withBatchLoss ? " with a batch loss" : " with per-sample losses") +
                     (c.integerLogits ? ", tied logits" : ""));
        std::vector<double> start(g.sumCount());
        for (double& value : start) value = double(random.integer(0, 5));
        auto sums = buffer(std::span<const double>(start));
        const TensorShape logitShape{c.batch, c.classes, 1, 1};
        for (int batchIndex = 0; batchIndex < 2; ++batchIndex) {
            std::vector<float> logitValues = random.uniforms(std::size_t(c.batch) * c.classes, -4.0f, 4.0f);
            if (c.integerLogits)
                for (float& value : logitValues) value = float(random.integer(0, 2));
            TwinTensor logits = activationInput(logitShape, logitValues);
            const std::vector<std::int32_t> labelValues = random.labels(std::size_t(c.batch), c.classes);
            auto labels = buffer(std::span<const std::int32_t>(labelValues));
            TwinTensor batchLoss = input(std::vector<float>{random.uniform(0.5f, 2.5f)});
            runOnBoth([&](Backend& backend, Side side) {
                backend.accumulateMetrics(g, logits.at(side), labels.at(side),
                                          c.withBatchLoss ? batchLoss.at(side) : nullptr, sums.at(side));
            });
        }
        std::vector<double> reference(g.sumCount()), tested(g.sumCount());
        reference_->download(reference.data(), sums.reference.data(), sums.reference.bytes());
        tested_->download(tested.data(), sums.tested.data(), sums.tested.bytes());
        for (std::size_t i = MetricsGeometry::kConfusion; i < g.sumCount(); ++i)
            EXPECT_EQ(tested[i], reference[i]) << "confusion count " << i - MetricsGeometry::kConfusion;
        const std::vector<float> losses[2] = {
            {float(tested[0]), float(tested[1]), float(tested[2])},
            {float(reference[0]), float(reference[1]), float(reference[2])}};
        EXPECT_TRUE(closeTo(losses[0], losses[1], tolerance_, "loss sum, largest and latest loss"));
    }
}

TEST_P(BackendConformance, AccumulateMetricsTurnsAnInvalidLabelIntoNaN) {
    MetricsGeometry g;
    g.batch = 3;
    g.classes = 4;
    const TensorShape logitShape{g.batch, g.classes, 1, 1};
    TwinTensor logits = activationInput(logitShape, std::vector<float>{0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3});
    const std::vector<std::int32_t> labelValues{1, 7, 3};  // the second is outside [0, 4)
    auto labels = buffer(std::span<const std::int32_t>(labelValues));
    auto sums = buffer(std::span<const double>(std::vector<double>(g.sumCount(), 0.0)));
    runOnBoth([&](Backend& backend, Side side) {
        backend.accumulateMetrics(g, logits.at(side), labels.at(side), nullptr, sums.at(side));
    });
    for (Side side : {Side::Reference, Side::Tested}) {
        Backend& backend = side == Side::Reference ? *reference_ : *tested_;
        SCOPED_TRACE(backend.name());
        std::vector<double> values(g.sumCount());
        backend.download(values.data(), sums.at(side), values.size() * sizeof(double));
        EXPECT_TRUE(std::isnan(values[MetricsGeometry::kLossSum]));
        EXPECT_TRUE(std::isnan(values[MetricsGeometry::kLargestLoss]));
        EXPECT_TRUE(std::isnan(values[MetricsGeometry::kLatestLoss]));
        double counted = 0;
        for (std::size_t i = MetricsGeometry::kConfusion; i < g.sumCount(); ++i) counted += values[i];
        EXPECT_EQ(counted, 2.0) << "the row with the invalid label must not be counted";
        EXPECT_EQ(values[MetricsGeometry::kConfusion + 1 * 4 + 1], 1.0);  // label 1, predicted 1
        EXPECT_EQ(values[MetricsGeometry::kConfusion + 3 * 4 + 3], 1.0);  // label 3, predicted 3
    }
}

// ---- optimisers ----------------------------------------------------------------------------
// Several steps with fresh gradients and a changing learning rate. Compared each step: the
// parameter update (after - before, each side from its own previous parameters, so a small
// update is not hidden behind the large parameters) and the optimiser state.

TEST_P(BackendConformance, SgdUpdatesMatchReference) {
    SeededRandom random;
    const SgdSettings settings[] = {
        {0.0f, false, 0.0f},   // plain SGD
        {0.9f, false, 0.0f},   // momentum
        {0.9f, true, 0.0f},    // Nesterov
        {0.8f, false, 5e-4f},  // momentum and weight decay
        {0.0f, false, 1e-2f},  // weight decay alone
        {0.9f, true, 5e-4f},   // Nesterov and weight decay
    };
    const std::size_t count = 4099;
    for (const SgdSettings& s : settings) {
        SCOPED_TRACE("SGD momentum " + std::to_string(s.momentum) + (s.nesterov ? " nesterov" : "") +
                     " weight decay " + std::to_string(s.weightDecay));
        TwinTensor params = input(random.uniforms(count));
        TwinTensor velocity = input(std::vector<float>(count, 0.0f));
        std::vector<float> before[2] = {params.reference.toHost(), params.tested.toHost()};
        for (std::uint32_t stepIndex = 0; stepIndex < 4; ++stepIndex) {
            SCOPED_TRACE("step " + std::to_string(stepIndex));
            StepScalars scalars;
            scalars.learningRate = random.uniform(0.01f, 0.2f);
            scalars.step = stepIndex;
            auto step = buffer(scalars);
            TwinTensor grads = input(random.uniforms(count));
            runOnBoth([&](Backend& backend, Side side) {
                backend.sgdUpdate(s, step.at(side), params.at(side), grads.at(side),
                                  velocity.at(side), count);
            });
            std::vector<float> after[2] = {params.reference.toHost(), params.tested.toHost()};
            EXPECT_TRUE(closeTo(difference(after[1], before[1]), difference(after[0], before[0]),
                                tolerance_, "parameter update"));
            if (s.momentum > 0.0f) expectClose(velocity, "velocity");
            before[0] = after[0];
            before[1] = after[1];
        }
    }
}

TEST_P(BackendConformance, AdamAndAdamWUpdatesMatchReference) {
    SeededRandom random;
    const AdamSettings settings[] = {
        {0.9f, 0.999f, 1e-8f, 0.0f, false},   // Adam
        {0.9f, 0.999f, 1e-8f, 1e-2f, false},  // Adam with L2 weight decay
        {0.9f, 0.999f, 1e-8f, 1e-2f, true},   // AdamW
        {0.5f, 0.9f, 1e-6f, 0.1f, true},      // AdamW, short memory
    };
    const std::size_t count = 4099;
    for (const AdamSettings& s : settings) {
        SCOPED_TRACE(std::string(s.decoupledWeightDecay ? "AdamW" : "Adam") + " betas " +
                     std::to_string(s.beta1) + ", " + std::to_string(s.beta2) + " weight decay " +
                     std::to_string(s.weightDecay));
        TwinTensor params = input(random.uniforms(count));
        TwinTensor m = input(std::vector<float>(count, 0.0f));
        TwinTensor v = input(std::vector<float>(count, 0.0f));
        std::vector<float> before[2] = {params.reference.toHost(), params.tested.toHost()};
        for (std::uint32_t stepIndex = 0; stepIndex < 5; ++stepIndex) {
            SCOPED_TRACE("step " + std::to_string(stepIndex));
            StepScalars scalars;
            scalars.learningRate = random.uniform(1e-3f, 1e-2f);
            scalars.adamCorrection1 = 1.0f - std::pow(s.beta1, float(stepIndex + 1));
            scalars.adamCorrection2 = 1.0f - std::pow(s.beta2, float(stepIndex + 1));
            scalars.step = stepIndex;
            auto step = buffer(scalars);
            TwinTensor grads = input(random.uniforms(count));
            runOnBoth([&](Backend& backend, Side side) {
                backend.adamUpdate(s, step.at(side), params.at(side), grads.at(side),
                                   m.at(side), v.at(side), count);
            });
            std::vector<float> after[2] = {params.reference.toHost(), params.tested.toHost()};
            EXPECT_TRUE(closeTo(difference(after[1], before[1]), difference(after[0], before[0]),
                                tolerance_, "parameter update"));
            expectClose(m, "first moment m");
            expectClose(v, "second moment v");
            before[0] = after[0];
            before[1] = after[1];
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AvailableBackends, BackendConformance,
                         ::testing::ValuesIn(backendsUnderTest()), instanceName);
// Builds without a second backend (cpu-ref alone) have nothing to compare.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendConformance);

}  // namespace
}  // namespace cnnstudio::test
