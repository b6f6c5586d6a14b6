// Behaviour of the `cpu` backend that the conformance suite (every op against cpu-ref on
// random data) does not pin: thread settings, in-place activations, max-pool ties, plan reuse
// across geometries and the errors bad geometry gives.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "backend_factories.h"
#include "cnnstudio/error.h"

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

TEST(CpuBackend, NegativeThreadsOrReducedPrecisionAreErrors) {
    EXPECT_THROW(cpuBackend(-1), Error);
    BackendOptions bf16;
    bf16.precision = Precision::Bf16;
    EXPECT_THROW(createCpuBackend(bf16), Error);
}

TEST(CpuBackend, OpsLeaveTheCallersOpenMpThreadCountAlone) {
    const int before = omp_get_max_threads();
    auto backend = cpuBackend(before + 1);
    std::vector<float> y(100000);
    backend->fill(y.data(), 2.0f, y.size());
    EXPECT_EQ(omp_get_max_threads(), before);
    EXPECT_EQ(y.back(), 2.0f);
}

// A window of equal values (after ReLU: all zeros) sends its gradient to the window's first
// element, as PyTorch and cpu-ref do.
TEST(CpuBackend, MaxPoolBackwardSendsTiesToTheFirstElement) {
    auto backend = cpuBackend();
    PoolGeometry g;
    g.kind = PoolKind::Max;
    g.inHeight = g.inWidth = 4;
    g.outHeight = g.outWidth = 2;
    g.kernelHeight = g.kernelWidth = 2;
    g.strideHeight = g.strideWidth = 2;
    std::vector<float> x(16, 0.0f), y(4), dy = {1, 2, 3, 4}, dx(16, -1.0f);
    x[15] = 5.0f;  // the last window has a unique maximum at its last element
    backend->poolForward(g, x.data(), y.data());
    backend->poolBackward(g, x.data(), y.data(), dy.data(), dx.data());
    std::vector<float> expected(16, 0.0f);
    expected[0] = 1;   // window (0,0): first element of rows 0-1, cols 0-1
    expected[2] = 2;   // window (0,1)
    expected[8] = 3;   // window (1,0)
    expected[15] = 4;  // window (1,1): the maximum
    EXPECT_EQ(dx, expected);
    EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 5}));
}

// Layers may run activations in place (x == y); the backward must still see the right slope.
TEST(CpuBackend, InPlaceActivationsBackpropagateCorrectly) {
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
        {Activation::Elu, 1.0f, {std::exp(-2.0f), std::exp(-0.5f), 1.0f, 1, 1}},
    };
    for (const Case& c : cases) {
        std::vector<float> data = input, dx(input.size());
        backend->activationForward(c.kind, c.alpha, data.data(), data.data(), data.size());
        backend->activationBackward(c.kind, c.alpha, data.data(), data.data(), dy.data(),
                                    dx.data(), dx.size());
        for (std::size_t i = 0; i < dx.size(); ++i)
            EXPECT_NEAR(dx[i], c.slope[i], 1e-6f) << "activation " << int(c.kind) << " at x = "
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
        EXPECT_NE(error.reason().find("output height is 4"), std::string::npos) << error.what();
        EXPECT_NE(error.where().find("convForward"), std::string::npos) << error.what();
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
