// The tiled SGEMM core shared by convolution (forward, backward data, backward filter) and
// dense layers: C (M x N) = A (M x K) * B (K x N), fp32 FFMA, never materialising A or B.
//
// A "problem" says where the operands live. It supplies
//   Params                          the kernel's parameter block
//   Block(params, tileM, tileN)     this thread block's tile: m0, n0, the k range
//                                   [kBegin, kEnd) (split-K) and whatever else it needs
//   ALoader<TileM, Threads>         fetches this thread's share of an A tile (TileM x kTileK)
//   BLoader<Threads>                fetches this thread's share of a B tile (kTileK x kTileN)
//   storeQuad(params, block, m, n, values[4])   writes C[m][n..n+3] (n a multiple of 4)
// Each loader has load(params, block, k0, staged) (global memory -> registers, zero outside
// the matrix or the block's k range) and store(staged, tile) (registers -> shared memory), so a
// problem picks the thread-to-element mapping that coalesces its global reads.
//
// Blocking: block tile TileM x 128 x 8 with TileM = 64 (128 threads) or 128 (256 threads);
// each warp computes a 64 x 32 warp tile, each lane an 8 x 8 micro-tile made of 4x4 quarters
// (rows r..r+3 and r+32..r+35, columns c..c+3 and c+16..c+19) so that its shared-memory
// fragments are two float4 reads per operand per k, and the 8 row groups of a warp read one
// contiguous 128-byte line (no bank conflicts). Shared memory is double buffered: the loads of
// tile t+1 are in flight in registers while tile t is multiplied, one barrier per tile.
#pragma once

#include <cuda_runtime.h>

namespace cnnstudio::kernels::gemm {

constexpr int kTileK = 8;
constexpr int kTileN = 128;
constexpr int kWarpTileM = 64;
constexpr int kWarpTileN = 32;
constexpr int kWarpsN = kTileN / kWarpTileN;  // 4
// Rows of the shared tiles are padded by one float4: the transposed scalar stores of the A
// loaders then hit 32 distinct banks, and rows stay 16-byte aligned for the float4 reads.
constexpr int kPad = 4;

template <int WarpsM>
struct TileConfig {
    static constexpr int kTileM = kWarpTileM * WarpsM;  // 64 or 128
    static constexpr int kThreads = 32 * kWarpsN * WarpsM;  // 128 or 256
    // Occupancy the register budget is set for (65536 registers per SM): the 64 accumulators,
    // the double-buffered fragments and the loaders' per-column state need 150-200 registers,
    // and squeezing them into 128 spilled, so the wide tile runs one block (8 warps) per SM
    // and the narrow one three (12 warps, at most 170 registers).
    static constexpr int kMinBlocksPerSm = WarpsM == 2 ? 1 : 3;
};

template <int TileM>
struct SharedStage {
    float a[kTileK][TileM + kPad];   // A tile stored k-major: a[k][m]
    float b[kTileK][kTileN + kPad];  // b[k][n]
};

template <class Problem, int WarpsM>
__global__ void __launch_bounds__(TileConfig<WarpsM>::kThreads, TileConfig<WarpsM>::kMinBlocksPerSm)
gemmKernel(const typename Problem::Params params) {
    using Config = TileConfig<WarpsM>;
    constexpr int kTileM = Config::kTileM;
    using ALoader = typename Problem::template ALoader<kTileM, Config::kThreads>;
    using BLoader = typename Problem::template BLoader<Config::kThreads>;

    __shared__ __align__(16) SharedStage<kTileM> stages[2];

    const int thread = threadIdx.x;
    const typename Problem::Block block(params, kTileM, kTileN);
    const ALoader aLoader(params, block, thread);
    const BLoader bLoader(params, block, thread);
    float stagedA[ALoader::kStaged];
    float stagedB[BLoader::kStaged];

    const int warp = thread / 32, lane = thread % 32;
    const int rowBase = (warp / kWarpsN) * kWarpTileM + (lane / 4) * 4;  // rows +0..3, +32..35
    const int colBase = (warp % kWarpsN) * kWarpTileN + (lane % 4) * 4;  // cols +0..3, +16..19

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    // The same for every thread of the block, so the barriers below are uniform.
    const int tiles = block.kEnd > block.kBegin ? (block.kEnd - block.kBegin + kTileK - 1) / kTileK : 0;
    if (tiles > 0) {
        aLoader.load(params, block, block.kBegin, stagedA);
        bLoader.load(params, block, block.kBegin, stagedB);
        aLoader.store(stagedA, stages[0].a);
        bLoader.store(stagedB, stages[0].b);
        __syncthreads();
    }
    for (int t = 0; t < tiles; ++t) {
        const SharedStage<kTileM>& stage = stages[t & 1];
        const bool more = t + 1 < tiles;
        if (more) {  // issue the next tile's global loads before this tile's arithmetic
            const int nextK = block.kBegin + (t + 1) * kTileK;
            aLoader.load(params, block, nextK, stagedA);
            bLoader.load(params, block, nextK, stagedB);
        }
#pragma unroll
        for (int k = 0; k < kTileK; ++k) {
            const float4 a0 = *reinterpret_cast<const float4*>(&stage.a[k][rowBase]);
            const float4 a1 = *reinterpret_cast<const float4*>(&stage.a[k][rowBase + 32]);
            const float4 b0 = *reinterpret_cast<const float4*>(&stage.b[k][colBase]);
            const float4 b1 = *reinterpret_cast<const float4*>(&stage.b[k][colBase + 16]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) {
            // The other buffer was last read in iteration t - 1, which every thread finished
            // before the barrier that ended it.
            SharedStage<kTileM>& next = stages[(t + 1) & 1];
            aLoader.store(stagedA, next.a);
            bLoader.store(stagedB, next.b);
        }
        __syncthreads();
    }

    // Rebuilt from blockIdx rather than kept live through the K loop (registers are scarce).
    const typename Problem::Block outputBlock(params, kTileM, kTileN);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int m = outputBlock.m0 + rowBase + (i < 4 ? i : 32 + i - 4);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int n = outputBlock.n0 + colBase + half * 16;
            const float quad[4] = {acc[i][half * 4], acc[i][half * 4 + 1], acc[i][half * 4 + 2],
                                   acc[i][half * 4 + 3]};
            Problem::storeQuad(params, outputBlock, m, n, quad);
        }
    }
}

}  // namespace cnnstudio::kernels::gemm
