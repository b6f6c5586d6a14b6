// Activations, elementwise over `count` floats x -> y:
//   Relu       y = max(x, 0)                        dx = x > 0 ? dy : 0
//   LeakyRelu  y = x > 0 ? x : alpha x              dx = x > 0 ? dy : alpha dy
//   Elu        y = x > 0 ? x : alpha (exp(x) - 1)   dx = x > 0 ? dy : alpha exp(x) dy
//   Silu       y = x s, s = sigmoid(x)              dx = s (1 + x (1 - s)) dy
// At x == 0 the derivative is the left one, as in PyTorch. Backward reads x, not y: alpha exp(x)
// is exact where y + alpha would lose digits when y is close to -alpha, and SiLU cannot be
// inverted from y (it is not monotonic below x = -1.28). SiLU's sigmoid is taken in double as
// 1 / (1 + exp(-x)): exp(-x) overflows to infinity for very negative x, which gives s = 0 and
// y = -0, the limit.
#include <cmath>

#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

void CpuRefBackend::doActivationForward(Activation kind, float alpha, const float* x, float* y,
                                        std::size_t count) {
    switch (kind) {
    case Activation::Relu:
        for (std::size_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
        return;
    case Activation::LeakyRelu:
        for (std::size_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
        return;
    case Activation::Elu:
        for (std::size_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : alpha * std::expm1(x[i]);
        return;
    case Activation::Silu:
        for (std::size_t i = 0; i < count; ++i) y[i] = float(x[i] * sigmoid(x[i]));
        return;
    }
}

// Differentiates the forward lines above with respect to x.
void CpuRefBackend::doActivationBackward(Activation kind, float alpha, const float* x,
                                         const float* y, const float* dy, float* dx,
                                         std::size_t count) {
    switch (kind) {
    case Activation::Relu:
        for (std::size_t i = 0; i < count; ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
        return;
    case Activation::LeakyRelu:
        for (std::size_t i = 0; i < count; ++i) dx[i] = x[i] > 0.0f ? dy[i] : alpha * dy[i];
        return;
    case Activation::Elu:
        for (std::size_t i = 0; i < count; ++i)
            dx[i] = x[i] > 0.0f ? dy[i] : alpha * std::exp(x[i]) * dy[i];
        return;
    case Activation::Silu:
        for (std::size_t i = 0; i < count; ++i) {
            const double s = sigmoid(x[i]);
            dx[i] = float(s * (1.0 + x[i] * (1.0 - s)) * dy[i]);
        }
        return;
    }
}

}  // namespace cnnstudio::cpu_ref
