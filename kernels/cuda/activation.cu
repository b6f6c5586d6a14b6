// Activations over `count` elements, elementwise:
//   relu   y = max(x, 0)                        dx = x > 0 ? dy : 0
//   leaky  y = x > 0 ? x : alpha x              dx = x > 0 ? dy : alpha dy
//   elu    y = x > 0 ? x : alpha (exp(x) - 1)   dx = x > 0 ? dy : alpha exp(x) dy
//   silu   y = x s, s = 1 / (1 + exp(-x))       dx = s (1 + x (1 - s)) dy
// (the backward reads x, so it is exact whether or not y was computed in place; SiLU could not
// be inverted from y anyway). expf(-x) overflows to infinity for x below about -88, giving
// s = 0 and y = -0, the limit, and dx = 0. x, y, dy, dx
// are activations: fp32 or bf16 as Backend::activationFormat says (bf16 widened to fp32, the
// result rounded to nearest). Grid-stride, 16-byte packs (4 floats or 8 bf16) when every
// pointer is 16-byte aligned, the remaining tail one by one.
#include <cstdint>
#include <string>

#include "cuda/activation_storage.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

template <Activation Kind>
__device__ __forceinline__ float activate(float x, float alpha) {
    if constexpr (Kind == Activation::Relu) return x > 0.0f ? x : 0.0f;
    else if constexpr (Kind == Activation::LeakyRelu) return x > 0.0f ? x : alpha * x;
    else if constexpr (Kind == Activation::Elu) return x > 0.0f ? x : alpha * expm1f(x);
    else return x / (1.0f + expf(-x));  // Silu
}

// The derivative lines of activate(), times dy.
template <Activation Kind>
__device__ __forceinline__ float activateGrad(float x, float dy, float alpha) {
    if constexpr (Kind == Activation::Relu) return x > 0.0f ? dy : 0.0f;
    else if constexpr (Kind == Activation::LeakyRelu) return x > 0.0f ? dy : alpha * dy;
    else if constexpr (Kind == Activation::Elu) return x > 0.0f ? dy : alpha * expf(x) * dy;
    else {  // Silu
        const float s = 1.0f / (1.0f + expf(-x));
        return s * (1.0f + x * (1.0f - s)) * dy;
    }
}

// y may alias x (in place): each element is read before it is written by the same thread.
template <class T, Activation Kind, bool Vectorised>
__global__ void activationForwardKernel(float alpha, const T* x, T* y, std::size_t count) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    std::size_t tail = 0;
    if constexpr (Vectorised) {
        constexpr int kPack = kPerAccess16<T>;
        using Pack = Packed<T, kPack>;
        for (std::size_t i = first; i < count / kPack; i += stride) {
            const Pack v = Pack::load(x + i * kPack);
            Pack out;
#pragma unroll
            for (int k = 0; k < kPack; ++k) out.set(k, activate<Kind>(v.get(k), alpha));
            out.store(y + i * kPack);
        }
        tail = count / kPack * kPack;
    }
    for (std::size_t i = tail + first; i < count; i += stride)
        y[i] = fromFloat<T>(activate<Kind>(toFloat(x[i]), alpha));
}

template <class T, Activation Kind, bool Vectorised>
__global__ void activationBackwardKernel(float alpha, const T* x, const T* dy, T* dx,
                                         std::size_t count) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    std::size_t tail = 0;
    if constexpr (Vectorised) {
        constexpr int kPack = kPerAccess16<T>;
        using Pack = Packed<T, kPack>;
        for (std::size_t i = first; i < count / kPack; i += stride) {
            const Pack v = Pack::load(x + i * kPack), g = Pack::load(dy + i * kPack);
            Pack out;
#pragma unroll
            for (int k = 0; k < kPack; ++k)
                out.set(k, activateGrad<Kind>(v.get(k), g.get(k), alpha));
            out.store(dx + i * kPack);
        }
        tail = count / kPack * kPack;
    }
    for (std::size_t i = tail + first; i < count; i += stride)
        dx[i] = fromFloat<T>(activateGrad<Kind>(toFloat(x[i]), toFloat(dy[i]), alpha));
}

