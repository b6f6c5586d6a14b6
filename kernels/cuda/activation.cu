// Activations over `count` floats, elementwise:
//   relu   y = max(x, 0)                        dx = x > 0 ? dy : 0
//   leaky  y = x > 0 ? x : alpha x              dx = x > 0 ? dy : alpha dy
//   elu    y = x > 0 ? x : alpha (exp(x) - 1)   dx = x > 0 ? dy : alpha exp(x) dy
// (the backward reads x, so it is exact whether or not y was computed in place). Grid-stride,
// float4 when every pointer is 16-byte aligned, the count % 4 tail one by one.
#include <cstdint>

#include "cuda/cuda_backend.h"
#include "cuda/geometry_checks.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

bool isAligned16(const void* pointer) {
    return (reinterpret_cast<std::uintptr_t>(pointer) & 15u) == 0;
}

template <Activation Kind>
__device__ __forceinline__ float activate(float x, float alpha) {
    if constexpr (Kind == Activation::Relu) return x > 0.0f ? x : 0.0f;
    else if constexpr (Kind == Activation::LeakyRelu) return x > 0.0f ? x : alpha * x;
    else return x > 0.0f ? x : alpha * expm1f(x);  // Elu
}

// The derivative lines of activate(), times dy.
template <Activation Kind>
__device__ __forceinline__ float activateGrad(float x, float dy, float alpha) {
    if constexpr (Kind == Activation::Relu) return x > 0.0f ? dy : 0.0f;
    else if constexpr (Kind == Activation::LeakyRelu) return x > 0.0f ? dy : alpha * dy;
    else return x > 0.0f ? dy : alpha * expf(x) * dy;  // Elu
}

// y may alias x (in place): each element is read before it is written by the same thread.
template <Activation Kind, bool Vectorised>
__global__ void activationForwardKernel(float alpha, const float* x, float* y, std::size_t count) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    std::size_t tail = 0;
    if constexpr (Vectorised) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* y4 = reinterpret_cast<float4*>(y);
        for (std::size_t i = first; i < count / 4; i += stride) {
            const float4 v = x4[i];
            y4[i] = float4{activate<Kind>(v.x, alpha), activate<Kind>(v.y, alpha),
                           activate<Kind>(v.z, alpha), activate<Kind>(v.w, alpha)};
        }
        tail = count / 4 * 4;
    }
    for (std::size_t i = tail + first; i < count; i += stride) y[i] = activate<Kind>(x[i], alpha);
}

template <Activation Kind, bool Vectorised>
__global__ void activationBackwardKernel(float alpha, const float* x, const float* dy, float* dx,
                                         std::size_t count) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    std::size_t tail = 0;
    if constexpr (Vectorised) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        const float4* dy4 = reinterpret_cast<const float4*>(dy);
        float4* dx4 = reinterpret_cast<float4*>(dx);
        for (std::size_t i = first; i < count / 4; i += stride) {
            const float4 v = x4[i], g = dy4[i];
            dx4[i] = float4{activateGrad<Kind>(v.x, g.x, alpha), activateGrad<Kind>(v.y, g.y, alpha),
                            activateGrad<Kind>(v.z, g.z, alpha), activateGrad<Kind>(v.w, g.w, alpha)};
        }
        tail = count / 4 * 4;
    }
    for (std::size_t i = tail + first; i < count; i += stride)
        dx[i] = activateGrad<Kind>(x[i], dy[i], alpha);
}

template <Activation Kind>
void launchForward(cudaStream_t stream, int multiprocessors, float alpha, const float* x,
                   float* y, std::size_t count) {
    const bool vectorised = isAligned16(x) && isAligned16(y);
    const unsigned blocks = gridStrideBlocks(vectorised ? count / 4 + 1 : count, 256, multiprocessors);
    launchKernel("activation forward",
                 vectorised ? activationForwardKernel<Kind, true> : activationForwardKernel<Kind, false>,
                 blocks, 256, stream, alpha, x, y, count);
}

template <Activation Kind>
void launchBackward(cudaStream_t stream, int multiprocessors, float alpha, const float* x,
                    const float* dy, float* dx, std::size_t count) {
    const bool vectorised = isAligned16(x) && isAligned16(dy) && isAligned16(dx);
    const unsigned blocks = gridStrideBlocks(vectorised ? count / 4 + 1 : count, 256, multiprocessors);
    launchKernel("activation backward",
                 vectorised ? activationBackwardKernel<Kind, true>
                            : activationBackwardKernel<Kind, false>,
                 blocks, 256, stream, alpha, x, dy, dx, count);
}

}  // namespace

void CudaBackend::activationForward(Activation kind, float alpha, const float* x, float* y,
                                    std::size_t count) {
    if (count == 0) return;
    requirePointer(x, "activationForward", "x");
    requirePointer(y, "activationForward", "y");
    activateDevice();
    const int sms = deviceProperties().multiProcessorCount;
    switch (kind) {
    case Activation::Relu: return launchForward<Activation::Relu>(stream(), sms, alpha, x, y, count);
    case Activation::LeakyRelu:
        return launchForward<Activation::LeakyRelu>(stream(), sms, alpha, x, y, count);
    case Activation::Elu: return launchForward<Activation::Elu>(stream(), sms, alpha, x, y, count);
    }
    throw Error("unknown activation kind " + std::to_string(int(kind)), "op activationForward");
}

void CudaBackend::activationBackward(Activation kind, float alpha, const float* x, const float* y,
                                     const float* dy, float* dx, std::size_t count) {
    if (count == 0) return;
    requirePointer(x, "activationBackward", "x");
    requirePointer(dy, "activationBackward", "dy");
    requirePointer(dx, "activationBackward", "dx");
    activateDevice();
    const int sms = deviceProperties().multiProcessorCount;
    switch (kind) {
    case Activation::Relu:
        return launchBackward<Activation::Relu>(stream(), sms, alpha, x, dy, dx, count);
    case Activation::LeakyRelu:
        return launchBackward<Activation::LeakyRelu>(stream(), sms, alpha, x, dy, dx, count);
    case Activation::Elu:
        return launchBackward<Activation::Elu>(stream(), sms, alpha, x, dy, dx, count);
    }
    throw Error("unknown activation kind " + std::to_string(int(kind)), "op activationBackward");
}

}  // namespace cnnstudio::kernels
