// The tiled GEMM core of the bf16 tensor-core convolutions (tensor_core_conv.cu):
// C (M x N, fp32 accumulators) = A (M x K) * B (K x N) with bf16 operands, on the bf16 tensor
// cores (mma.sync m16n8k16), never materialising A or B. The bf16 twin of gemm.cuh.
//
// A "problem" says where the operands live. It supplies
//   Params                          the kernel's parameter block
//   Block(params, tileM, tileN)     this thread block's tile: m0, n0, the k range
//                                   [kBegin, kEnd) (split-K, kBegin a multiple of kTileK) and
//                                   whatever else it needs
//   kMajorA, kMajorB                how its operand tiles are stored in shared memory (below)
//   Tables<TileM, TileN>, fillTables(...)   per-block lookup tables in shared memory (decoded
//                                   pixel coordinates of an implicit im2col), built once per
//                                   block so that the loaders keep few registers
//   ALoader<TileM, Threads>         copies this thread's share of an A tile (TileM x kTileK)
//   BLoader<TileN, Threads>         copies this thread's share of a B tile (kTileK x TileN)
//   storePair(params, block, m, n, v0, v1)   writes C[m][n] and C[m][n + 1] (n even)
// A loader's issue(params, block, tables, tile) starts the asynchronous 16-byte copies (eight
// bf16 along the tile's contiguous direction) of its next k tile into shared memory, zeros
// outside the matrix or the block's k range, and advances to the tile after.
//
// Shared tiles, one per operand and pipeline stage, bf16:
//   Major::K   rows of the M (or N) extent, kTileK = 32 contiguous k each: tile.v[mn][k]
//              (an operand whose global rows run along k: im2col of channels-last x, KRSC
//              weights). Rows padded to 40 bf16 = 80 bytes = five 16-byte bank groups, so the
//              eight rows one ldmatrix phase reads start in eight different groups (5 r mod 8).
//   Major::MN  32 rows of k, the M (or N) extent contiguous: tile.v[k][mn] (an operand whose
//              global rows run along m or n: dy^T and im2col(x)^T of the filter gradient).
//              Rows padded by 8 bf16 (16 bytes): 272 bytes for 128 columns, 144 for 64, both
//              an odd number of 16-byte groups, so eight consecutive rows hit eight groups.
// Fragments come out of shared memory with ldmatrix.x4 (four 8x8 b16 matrices; lanes 8i..8i+7
// give the row addresses of matrix i; afterwards lane l holds, in register i, row l/4, columns
// 2(l%4) and 2(l%4)+1 of matrix i, or with .trans the same of matrix i transposed). The
// m16n8k16 fragments (g = lane / 4, t = lane % 4) are
//   A a0..a3: (row g, k 2t..2t+1), (row g+8, k 2t..), (row g, k 2t+8..), (row g+8, k 2t+8..)
//   B b0, b1: (k 2t..2t+1, column g), (k 2t+8..2t+9, column g)
//   C c0..c3: (row g, columns 2t, 2t+1), (row g+8, columns 2t, 2t+1)
// so the four matrices an ldmatrix.x4 fetches are, for a 16 x 16 A piece at (m, k):
//   K-major  (rows m..m+7, k..k+7), (m+8.., k..), (m.., k+8..), (m+8.., k+8..)   plain
//   MN-major (k..k+7, m..m+7), (k.., m+8..), (k+8.., m..), (k+8.., m+8..)        .trans
// and, for two 8-column B pieces at (n, k) and (n + 8, k):
//   K-major  (rows n..n+7, k..k+7), (n.., k+8..), (n+8.., k..), (n+8.., k+8..)   plain
//   MN-major (k..k+7, n..n+7), (k+8.., n..), (k.., n+8..), (k+8.., n+8..)        .trans
// (an 8x8 matrix named (rows, columns) as stored; .trans hands lane l the elements
// (2(l%4), l/4) and (2(l%4)+1, l/4) of it, i.e. k = 2t, 2t+1 at m or n = g).
//
// Blocking: block tile TileM x TileN x 32 with 8 (or 4) warps, each a 64 x 32 warp tile of
// 4 x 4 m16n8k16 MMAs per 16 k (64 fp32 accumulators per thread). Global memory reaches
// shared memory through a four-stage cp.async pipeline: three tiles in flight while one is
// multiplied, one barrier per tile.
#pragma once