template <class T, Activation Kind>
void launchForward(cudaStream_t stream, int multiprocessors, float alpha, const T* x, T* y,
                   std::size_t count) {
    const bool vectorised = isAligned(x, 16) && isAligned(y, 16);
    const unsigned blocks = gridStrideBlocks(vectorised ? count / kPerAccess16<T> + 1 : count,
                                             256, multiprocessors);
    launchKernel("activation forward",
                 vectorised ? activationForwardKernel<T, Kind, true>
                            : activationForwardKernel<T, Kind, false>,
                 blocks, 256, stream, alpha, x, y, count);
}

template <class T, Activation Kind>
void launchBackward(cudaStream_t stream, int multiprocessors, float alpha, const T* x,
                    const T* dy, T* dx, std::size_t count) {
    const bool vectorised = isAligned(x, 16) && isAligned(dy, 16) && isAligned(dx, 16);
    const unsigned blocks = gridStrideBlocks(vectorised ? count / kPerAccess16<T> + 1 : count,
                                             256, multiprocessors);
    launchKernel("activation backward",
                 vectorised ? activationBackwardKernel<T, Kind, true>
                            : activationBackwardKernel<T, Kind, false>,
                 blocks, 256, stream, alpha, x, dy, dx, count);
}

template <class T>
void dispatchForward(Activation kind, cudaStream_t stream, int sms, float alpha, const T* x, T* y,
                     std::size_t count) {
    switch (kind) {
    case Activation::Relu:
        return launchForward<T, Activation::Relu>(stream, sms, alpha, x, y, count);
    case Activation::LeakyRelu:
        return launchForward<T, Activation::LeakyRelu>(stream, sms, alpha, x, y, count);
    case Activation::Elu: return launchForward<T, Activation::Elu>(stream, sms, alpha, x, y, count);
    case Activation::Silu:
        return launchForward<T, Activation::Silu>(stream, sms, alpha, x, y, count);
    }
}

template <class T>
void dispatchBackward(Activation kind, cudaStream_t stream, int sms, float alpha, const T* x,
                      const T* dy, T* dx, std::size_t count) {
    switch (kind) {
    case Activation::Relu:
        return launchBackward<T, Activation::Relu>(stream, sms, alpha, x, dy, dx, count);
    case Activation::LeakyRelu:
        return launchBackward<T, Activation::LeakyRelu>(stream, sms, alpha, x, dy, dx, count);
    case Activation::Elu:
        return launchBackward<T, Activation::Elu>(stream, sms, alpha, x, dy, dx, count);
    case Activation::Silu:
        return launchBackward<T, Activation::Silu>(stream, sms, alpha, x, dy, dx, count);
    }
}

}  // namespace

void CudaBackend::doActivationForward(Activation kind, float alpha, const float* x, float* y,
                                      std::size_t count) {
    activateDevice();
    const int sms = deviceProperties().multiProcessorCount;
    if (activationFormat().bf16)
        dispatchForward(kind, stream(), sms, alpha, reinterpret_cast<const __nv_bfloat16*>(x),
                        reinterpret_cast<__nv_bfloat16*>(y), count);
    else
        dispatchForward(kind, stream(), sms, alpha, x, y, count);
}

void CudaBackend::doActivationBackward(Activation kind, float alpha, const float* x, const float* y,
                                       const float* dy, float* dx, std::size_t count) {
    activateDevice();
    const int sms = deviceProperties().multiProcessorCount;
    if (activationFormat().bf16)
        dispatchBackward(kind, stream(), sms, alpha, reinterpret_cast<const __nv_bfloat16*>(x),
                         reinterpret_cast<const __nv_bfloat16*>(dy),
                         reinterpret_cast<__nv_bfloat16*>(dx), count);
    else
        dispatchBackward(kind, stream(), sms, alpha, x, dy, dx, count);
}

}  // namespace cnnstudio::kernels
