// Optimiser updates over the flat parameter buffer, one launch each (PyTorch's semantics).
// lr and the Adam bias corrections are read on the device from StepScalars, so a captured
// step uses the current values at every replay.
//   SGD   g = grad + wd * param
//         momentum != 0:  v = momentum * v + g;  g = nesterov ? g + momentum * v : v
//         param -= lr * g
//   Adam  AdamW: param *= 1 - lr * wd        Adam: g = grad + wd * param
//         m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
//         param -= lr / c1 * m / (sqrt(v) / sqrt(c2) + eps),   c1 = 1 - b1^t, c2 = 1 - b2^t
// Grid-stride, float4 when every buffer is 16-byte aligned, the count % 4 tail one by one.
#include <cstdint>

#include "cuda/activation_storage.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

struct SgdStep {
    float learningRate, momentum, weightDecay;
    bool nesterov, useVelocity;
    __device__ void operator()(float& param, float grad, float& velocity) const {
        float g = fmaf(weightDecay, param, grad);
        if (useVelocity) {
            velocity = fmaf(momentum, velocity, g);
            g = nesterov ? fmaf(momentum, velocity, g) : velocity;
        }
        param = fmaf(-learningRate, g, param);
    }
};

struct AdamStep {
    float learningRate, beta1, beta2, epsilon, weightDecay;
    float stepSize;           // lr / c1
    float inverseRootC2;      // 1 / sqrt(c2)
    bool decoupled;
    __device__ void operator()(float& param, float grad, float& m, float& v) const {
        float g = grad;
        if (decoupled) param *= 1.0f - learningRate * weightDecay;
        else g = fmaf(weightDecay, param, g);
        m = fmaf(beta1, m, (1.0f - beta1) * g);
        v = fmaf(beta2, v, (1.0f - beta2) * g * g);
        param -= stepSize * m / fmaf(sqrtf(v), inverseRootC2, epsilon);
    }
};

template <bool Vectorised>
__global__ void sgdKernel(SgdSettings settings, const StepScalars* __restrict__ step,
                          float* __restrict__ params, const float* __restrict__ grads,
                          float* __restrict__ velocity, std::size_t count) {
    const SgdStep update{step->learningRate, settings.momentum, settings.weightDecay,
                         settings.nesterov, settings.momentum != 0.0f};
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    std::size_t tail = 0;
    float unusedVelocity = 0.0f;
    if constexpr (Vectorised) {
        float4* p4 = reinterpret_cast<float4*>(params);
        const float4* g4 = reinterpret_cast<const float4*>(grads);
        float4* v4 = reinterpret_cast<float4*>(velocity);
        for (std::size_t i = first; i < count / 4; i += stride) {
            float4 p = p4[i], v = update.useVelocity ? v4[i] : float4{0, 0, 0, 0};
            const float4 g = g4[i];
            update(p.x, g.x, v.x);
            update(p.y, g.y, v.y);
            update(p.z, g.z, v.z);
            update(p.w, g.w, v.w);
            p4[i] = p;
            if (update.useVelocity) v4[i] = v;
        }
        tail = count / 4 * 4;
    }
    for (std::size_t i = tail + first; i < count; i += stride)
        update(params[i], grads[i], update.useVelocity ? velocity[i] : unusedVelocity);
}

template <bool Vectorised>
__global__ void adamKernel(AdamSettings settings, const StepScalars* __restrict__ step,
                           float* __restrict__ params, const float* __restrict__ grads,
                           float* __restrict__ m, float* __restrict__ v, std::size_t count) {
    const float learningRate = step->learningRate;
    const AdamStep update{learningRate,
                          settings.beta1,
                          settings.beta2,
                          settings.epsilon,
                          settings.weightDecay,
                          learningRate / step->adamCorrection1,
                          rsqrtf(step->adamCorrection2),
                          settings.decoupledWeightDecay};
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    std::size_t tail = 0;
    if constexpr (Vectorised) {
        float4* p4 = reinterpret_cast<float4*>(params);
        const float4* g4 = reinterpret_cast<const float4*>(grads);
        float4* m4 = reinterpret_cast<float4*>(m);
        float4* v4 = reinterpret_cast<float4*>(v);
        for (std::size_t i = first; i < count / 4; i += stride) {
            float4 p = p4[i], mi = m4[i], vi = v4[i];
            const float4 g = g4[i];
            update(p.x, g.x, mi.x, vi.x);
            update(p.y, g.y, mi.y, vi.y);
            update(p.z, g.z, mi.z, vi.z);
            update(p.w, g.w, mi.w, vi.w);
            p4[i] = p;
            m4[i] = mi;
            v4[i] = vi;
        }
        tail = count / 4 * 4;
    }
    for (std::size_t i = tail + first; i < count; i += stride) update(params[i], grads[i], m[i], v[i]);
}

}  // namespace

void CudaBackend::doSgdUpdate(const SgdSettings& s, const StepScalars* step, float* params,
                              const float* grads, float* velocity, std::size_t count) {
    activateDevice();
    const bool vectorised = isAligned(params, 16) && isAligned(grads, 16) &&
                            (s.momentum == 0.0f || isAligned(velocity, 16));
    const unsigned blocks = gridStrideBlocks(vectorised ? count / 4 + 1 : count, 256,
                                             deviceProperties().multiProcessorCount);
    launchKernel("sgd update", vectorised ? sgdKernel<true> : sgdKernel<false>, blocks, 256,
                 stream(), s, step, params, grads, velocity, count);
}

void CudaBackend::doAdamUpdate(const AdamSettings& s, const StepScalars* step, float* params,
                               const float* grads, float* m, float* v, std::size_t count) {
    activateDevice();
    const bool vectorised =
        isAligned(params, 16) && isAligned(grads, 16) && isAligned(m, 16) && isAligned(v, 16);
    const unsigned blocks = gridStrideBlocks(vectorised ? count / 4 + 1 : count, 256,
                                             deviceProperties().multiProcessorCount);
    launchKernel("adam update", vectorised ? adamKernel<true> : adamKernel<false>, blocks, 256,
                 stream(), s, step, params, grads, m, v, count);
}

}  // namespace cnnstudio::kernels