#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "runtime/async_copy.cuh"

namespace cnnstudio::kernels::gemm_bf16 {

constexpr int kTileK = 32;
constexpr int kStages = 4;
constexpr int kWarpTileM = 64;
constexpr int kWarpTileN = 32;
constexpr int kPiecesM = kWarpTileM / 16;  // m16n8k16 pieces of a warp tile
constexpr int kPiecesN = kWarpTileN / 8;
constexpr int kChunk = 8;  // bf16 per 16-byte copy

enum class Major { K, MN };

template <int TileM, int TileN, int MinBlocksPerSm>
struct TileConfig {
    static constexpr int kTileM = TileM;
    static constexpr int kTileN = TileN;
    static constexpr int kWarpsM = TileM / kWarpTileM;
    static constexpr int kWarpsN = TileN / kWarpTileN;
    static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
    // 65536 registers per SM: 128 per thread at 16 warps per SM.
    static constexpr int kMinBlocksPerSm = MinBlocksPerSm;
    static_assert(TileM % kWarpTileM == 0 && TileN % kWarpTileN == 0, "whole warp tiles");
};

template <int Extent, Major>
struct OperandTile;

template <int Extent>
struct OperandTile<Extent, Major::K> {
    static constexpr int kPitch = kTileK + 8;
    __nv_bfloat16 v[Extent][kPitch];  // v[m or n][k]
};

template <int Extent>
struct OperandTile<Extent, Major::MN> {
    static constexpr int kPitch = Extent + 8;
    __nv_bfloat16 v[kTileK][kPitch];  // v[k][m or n]
};

__device__ __forceinline__ void loadMatrices(unsigned (&r)[4], const __nv_bfloat16* rowAddress) {
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(rowAddress));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ void loadMatricesTransposed(unsigned (&r)[4], const __nv_bfloat16* rowAddress) {
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(rowAddress));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// The A fragment of the 16 x 16 piece at rows m.., k..; lane l addresses row l % 8 of matrix
// l / 8 in the order of the table above.
template <int Extent>
__device__ __forceinline__ void loadA(const OperandTile<Extent, Major::K>& tile, int m, int k,
                                      int lane, unsigned (&a)[4]) {
    loadMatrices(a, &tile.v[m + (lane & 15)][k + (lane >> 4) * 8]);
}
template <int Extent>
__device__ __forceinline__ void loadA(const OperandTile<Extent, Major::MN>& tile, int m, int k,
                                      int lane, unsigned (&a)[4]) {
    loadMatricesTransposed(a, &tile.v[k + (lane & 7) + (lane >> 4) * 8][m + ((lane >> 3) & 1) * 8]);
}

// The B fragments of the 8-column pieces at n and n + 8, k..k+15.
template <int Extent>
__device__ __forceinline__ void loadBPair(const OperandTile<Extent, Major::K>& tile, int n, int k,
                                          int lane, unsigned (&b0)[2], unsigned (&b1)[2]) {
    unsigned r[4];
    loadMatrices(r, &tile.v[n + (lane & 7) + (lane >> 4) * 8][k + ((lane >> 3) & 1) * 8]);
    b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];
}
template <int Extent>
__device__ __forceinline__ void loadBPair(const OperandTile<Extent, Major::MN>& tile, int n, int k,
                                          int lane, unsigned (&b0)[2], unsigned (&b1)[2]) {
    unsigned r[4];
    loadMatricesTransposed(r, &tile.v[k + (lane & 7) + ((lane >> 3) & 1) * 8][n + (lane >> 4) * 8]);
    b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];
}

