// fp32 <-> bf16 conversion, elementwise: in (count) -> out (count).
// Memory-bound. When both pointers are 16-byte aligned each thread moves four elements per
// iteration (a float4 against four packed bf16); otherwise one element at a time (views into the
// flat parameter buffer may start at any float offset).

#include <cstdint>

#include "cuda/bf16_convert.h"
#include "runtime/cuda_check.h"

namespace cnnstudio::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 16384;  // grid-stride loops cover the rest

struct alignas(8) Bf16Quad {
    __nv_bfloat162 low, high;
};

__global__ void narrowToBf16Quads(const float4* __restrict__ in, Bf16Quad* __restrict__ out,
                                  std::size_t quads) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < quads;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float4 value = in[i];
        out[i] = {__floats2bfloat162_rn(value.x, value.y), __floats2bfloat162_rn(value.z, value.w)};
    }
}

__global__ void narrowToBf16Scalars(const float* __restrict__ in, __nv_bfloat16* __restrict__ out,
                                    std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void widenFromBf16Quads(const Bf16Quad* __restrict__ in, float4* __restrict__ out,
                                   std::size_t quads) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < quads;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const Bf16Quad value = in[i];
        const float2 low = __bfloat1622float2(value.low);
        const float2 high = __bfloat1622float2(value.high);
        out[i] = make_float4(low.x, low.y, high.x, high.y);
    }
}

__global__ void widenFromBf16Scalars(const __nv_bfloat16* __restrict__ in, float* __restrict__ out,
                                     std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        out[i] = __bfloat162float(in[i]);
}

unsigned blocksFor(std::size_t work) {
    const std::size_t blocks = (work + kThreads - 1) / kThreads;
    return unsigned(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

bool bothAligned16(const void* a, const void* b) {
    return ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)) & 15u) == 0;
}

}  // namespace

void narrowToBf16(const float* in, __nv_bfloat16* out, std::size_t count, cudaStream_t stream) {
    if (count == 0) return;
    const std::size_t quads = bothAligned16(in, out) ? count / 4 : 0;
    if (quads > 0) {
        narrowToBf16Quads<<<blocksFor(quads), kThreads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<Bf16Quad*>(out), quads);
        CNNSTUDIO_CUDA_CHECK_LAUNCH("narrowToBf16Quads");
    }
    const std::size_t done = quads * 4;
    if (done < count) {
        narrowToBf16Scalars<<<blocksFor(count - done), kThreads, 0, stream>>>(in + done, out + done,
                                                                              count - done);
        CNNSTUDIO_CUDA_CHECK_LAUNCH("narrowToBf16Scalars");
    }
}

void widenFromBf16(const __nv_bfloat16* in, float* out, std::size_t count, cudaStream_t stream) {
    if (count == 0) return;
    const std::size_t quads = bothAligned16(in, out) ? count / 4 : 0;
    if (quads > 0) {
        widenFromBf16Quads<<<blocksFor(quads), kThreads, 0, stream>>>(
            reinterpret_cast<const Bf16Quad*>(in), reinterpret_cast<float4*>(out), quads);
        CNNSTUDIO_CUDA_CHECK_LAUNCH("widenFromBf16Quads");
    }
    const std::size_t done = quads * 4;
    if (done < count) {
        widenFromBf16Scalars<<<blocksFor(count - done), kThreads, 0, stream>>>(in + done, out + done,
                                                                               count - done);
        CNNSTUDIO_CUDA_CHECK_LAUNCH("widenFromBf16Scalars");
    }
}

}  // namespace cnnstudio::kernels
