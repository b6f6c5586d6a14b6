// Elementwise ops over `count` floats:
//   fill      y = value
//   axpy      y = alpha x + y
//   add       y = a + b
//   multiply  y = a * b
//   scale     y = alpha y
// Memory-bound: one grid-stride kernel per op. When every pointer is 16-byte aligned the body
// moves float4s (one 16-byte access per thread, coalesced across the warp) and the last
// count % 4 elements are done one by one; otherwise every element is done one by one.
#include <cstdint>

#include "cuda/cuda_backend.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

// Each functor computes one output from its inputs; the kernels below apply it to float4s
// component by component and to single floats.
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

// y[i] = op(a[i], b[i], y[i]); a, b may be null when op ignores them; y is read only when
// ReadsY. Vectorised: a, b, y are 16-byte aligned. No __restrict__: y may be a or b (in place).
template <class Op, bool ReadsY, bool Vectorised>
__global__ void elementwiseKernel(Op op, const float* a, const float* b, float* y,
                                  std::size_t count) {
    std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    std::size_t scalarBegin = 0;
    if constexpr (Vectorised) {
        std::size_t quads = count / 4;
        const float4* a4 = reinterpret_cast<const float4*>(a);
        const float4* b4 = reinterpret_cast<const float4*>(b);
        float4* y4 = reinterpret_cast<float4*>(y);
        for (std::size_t i = first; i < quads; i += stride) {
            float4 va = a ? a4[i] : float4{0, 0, 0, 0};
            float4 vb = b ? b4[i] : float4{0, 0, 0, 0};
            float4 vy = ReadsY ? y4[i] : float4{0, 0, 0, 0};
            vy.x = op(va.x, vb.x, vy.x);
            vy.y = op(va.y, vb.y, vy.y);
            vy.z = op(va.z, vb.z, vy.z);
            vy.w = op(va.w, vb.w, vy.w);
            y4[i] = vy;
        }
        scalarBegin = quads * 4;
    }
    for (std::size_t i = scalarBegin + first; i < count; i += stride) {
        float va = a ? a[i] : 0.0f;
        float vb = b ? b[i] : 0.0f;
        float vy = ReadsY ? y[i] : 0.0f;
        y[i] = op(va, vb, vy);
    }
}

bool aligned16(const void* pointer) {
    return (reinterpret_cast<std::uintptr_t>(pointer) & 15u) == 0;
}

template <class Op, bool ReadsY>
void launchElementwise(const char* name, cudaStream_t stream, int multiprocessors, Op op,
                       const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    constexpr unsigned threads = 256;
    bool vectorised = aligned16(a) && aligned16(b) && aligned16(y);  // null counts as aligned
    unsigned blocks = gridStrideBlocks(vectorised ? count / 4 + 1 : count, threads, multiprocessors);
    if (vectorised)
        launchKernel(name, elementwiseKernel<Op, ReadsY, true>, blocks, threads, stream, op, a, b,
                     y, count);
    else
        launchKernel(name, elementwiseKernel<Op, ReadsY, false>, blocks, threads, stream, op, a, b,
                     y, count);
}

}  // namespace

void CudaBackend::fill(float* y, float value, std::size_t count) {
    activateDevice();
    launchElementwise<FillValue, false>("fill", stream(), deviceProperties().multiProcessorCount,
                                        FillValue{value}, nullptr, nullptr, y, count);
}

void CudaBackend::axpy(float alpha, const float* x, float* y, std::size_t count) {
    activateDevice();
    launchElementwise<AlphaXPlusY, true>("axpy", stream(), deviceProperties().multiProcessorCount,
                                         AlphaXPlusY{alpha}, x, nullptr, y, count);
}

void CudaBackend::add(const float* a, const float* b, float* y, std::size_t count) {
    activateDevice();
    launchElementwise<Sum, false>("add", stream(), deviceProperties().multiProcessorCount, Sum{},
                                  a, b, y, count);
}

void CudaBackend::multiply(const float* a, const float* b, float* y, std::size_t count) {
    activateDevice();
    launchElementwise<Product, false>("multiply", stream(),
                                      deviceProperties().multiProcessorCount, Product{}, a, b, y,
                                      count);
}

void CudaBackend::scale(float* y, float alpha, std::size_t count) {
    activateDevice();
    launchElementwise<ScaleY, true>("scale", stream(), deviceProperties().multiProcessorCount,
                                    ScaleY{alpha}, nullptr, nullptr, y, count);
}

}  // namespace cnnstudio::kernels
