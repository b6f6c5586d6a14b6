// Block-wide sums: warp shuffles within each warp, then one warp adds the warp totals.
// The result is valid in thread 0 only. Each function uses its own shared scratch and may be
// called once per kernel; the block size must be a multiple of 32 (at most 1024).
#pragma once

#include <cuda_runtime.h>

namespace cnnstudio::kernels {

constexpr unsigned kFullWarp = 0xffffffffu;

__device__ __forceinline__ float warpSum(float value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(kFullWarp, value, offset);
    return value;
}

__device__ __forceinline__ double warpSum(double value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(kFullWarp, value, offset);
    return value;
}

__device__ __forceinline__ float blockSum(float value) {
    __shared__ float warpTotals[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    value = warpSum(value);
    if (lane == 0) warpTotals[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < int(blockDim.x / 32) ? warpTotals[lane] : 0.0f;
        value = warpSum(value);
    }
    return value;
}

// Two sums at once (statistics come in pairs: sum and sum of squares or of products).
__device__ __forceinline__ double2 blockSum(double2 value) {
    __shared__ double2 warpTotals[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    value.x = warpSum(value.x);
    value.y = warpSum(value.y);
    if (lane == 0) warpTotals[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < int(blockDim.x / 32) ? warpTotals[lane] : double2{0.0, 0.0};
        value.x = warpSum(value.x);
        value.y = warpSum(value.y);
    }
    return value;
}

}  // namespace cnnstudio::kernels
