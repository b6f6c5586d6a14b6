// The cudnn backend's precisions. fp32 is strict: long reductions meet the fp32 tolerance, which
// TF32's 10-bit mantissa inputs would miss by a factor of about four. bf16 really computes with
// bf16 operands (its error is that of bf16 rounding) and stays within the bf16 tolerance, its
// activations moved in and out as fp32 NCHW by toHost/fromHost whatever it stores; tf32 stays
// within its tolerance. The conformance suite runs every op at every precision; these tests pin
// what distinguishes the precisions.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "kernels/cudnn_test_support.h"

namespace cnnstudio::test {
namespace {

// Over these reductions TF32 rounding of both operands gives a relative error near 4e-4 (above
// the fp32 tolerance, 1e-4) and bf16 rounding near 3e-3; fp32 itself stays near 1e-6, or 1e-5
// for Winograd and FFT algorithms.
constexpr double kBf16LowestError = 1e-4;

// Reductions of 1152 (conv: 128 channels x 3x3) and 1024 (dense) terms.
const ConvGeometry kLongConv = convGeometry(2, 128, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1);
const DenseGeometry kLongDense{8, 1024, 64};

struct DenseOutputs {
    std::vector<float> y, dx, dw;
};

DenseOutputs runDense(Backend& backend, const DenseGeometry& g, const std::vector<float>& x,
                      const std::vector<float>& w, const std::vector<float>& dy) {
    Tensor xs = activationsFromHost(backend, denseInputShape(g), x);
    Tensor ws = tensorFromHost(backend, w);
    Tensor dys = activationsFromHost(backend, denseOutputShape(g), dy);
    Tensor y = poisonedActivations(backend, denseOutputShape(g));
    Tensor dx = poisonedActivations(backend, denseInputShape(g));
    Tensor dw = poisonedTensor(backend, std::int64_t(g.outFeatures) * g.inFeatures);
    backend.denseForward(g, xs.data(), ws.data(), nullptr, y.data());
    backend.denseBackwardData(g, dys.data(), ws.data(), dx.data());
    backend.denseBackwardWeights(g, xs.data(), dys.data(), dw.data(), nullptr);
    return {y.toHost(), dx.toHost(), dw.toHost()};
}

class CudnnPrecision : public ::testing::TestWithParam<Precision> {
protected:
    void SetUp() override {
        CNNSTUDIO_SKIP_WITHOUT_CUDA_DEVICE();
        cudnn_ = createCudnn(GetParam());
        reference_ = createBackend("cpu-ref");
    }

    // Within the precision's tolerance; for bf16 also above kBf16LowestError, the proof that
    // bf16 arithmetic is used.
    void expectPrecisionSized(const std::vector<float>& out, const std::vector<float>& ref,
                              const std::string& what) const {
        EXPECT_TRUE(closeTo(out, ref, relativeTolerance(GetParam()), what));
        if (GetParam() == Precision::Bf16) {
            EXPECT_GT(relativeError(out, ref), kBf16LowestError)
                << what << " is as exact as fp32: bf16 arithmetic was not used";
        }
    }

    std::unique_ptr<Backend> cudnn_, reference_;
};

TEST_P(CudnnPrecision, BackendReportsThePrecisionItWasAskedFor) {
    EXPECT_EQ(cudnn_->precision(), GetParam());
    EXPECT_EQ(cudnn_->name(), "cudnn");
    EXPECT_NE(cudnn_->description().find(toString(GetParam())), std::string::npos)
        << cudnn_->description();
}

TEST_P(CudnnPrecision, ConvolutionErrorMatchesThePrecision) {
    SeededRandom random;
    const ConvStepInputs inputs = ConvStepInputs::random(kLongConv, random);
    ConvStep reference(*reference_, kLongConv, inputs);
    reference.run(*reference_);
    ConvStep tested(*cudnn_, kLongConv, inputs);
    tested.run(*cudnn_);
    expectPrecisionSized(tested.y().toHost(), reference.y().toHost(), "y");
    expectPrecisionSized(tested.dx().toHost(), reference.dx().toHost(), "dx");
    expectPrecisionSized(tested.dw().toHost(), reference.dw().toHost(), "dw");
}

TEST_P(CudnnPrecision, DenseErrorMatchesThePrecision) {
    SeededRandom random;
    const DenseGeometry& g = kLongDense;
    const std::vector<float> x = random.uniforms(std::size_t(g.batch) * g.inFeatures);
    const std::vector<float> w = random.uniforms(std::size_t(g.outFeatures) * g.inFeatures);
    const std::vector<float> dy = random.uniforms(std::size_t(g.batch) * g.outFeatures);
    const DenseOutputs reference = runDense(*reference_, g, x, w, dy);
    const DenseOutputs tested = runDense(*cudnn_, g, x, w, dy);
    expectPrecisionSized(tested.y, reference.y, "y");
    expectPrecisionSized(tested.dx, reference.dx, "dx");
    expectPrecisionSized(tested.dw, reference.dw, "dw");
}

INSTANTIATE_TEST_SUITE_P(EveryPrecision, CudnnPrecision,
                         ::testing::Values(Precision::Fp32, Precision::Tf32, Precision::Bf16),
                         [](const ::testing::TestParamInfo<Precision>& info) {
                             return toString(info.param);
                         });

}  // namespace
}  // namespace cnnstudio::test
