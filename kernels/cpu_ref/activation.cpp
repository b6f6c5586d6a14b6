// Activations, elementwise over `count` floats x -> y:
//   Relu       y = max(x, 0)                        dx = x > 0 ? dy : 0
//   LeakyRelu  y = x > 0 ? x : alpha x              dx = x > 0 ? dy : alpha dy
//   Elu        y = x > 0 ? x : alpha (exp(x) - 1)   dx = x > 0 ? dy : alpha exp(x) dy
// At x == 0 the derivative is the left one, as in PyTorch. Backward reads x, not y: alpha exp(x)
// is exact where y + alpha would lose digits when y is close to -alpha.
#include <cmath>

#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {

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
    }
}

}  // namespace cnnstudio::cpu_ref
