// The tiled GEMM core shared by convolution (forward, backward data, backward filter) and
// dense layers: C (M x N) = A (M x K) * B (K x N) in fp32, on tensor cores, never
// materialising A or B.
//
// A "problem" says where the operands live. It supplies
//   Params                          the kernel's parameter block
//   Block(params, tileM, tileN)     this thread block's tile: m0, n0, the k range
//                                   [kBegin, kEnd) (split-K) and whatever else it needs
//   Tables, fillTables(...)         per-block lookup tables in shared memory (the decoded
//                                   columns of an implicit im2col, say), built once per block so
//                                   that the loaders keep almost nothing in registers
//   ALoader<TileM, Threads>         copies this thread's share of an A tile (TileM x kTileK,
//                                   stored row-major: a[m][k])
//   BLoader<Threads>                copies this thread's share of a B tile (kTileK x kTileN,
//                                   stored k-major: b[k][n])
//   storeQuad(params, block, m, n, values[4])   writes C[m][n..n+3] (n a multiple of 4)
// A loader's issue(params, block, tables, tile) starts the asynchronous copies of its next
// k tile into shared memory (zeros outside the matrix or the block's k range) and advances to
// the tile after; each problem picks the thread-to-element mapping that coalesces its reads.
//
// Arithmetic: fp32 accuracy from TF32 tensor cores ("3xTF32"). TF32 keeps 10 of fp32's 23
// mantissa bits, so each operand x is split into big(x) = tf32(x) and small(x) = tf32(x - big(x)),
// and a * b is accumulated as small(a) big(b) + big(a) small(b) + big(a) big(b): the dropped
// small(a) small(b) and the truncation of the small parts are about 2^-20 of the product, the
// order of fp32's own rounding over a long sum, and three tensor-core products still outrun
// one FFMA per product.
//
// Blocking: block tile TileM x 128 x 8 with TileM = 64 (128 threads) or 128 (256 threads);
// each warp computes a 64 x 32 warp tile as 4 x 4 pieces of 16 x 8, one m16n8k8 MMA each per
// k tile (three with the split). A lane's fragments are the rows (or columns) lane / 4 and
// lane / 4 + 8 at k = lane % 4 and lane % 4 + 4. Rows of the shared tiles are padded so that a
// warp's fragment reads hit 32 distinct banks: A's rows (8 k) to 12 floats, 8 rows x 4 k at
// banks 12 row + k; B's rows (128 n) to 136, 4 k x 8 columns at banks 8 k + n.
// Global memory reaches shared memory through a four-stage cp.async pipeline: three tiles are
// in flight while one is multiplied, with one barrier per tile (three stages ran 0.7% slower
// and five 1% slower on an H200, docs/logs/2026-12-02-tensor-cores).
#pragma once

#include <cuda_runtime.h>

#include "runtime/async_copy.cuh"

