// Optimiser updates over the flat parameter buffer, `count` floats each, as torch.optim:
//   SGD:   g = grad + weightDecay p
//          momentum > 0:  v = momentum v + g;  g = nesterov ? g + momentum v : v
//          p -= lr g
//   (torch starts the momentum buffer at g on the first step; we start v at 0, which gives the
//   same v = g.)
//   Adam:  g = grad + weightDecay p            (decoupledWeightDecay false)
//          p *= 1 - lr weightDecay             (decoupledWeightDecay true: AdamW)
//          m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//          p -= (lr / c1) m / (sqrt(v) / sqrt(c2) + epsilon)
//   with lr, c1 = 1 - beta1^t, c2 = 1 - beta2^t read from StepScalars.
#include <cmath>
#include <string>

#include "cpu_ref/cpu_ref_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu_ref {

void CpuRefBackend::doSgdUpdate(const SgdSettings& s, const StepScalars* step, float* params,
                                const float* grads, float* velocity, std::size_t count) {

    const float learningRate = step->learningRate;
    for (std::size_t i = 0; i < count; ++i) {
        float gradient = grads[i] + s.weightDecay * params[i];
        if (s.momentum > 0.0f) {
            velocity[i] = s.momentum * velocity[i] + gradient;
            gradient = s.nesterov ? gradient + s.momentum * velocity[i] : velocity[i];
        }
        params[i] -= learningRate * gradient;
    }
}

void CpuRefBackend::doAdamUpdate(const AdamSettings& s, const StepScalars* step, float* params,
                                 const float* grads, float* m, float* v, std::size_t count) {
    ops::checkAdamCorrections(*step, opLabel("adamUpdate"));

    const float learningRate = step->learningRate;
    const float stepSize = learningRate / step->adamCorrection1;
    const float correction2Sqrt = std::sqrt(step->adamCorrection2);
    const float decayFactor = 1.0f - learningRate * s.weightDecay;
    const float coupledDecay = s.decoupledWeightDecay ? 0.0f : s.weightDecay;
    for (std::size_t i = 0; i < count; ++i) {
        const float gradient = grads[i] + coupledDecay * params[i];
        if (s.decoupledWeightDecay) params[i] *= decayFactor;
        m[i] = s.beta1 * m[i] + (1.0f - s.beta1) * gradient;
        v[i] = s.beta2 * v[i] + (1.0f - s.beta2) * gradient * gradient;
        const float denominator = std::sqrt(v[i]) / correction2Sqrt + s.epsilon;
        params[i] -= stepSize * m[i] / denominator;
    }
}

}  // namespace cnnstudio::cpu_ref
