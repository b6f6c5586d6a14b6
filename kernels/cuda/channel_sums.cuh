// Per-channel sums over batch and spatial positions of (batch, channels, spatial) tensors,
// accumulated in double so that statistics over millions of values keep fp32 accuracy:
//   sum[c]     = sum_{n,s} u[n][c][s]
//   product[c] = sum_{n,s} u[n][c][s] * v[n][c][s]     (v == u: the sum of squares)
// Used by batch norm (statistics and gradients) and by the bias gradients of conv and dense.
//
// Two levels, no atomics (the result does not depend on scheduling): channelPartialSumsKernel
// runs a grid of (channels, splits) blocks, each reducing one contiguous part of a channel
// (warp shuffles, then across warps) into partials[c * splits + split]; the op's own finalize
// kernel then adds a channel's partials in split order with channelTotal().
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "cuda/block_reduce.cuh"

namespace cnnstudio::kernels {

constexpr int kChannelSumThreads = 256;

// WithProduct false: only sum[c] is computed (v is not read; product is 0).
template <bool WithProduct>
__global__ void __launch_bounds__(kChannelSumThreads)
channelPartialSumsKernel(const float* __restrict__ u, const float* __restrict__ v, int batch,
                         int channels, int spatial, int splits, bool vectorised,
                         double2* __restrict__ partials) {
    const int channel = blockIdx.x, split = blockIdx.y;
    double sum = 0.0, product = 0.0;
    if (vectorised) {  // spatial % 4 == 0 and u, v 16-byte aligned: float4s never cross a plane
        const int spatial4 = spatial / 4;
        const int total4 = batch * spatial4;
        const int chunk = (total4 + splits - 1) / splits;
        const int begin = split * chunk;
        const int end = min(total4, begin + chunk);
        const float4* u4 = reinterpret_cast<const float4*>(u);
        const float4* v4 = reinterpret_cast<const float4*>(v);
        for (int j = begin + int(threadIdx.x); j < end; j += blockDim.x) {
            const int image = j / spatial4, position = j - image * spatial4;
            const int index = (image * channels + channel) * spatial4 + position;
            const float4 a = __ldg(u4 + index);
            sum += double(a.x) + double(a.y) + double(a.z) + double(a.w);
            if constexpr (WithProduct) {
                const float4 b = __ldg(v4 + index);
                product += double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z +
                           double(a.w) * b.w;
            }
        }
    } else {
        const int total = batch * spatial;
        const int chunk = (total + splits - 1) / splits;
        const int begin = split * chunk;
        const int end = min(total, begin + chunk);
        for (int j = begin + int(threadIdx.x); j < end; j += blockDim.x) {
            const int image = j / spatial, position = j - image * spatial;
            const int index = (image * channels + channel) * spatial + position;
            const float a = __ldg(u + index);
            sum += a;
            if constexpr (WithProduct) product += double(a) * __ldg(v + index);
        }
    }
    const double2 total = blockSum(double2{sum, product});
    if (threadIdx.x == 0) partials[channel * splits + split] = total;
}

// Adds one channel's partial sums in split order.
__device__ __forceinline__ double2 channelTotal(const double2* partials, int channel, int splits) {
    double2 total{0.0, 0.0};
    for (int split = 0; split < splits; ++split) {
        const double2 part = partials[channel * splits + split];
        total.x += part.x;
        total.y += part.y;
    }
    return total;
}

// Blocks per channel: enough for about four blocks per multiprocessor overall, but at least
// 8192 values per block so that each block amortises its reduction.
inline int channelSumSplits(int channels, std::int64_t valuesPerChannel, int multiprocessors) {
    std::int64_t wanted = (4 * std::int64_t(multiprocessors) + channels - 1) / channels;
    std::int64_t most = valuesPerChannel / 8192;
    std::int64_t splits = wanted < most ? wanted : most;
    return int(splits > 1 ? (splits < 65535 ? splits : 65535) : 1);
}

}  // namespace cnnstudio::kernels
