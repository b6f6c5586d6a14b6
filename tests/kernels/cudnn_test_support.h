// Shared pieces of the cudnn backend's tests: creating the backend or skipping with the reason,
// and one convolution training step (forward, backward data, backward filter with bias) whose
// operands live on a given backend, so the same step can run on cudnn and on cpu-ref.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/tensor.h"
#include "engine/backend_test_support.h"

namespace cnnstudio::test {

// Skips the calling test when no CUDA device can run the cudnn backend.
#define CNNSTUDIO_SKIP_WITHOUT_CUDA_DEVICE()                                           \
    do {                                                                               \
        if (const std::string why = ::cnnstudio::backendUnavailableReason("cudnn");     \
            !why.empty())                                                              \
            GTEST_SKIP() << "no CUDA device: " << why;                                 \
    } while (false)

inline std::unique_ptr<Backend> createCudnn(Precision precision) {
    BackendOptions options;
    options.precision = precision;
    return createBackend("cudnn", options);
}

// Host values of a convolution step's inputs.
struct ConvStepInputs {
    std::vector<float> x, w, bias, dy;

    static ConvStepInputs random(const ConvGeometry& g, SeededRandom& random) {
        return {random.uniforms(std::size_t(g.inputCount())),
                random.uniforms(std::size_t(g.weightCount())),
                random.uniforms(std::size_t(g.outChannels)),
                random.uniforms(std::size_t(g.outputCount()))};
    }
};

// A convolution step's tensors on one backend; outputs start as NaN. x, y, dx and dy are
// activations (the backend's activation format), w, bias, dw and dbias fp32.
class ConvStep {
public:
    ConvStep(Backend& backend, const ConvGeometry& g, const ConvStepInputs& inputs)
        : g_(g),
          x_(activationsFromHost(backend, convInputShape(g), inputs.x)),
          w_(tensorFromHost(backend, inputs.w)),
          bias_(tensorFromHost(backend, inputs.bias)),
          dy_(activationsFromHost(backend, convOutputShape(g), inputs.dy)),
          y_(poisonedActivations(backend, convOutputShape(g))),
          dx_(poisonedActivations(backend, convInputShape(g))),
          dw_(poisonedTensor(backend, g.weightCount())),
          dbias_(poisonedTensor(backend, g.outChannels)) {}

    // Enqueues the three ops; legal inside a captured step (allocates nothing).
    void run(Backend& backend) {
        backend.convForward(g_, x_.data(), w_.data(), bias_.data(), y_.data());
        backend.convBackwardData(g_, dy_.data(), w_.data(), dx_.data());
        backend.convBackwardFilter(g_, x_.data(), dy_.data(), dw_.data(), dbias_.data());
    }

    void setInput(const std::vector<float>& x) { x_.fromHost(x); }
    void setWeights(const std::vector<float>& w) { w_.fromHost(w); }
    // w's device memory, as a hold of the weights covers it (WeightsHeld).
    std::span<const float> weights() const { return {w_.data(), std::size_t(w_.count())}; }

    // Every output compared with `reference`'s at `tolerance`.
    void expectCloseTo(const ConvStep& reference, double tolerance) const {
        EXPECT_TRUE(closeTo(y_.toHost(), reference.y_.toHost(), tolerance, "y"));
        EXPECT_TRUE(closeTo(dx_.toHost(), reference.dx_.toHost(), tolerance, "dx"));
        EXPECT_TRUE(closeTo(dw_.toHost(), reference.dw_.toHost(), tolerance, "dw"));
        EXPECT_TRUE(closeTo(dbias_.toHost(), reference.dbias_.toHost(), tolerance, "dbias"));
    }

    const Tensor& y() const { return y_; }
    const Tensor& dx() const { return dx_; }
    const Tensor& dw() const { return dw_; }

private:
    ConvGeometry g_;
    Tensor x_, w_, bias_, dy_, y_, dx_, dw_, dbias_;
};

}  // namespace cnnstudio::test
