// The tiled SGEMM core shared by convolution (forward, backward data, backward filter) and
// dense layers: C (M x N) = A (M x K) * B (K x N), fp32 FFMA, never materialising A or B.
//
// A "problem" says where the operands live. It supplies
//   Params                          the kernel's parameter block
//   Block(params, tileM, tileN)     this thread block's tile: m0, n0, the k range
//                                   [kBegin, kEnd) (split-K) and whatever else it needs
//   Tables, fillTables(...)         per-block lookup tables in shared memory (the decoded
//                                   columns of an implicit im2col, say), built once per block so
//                                   that the loaders keep almost nothing in registers
//   ALoader<TileM, Threads>         copies this thread's share of an A tile (TileM x kTileK)
//   BLoader<Threads>                copies this thread's share of a B tile (kTileK x kTileN)
//   storeQuad(params, block, m, n, values[4])   writes C[m][n..n+3] (n a multiple of 4)
// A loader's issue(params, block, tables, tile) starts the asynchronous copies of its next
// k tile into shared memory (zeros outside the matrix or the block's k range) and advances to
// the tile after; each problem picks the thread-to-element mapping that coalesces its reads.
//
// Blocking: block tile TileM x 128 x 8 with TileM = 64 (128 threads) or 128 (256 threads);
// each warp computes a 64 x 32 warp tile, each lane an 8 x 8 micro-tile made of 4x4 quarters
// (rows r..r+3 and r+32..r+35, columns c..c+3 and c+16..c+19) so that its shared-memory
// fragments are two float4 reads per operand per k, and the 8 row groups of a warp read one
// contiguous 128-byte line (no bank conflicts). Global memory reaches shared memory through a
// three-stage cp.async pipeline: two tiles are in flight while one is multiplied, with one
// barrier per tile.
#pragma once

#include <cuda_runtime.h>

#include "runtime/async_copy.cuh"

namespace cnnstudio::kernels::gemm {

constexpr int kTileK = 8;
constexpr int kTileN = 128;
constexpr int kWarpTileM = 64;
constexpr int kWarpTileN = 32;
constexpr int kWarpsN = kTileN / kWarpTileN;  // 4
// Rows of the shared tiles are padded by one float4: the transposed scalar stores of the A
// loaders then hit 32 distinct banks, and rows stay 16-byte aligned for the float4 reads.
constexpr int kPad = 4;
constexpr int kStages = 3;

template <int WarpsM>
struct TileConfig {
    static constexpr int kTileM = kWarpTileM * WarpsM;  // 64 or 128
    static constexpr int kThreads = 32 * kWarpsN * WarpsM;  // 128 or 256
    // 128 registers per thread (65536 per SM): 16 warps per SM in either shape.
    static constexpr int kMinBlocksPerSm = WarpsM == 2 ? 2 : 4;
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
    using Tables = typename Problem::Tables;
    using ALoader = typename Problem::template ALoader<kTileM, Config::kThreads>;
    using BLoader = typename Problem::template BLoader<Config::kThreads>;

    __shared__ __align__(16) SharedStage<kTileM> stages[kStages];
    __shared__ __align__(16) Tables tables;

    const int thread = threadIdx.x;
    const typename Problem::Block block(params, kTileM, kTileN);
    Problem::fillTables(params, block, thread, Config::kThreads, tables);
    __syncthreads();
    ALoader aLoader(params, block, thread);
    BLoader bLoader(params, block, thread);

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
    // Every step commits one copy group, empty or not, so that "all but the newest
    // kStages - 2 groups are complete" always means "tile t has landed".
#pragma unroll
    for (int stage = 0; stage < kStages - 1; ++stage) {
        if (stage < tiles) {
            aLoader.issue(params, block, tables, stages[stage].a);
            bLoader.issue(params, block, tables, stages[stage].b);
        }
        commitAsyncCopies();
    }
    for (int t = 0; t < tiles; ++t) {
        waitAsyncCopies<kStages - 2>();
        // After the barrier every thread's copies of tile t are visible, and every thread has
        // finished multiplying tile t - 1, whose stage the copies issued next overwrite.
        __syncthreads();
        if (t + kStages - 1 < tiles) {
            SharedStage<kTileM>& refill = stages[(t + kStages - 1) % kStages];
            aLoader.issue(params, block, tables, refill.a);
            bLoader.issue(params, block, tables, refill.b);
        }
        commitAsyncCopies();
        const SharedStage<kTileM>& stage = stages[t % kStages];
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
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int m = block.m0 + rowBase + (i < 4 ? i : 32 + i - 4);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int n = block.n0 + colBase + half * 16;
            const float quad[4] = {acc[i][half * 4], acc[i][half * 4 + 1], acc[i][half * 4 + 2],
                                   acc[i][half * 4 + 3]};
            Problem::storeQuad(params, block, m, n, quad);
        }
    }
}

}  // namespace cnnstudio::kernels::gemm