// c (16 x 8, fp32) += a (16 x 16, bf16) * b (16 x 8, bf16): one tensor-core MMA.
__device__ __forceinline__ void mmaBf16(const unsigned (&a)[4], const unsigned (&b)[2], float (&c)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <class Problem, class Config>
struct SharedStage {
    OperandTile<Config::kTileM, Problem::kMajorA> a;
    OperandTile<Config::kTileN, Problem::kMajorB> b;
};

// Dynamic shared memory of gemmBf16Kernel<Problem, Config>: the stages, then the tables.
template <class Problem, class Config>
constexpr std::size_t sharedBytes() {
    return kStages * sizeof(SharedStage<Problem, Config>) +
           sizeof(typename Problem::template Tables<Config::kTileM, Config::kTileN>);
}

template <class Problem, class Config>
__global__ void __launch_bounds__(Config::kThreads, Config::kMinBlocksPerSm)
gemmBf16Kernel(const typename Problem::Params params) {
    constexpr int kTileM = Config::kTileM, kTileN = Config::kTileN;
    using Stage = SharedStage<Problem, Config>;
    using Tables = typename Problem::template Tables<kTileM, kTileN>;
    using ALoader = typename Problem::template ALoader<kTileM, Config::kThreads>;
    using BLoader = typename Problem::template BLoader<kTileN, Config::kThreads>;
    static_assert(sizeof(Stage) % 16 == 0, "stages keep 16-byte alignment");

    extern __shared__ __align__(16) unsigned char shared[];
    Stage* stages = reinterpret_cast<Stage*>(shared);
    Tables& tables = *reinterpret_cast<Tables*>(shared + kStages * sizeof(Stage));

    const int thread = threadIdx.x;
    const typename Problem::Block block(params, kTileM, kTileN);
    Problem::fillTables(params, block, thread, Config::kThreads, tables);
    __syncthreads();
    ALoader aLoader(params, block, thread);
    BLoader bLoader(params, block, thread);

    const int warp = thread / 32, lane = thread % 32;
    const int warpRow = (warp / Config::kWarpsN) * kWarpTileM;  // + 16 piece
    const int warpColumn = (warp % Config::kWarpsN) * kWarpTileN;  // + 8 piece

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
        const Stage& stage = stages[stageIndex];
#pragma unroll
        for (int k = 0; k < kTileK; k += 16) {
            unsigned a[kPiecesM][4], b[kPiecesN][2];
#pragma unroll
            for (int i = 0; i < kPiecesM; ++i) loadA(stage.a, warpRow + 16 * i, k, lane, a[i]);
#pragma unroll
            for (int j = 0; j < kPiecesN; j += 2)
                loadBPair(stage.b, warpColumn + 8 * j, k, lane, b[j], b[j + 1]);
#pragma unroll
            for (int i = 0; i < kPiecesM; ++i)
#pragma unroll
                for (int j = 0; j < kPiecesN; ++j) mmaBf16(a[i], b[j], acc[i][j]);
        }
    };
    pipelineTiles<kStages>(tiles, issue, multiply);

    // A lane holds columns 2t, 2t + 1 of rows g and g + 8 of each piece.
    const int row = block.m0 + warpRow + lane / 4;
    const int column = block.n0 + warpColumn + 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < kPiecesM; ++i)
#pragma unroll
        for (int j = 0; j < kPiecesN; ++j) {
            const float* c = acc[i][j];
            Problem::storePair(params, block, row + 16 * i, column + 8 * j, c[0], c[1]);
            Problem::storePair(params, block, row + 16 * i + 8, column + 8 * j, c[2], c[3]);
        }
}

}  // namespace cnnstudio::kernels::gemm_bf16
