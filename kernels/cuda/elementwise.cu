// Elementwise ops over `count` elements:
//   fill      y = value          fp32 buffers (parameters, gradients, state)
//   axpy      y = alpha x + y    activations: fp32 or bf16 (Backend::activationFormat)
//   add       y = a + b          activations
//   multiply  y = a * b          activations
//   scale     y = alpha y        fp32 buffers
// bf16 operands are widened to fp32, combined, and the result rounded to bf16 (nearest even).
// Memory-bound: one grid-stride kernel per op. When every pointer is 16-byte aligned the body
// moves 16-byte packs (4 floats or 8 bf16 per thread, coalesced across the warp) and the last
// count % pack elements are done one by one; otherwise every element is done one by one.
#include <cstdint>

#include "cuda/activation_storage.cuh"
#include "cuda/cuda_backend.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

// Each functor computes one output from its inputs (in fp32); the kernels below apply it to
// each element of a pack and to single elements.
struct FillValue {
    float value;
    __device__ float operator()(float, float, float) const { return value; }
};
struct AlphaXPlusY {
    float alpha;
    __device__ float operator()(float x, float, float y) const { return fmaf(alpha, x, y); }
};
struct Sum {
    __device__ float operator()(float a, float b, float) const { return a + b; }
};
struct Product {
    __device__ float operator()(float a, float b, float) const { return a * b; }
};
struct ScaleY {
    float alpha;
    __device__ float operator()(float, float, float y) const { return alpha * y; }
};

// y[i] = op(a[i], b[i], y[i]) over elements of storage type T; a, b may be null when op ignores
// them; y is read only when ReadsY. Vectorised: a, b, y are 16-byte aligned. No __restrict__:
// y may be a or b (in place; each thread reads a pack before writing it).
template <class T, class Op, bool ReadsY, bool Vectorised>
__global__ void elementwiseKernel(Op op, const T* a, const T* b, T* y, std::size_t count) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    std::size_t scalarBegin = 0;
    if constexpr (Vectorised) {
        constexpr int kPack = kPerAccess16<T>;
        using Pack = Packed<T, kPack>;
        const std::size_t packs = count / kPack;
        for (std::size_t i = first; i < packs; i += stride) {
            const std::size_t offset = i * kPack;
            Pack va{}, vb{}, vy{};
            if (a) va = Pack::load(a + offset);
            if (b) vb = Pack::load(b + offset);
            if constexpr (ReadsY) vy = Pack::load(y + offset);
#pragma unroll
            for (int k = 0; k < kPack; ++k) vy.set(k, op(va.get(k), vb.get(k), vy.get(k)));
            vy.store(y + offset);
        }
        scalarBegin = packs * kPack;
    }
    for (std::size_t i = scalarBegin + first; i < count; i += stride) {
        const float va = a ? toFloat(a[i]) : 0.0f;
        const float vb = b ? toFloat(b[i]) : 0.0f;
        const float vy = ReadsY ? toFloat(y[i]) : 0.0f;
        y[i] = fromFloat<T>(op(va, vb, vy));
    }
}

template <class T, class Op, bool ReadsY>
void launchElementwise(const char* name, cudaStream_t stream, int multiprocessors, Op op,
                       const T* a, const T* b, T* y, std::size_t count) {
    if (count == 0) return;
    constexpr unsigned threads = 256;
    // null counts as aligned
    const bool vectorised = isAligned(a, 16) && isAligned(b, 16) && isAligned(y, 16);
    const unsigned blocks = gridStrideBlocks(
        vectorised ? count / kPerAccess16<T> + 1 : count, threads, multiprocessors);
    if (vectorised)
        launchKernel(name, elementwiseKernel<T, Op, ReadsY, true>, blocks, threads, stream, op, a,
                     b, y, count);
    else
        launchKernel(name, elementwiseKernel<T, Op, ReadsY, false>, blocks, threads, stream, op,
                     a, b, y, count);
}

// Runs an activation op on fp32 or bf16 storage, as the backend's activation format says.
template <class Op, bool ReadsY>
void launchOnActivations(bool bf16, const char* name, cudaStream_t stream, int multiprocessors,
                         Op op, const float* a, const float* b, float* y, std::size_t count) {
    if (bf16)
        launchElementwise<__nv_bfloat16, Op, ReadsY>(
            name, stream, multiprocessors, op, reinterpret_cast<const __nv_bfloat16*>(a),
            reinterpret_cast<const __nv_bfloat16*>(b), reinterpret_cast<__nv_bfloat16*>(y),
            count);
    else
        launchElementwise<float, Op, ReadsY>(name, stream, multiprocessors, op, a, b, y, count);
}

}  // namespace

void CudaBackend::doFill(float* y, float value, std::size_t count) {
    activateDevice();
    launchElementwise<float, FillValue, false>("fill", stream(),
                                               deviceProperties().multiProcessorCount,
                                               FillValue{value}, nullptr, nullptr, y, count);
}

void CudaBackend::doAxpy(float alpha, const float* x, float* y, std::size_t count) {
    activateDevice();
    launchOnActivations<AlphaXPlusY, true>(activationFormat().bf16, "axpy", stream(),
                                           deviceProperties().multiProcessorCount,
                                           AlphaXPlusY{alpha}, x, nullptr, y, count);
}

void CudaBackend::doAdd(const float* a, const float* b, float* y, std::size_t count) {
    activateDevice();
    launchOnActivations<Sum, false>(activationFormat().bf16, "add", stream(),
                                    deviceProperties().multiProcessorCount, Sum{}, a, b, y, count);
}

void CudaBackend::doMultiply(const float* a, const float* b, float* y, std::size_t count) {
    activateDevice();
    launchOnActivations<Product, false>(activationFormat().bf16, "multiply", stream(),
                                        deviceProperties().multiProcessorCount, Product{}, a, b,
                                        y, count);
}

void CudaBackend::doScale(float* y, float alpha, std::size_t count) {
    activateDevice();
    launchElementwise<float, ScaleY, true>("scale", stream(),
                                           deviceProperties().multiProcessorCount, ScaleY{alpha},
                                           nullptr, nullptr, y, count);
}

}  // namespace cnnstudio::kernels