namespace cnnstudio::kernels::gemm {

constexpr int kTileK = 8;
constexpr int kTileN = 128;
constexpr int kWarpTileM = 64;
constexpr int kWarpTileN = 32;
constexpr int kWarpsN = kTileN / kWarpTileN;  // 4
// Row padding of the shared tiles (see the fragment reads above); rows stay 16-byte aligned.
constexpr int kPadA = 4;
constexpr int kPadB = 8;
constexpr int kStages = 4;

template <int WarpsM>
struct TileConfig {
    static constexpr int kTileM = kWarpTileM * WarpsM;  // 64 or 128
    static constexpr int kThreads = 32 * kWarpsN * WarpsM;  // 128 or 256
    // 128 registers per thread (65536 per SM): 16 warps per SM in either shape.
    static constexpr int kMinBlocksPerSm = WarpsM == 2 ? 2 : 4;
};

template <int TileM>
struct SharedStage {
    float a[TileM][kTileK + kPadA];  // A tile stored row-major: a[m][k]
    float b[kTileK][kTileN + kPadB];  // b[k][n]
};

constexpr int kPiecesM = kWarpTileM / 16;  // m16n8k8 pieces of a warp tile
constexpr int kPiecesN = kWarpTileN / 8;

// An fp32 value as the sum of two TF32 values (their low 13 bits zero), for 3xTF32.
struct SplitTf32 {
    unsigned big, small;
};

// The tensor cores read a TF32 operand from the top 19 bits of a 32-bit register. big(x) is x
// truncated to them and small(x) = x - big(x), exact in fp32, truncated the same way: bit
// masks and one subtraction, where rounding conversions (cvt.rna) run at a quarter of the rate.
// A NaN stays NaN (in small if not in big); an infinity's small part is inf - inf, so products
// of infinities come out NaN rather than infinite: either marks a diverged step.
__device__ __forceinline__ SplitTf32 splitTf32(float x) {
    constexpr unsigned kTf32Bits = 0xffffe000u;
    const unsigned big = __float_as_uint(x) & kTf32Bits;
    return {big, __float_as_uint(x - __uint_as_float(big)) & kTf32Bits};
}

// c (16 x 8, fp32) += a (16 x 8) * b (8 x 8), TF32 inputs: one tensor-core MMA.
__device__ __forceinline__ void mmaTf32(const unsigned (&a)[4], const unsigned (&b)[2], float (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// c += a * b to fp32 accuracy: the small products first, so that they are not lost against
// the big one.
__device__ __forceinline__ void multiplyAccumulate3xTf32(const SplitTf32 (&a)[4], const SplitTf32 (&b)[2],
                                                         float (&c)[4]) {
    const unsigned aBig[4] = {a[0].big, a[1].big, a[2].big, a[3].big};
    const unsigned aSmall[4] = {a[0].small, a[1].small, a[2].small, a[3].small};
    const unsigned bBig[2] = {b[0].big, b[1].big};
    const unsigned bSmall[2] = {b[0].small, b[1].small};
    mmaTf32(aSmall, bBig, c);
    mmaTf32(aBig, bSmall, c);
    mmaTf32(aBig, bBig, c);
}

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
    const int rowBase = (warp / kWarpsN) * kWarpTileM + lane / 4;  // + 16 piece + {0, 8}
    const int colBase = (warp % kWarpsN) * kWarpTileN + lane / 4;  // + 8 piece
    const int fragmentK = lane % 4;                                // + {0, 4}

    // acc[i][j]: the 16 x 8 piece at warp rows 16 i, columns 8 j, in the MMA's C layout.
    float acc[kPiecesM][kPiecesN][4];
#pragma unroll
    for (int i = 0; i < kPiecesM; ++i)
#pragma unroll
        for (int j = 0; j < kPiecesN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    const int tiles = block.kEnd > block.kBegin ? (block.kEnd - block.kBegin + kTileK - 1) / kTileK : 0;
    auto issue = [&](int stage) {
        aLoader.issue(params, block, tables, stages[stage].a);
        bLoader.issue(params, block, tables, stages[stage].b);
    };
    auto multiply = [&](int stageIndex) {
        const SharedStage<kTileM>& stage = stages[stageIndex];
        SplitTf32 b[kPiecesN][2];
#pragma unroll
        for (int j = 0; j < kPiecesN; ++j) {
            b[j][0] = splitTf32(stage.b[fragmentK][colBase + 8 * j]);
            b[j][1] = splitTf32(stage.b[fragmentK + 4][colBase + 8 * j]);
        }
#pragma unroll
        for (int i = 0; i < kPiecesM; ++i) {
            const int row = rowBase + 16 * i;
            const SplitTf32 a[4] = {splitTf32(stage.a[row][fragmentK]),
                                    splitTf32(stage.a[row + 8][fragmentK]),
                                    splitTf32(stage.a[row][fragmentK + 4]),
                                    splitTf32(stage.a[row + 8][fragmentK + 4])};
#pragma unroll
            for (int j = 0; j < kPiecesN; ++j) multiplyAccumulate3xTf32(a, b[j], acc[i][j]);
        }
    };
    pipelineTiles<kStages>(tiles, issue, multiply);

    // A lane holds two columns of rows r and r + 8 of each piece; lanes 2q and 2q + 1 swap
    // halves so that the even lane stores four columns of row r and the odd lane of row r + 8.
    const bool oddLane = lane % 2 == 1;
    const int quadColumn = (fragmentK / 2) * 4;
#pragma unroll
    for (int i = 0; i < kPiecesM; ++i)
#pragma unroll
        for (int j = 0; j < kPiecesN; ++j) {
            const float* c = acc[i][j];
            const float give0 = oddLane ? c[0] : c[2], give1 = oddLane ? c[1] : c[3];
            const float take0 = __shfl_xor_sync(0xffffffffu, give0, 1);
            const float take1 = __shfl_xor_sync(0xffffffffu, give1, 1);
            const float quad[4] = {oddLane ? take0 : c[0], oddLane ? take1 : c[1],
                                   oddLane ? c[2] : take0, oddLane ? c[3] : take1};
            const int m = block.m0 + rowBase + 16 * i + (oddLane ? 8 : 0);
            const int n = block.n0 + (warp % kWarpsN) * kWarpTileN + 8 * j + quadColumn;
            Problem::storeQuad(params, block, m, n, quad);
        }
}

}  // namespace cnnstudio::kernels::gemm
