// Optimiser updates, one pass over the flat parameter buffer (count floats), as PyTorch:
//   SGD:  g = grad + weightDecay param; v = momentum v + g;
//         param -= lr (nesterov ? g + momentum v : v)         (without momentum: param -= lr g)
//   Adam: g = grad (+ weightDecay param unless decoupled); m = b1 m + (1 - b1) g;
//         v = b2 v + (1 - b2) g^2; param -= lr (m / c1) / (sqrt(v / c2) + eps)
//         AdamW (decoupled) first does param -= lr weightDecay param.
// c1, c2 = 1 - beta^t come with the step scalars. Loops vectorise; threads split the buffer.
#include <cmath>

#include "cnnstudio/error.h"
#include "cpu/cpu_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu {

void CpuBackend::doSgdUpdate(const SgdSettings& s, const StepScalars* step, float* params,
                             const float* grads, float* velocity, std::size_t count) {
    const bool withMomentum = s.momentum > 0.0f;
    const float lr = step->learningRate, momentum = s.momentum, decay = s.weightDecay;
    const bool nesterov = s.nesterov;
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
    if (!withMomentum) {
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
        for (std::int64_t i = 0; i < n; ++i) params[i] -= lr * (grads[i] + decay * params[i]);
        return;
    }
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) {
        const float g = grads[i] + decay * params[i];
        const float v = momentum * velocity[i] + g;
        velocity[i] = v;
        params[i] -= lr * (nesterov ? g + momentum * v : v);
    }
}

void CpuBackend::doAdamUpdate(const AdamSettings& s, const StepScalars* step, float* params,
                              const float* grads, float* m, float* v, std::size_t count) {
    ops::checkAdamCorrections(*step, opLabel("adamUpdate"));
    const float lr = step->learningRate;
    const float beta1 = s.beta1, beta2 = s.beta2, epsilon = s.epsilon;
    const float stepSize = lr / step->adamCorrection1;
    const float inverseSqrtCorrection2 = 1.0f / std::sqrt(step->adamCorrection2);
    const float coupledDecay = s.decoupledWeightDecay ? 0.0f : s.weightDecay;
    const float decoupledShrink = s.decoupledWeightDecay ? 1.0f - lr * s.weightDecay : 1.0f;
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) {
        const float param = params[i] * decoupledShrink;
        const float g = grads[i] + coupledDecay * params[i];
        const float mi = beta1 * m[i] + (1.0f - beta1) * g;
        const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        params[i] = param - stepSize * mi / (std::sqrt(vi) * inverseSqrtCorrection2 + epsilon);
    }
}

}  // namespace cnnstudio::cpu
