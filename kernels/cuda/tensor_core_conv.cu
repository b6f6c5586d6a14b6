// 2-D convolution (cross-correlation, as PyTorch's conv2d) of bf16 channels-last activations on
// the bf16 tensor cores, ungrouped, any stride and padding:
//   x (N, H, W, C) bf16, w (K, C, R, S) fp32 master weights, bias (K) fp32, y (N, P, Q, K) bf16
//   forward          y[n][p][q][k] = bias[k] + sum_{r,s,c} x[n][p*sh-ph+r][q*sw-pw+s][c] * w[k][c][r][s]
//   backward data    dx[n][h][w][c] = sum over every (k, r, s, p, q) of the forward line that
//                      read x[n][h][w][c], of dy[n][p][q][k] * w[k][c][r][s]
//   backward filter  dw[k][c][r][s] = sum_{n,p,q} dy[n][p][q][k] * x[n][p*sh-ph+r][q*sw-pw+s][c]
//                    dbias[k] = sum_{n,p,q} dy[n][p][q][k]
//
// All three are implicit GEMMs on the bf16 GEMM core (gemm_bf16.cuh: m16n8k16 MMAs, fp32
// accumulators), with k of a GEMM row running over (r, s, c), c fastest, so that eight
// consecutive k are one 16-byte vector of a channels-last pixel:
//   forward          M = N*P*Q pixels, N = K, K = R*S*C
//                    A = im2col(x), rows gathered on the fly (K-major tile: a[pixel][k])
//                    B = w rounded to bf16 as (K, R, S, C) in the workspace (K-major: b[k'][k])
//   backward data    the same kernel: dx is the forward convolution of dy with the weights as
//                    bf16 (C, R, S, K) flipped in R and S, stride 1, padding R-1-ph, and dy
//                    "dilated" by the forward stride (taps between dy positions read zero).
//                    M = N*H*W, N = C, K = R*S*K.
//   backward filter  M = K, N = R*S*C, K = N*P*Q pixels
//                    A = dy^T (dy's rows are pixels: MN-major tile a[pixel][k], ldmatrix.trans)
//                    B = im2col(x) (rows are pixels too: MN-major b[pixel][(r, s, c)])
//                    always written as fp32 partials (splits, K, R*S*C) to the workspace; a
//                    second kernel adds the splits in order and writes dw in (K, C, R, S)
// Split-K: the filter gradient's few output tiles are always split along K (pixels) into as
// many parts as keep the grid within one wave of resident blocks. The forward-type GEMMs
// split only their "tail": the tiles beyond the last whole wave, cut along K so that they fill
// one more wave instead of leaving most of the GPU idle for a whole tile's time (see
// planConvGemm). Partial sums go to the workspace in fp32 and a fixed-order reduce kernel adds
// them (deterministic). dbias is channelSumsChannelsLast (layout.h).
//
// Tiles: 128 x 128 (8 warps of 64 x 32) by default; 256 x 64 for convolutions with at most 64
// output channels (N <= 64: the wide tile would idle half its columns); 64 x 128 (4 warps) for
// filter gradients of at most 64 filters. Four cp.async stages; two 256-thread blocks (four
// 128-thread blocks) per SM, 128 registers per thread.
//
// Built for: 3x3 stride 1 pad 1, 64-256 channels, 48x48 to 12x12 maps, batch 256 (fer-cnn), on
// an H200. TFLOP/s forward / backward data / backward filter, weight staging and reduce kernels
// included (conv_bench --backend cuda --precision bf16 --batch 256, mean of two rounds,
// docs/logs/2026-12-03-conv-bf16/), in brackets the same before the tail split (whole tiles
// only, 2026-12-02), and cuDNN's (cudnn bf16) in the same command:
//   48x48  64->64   134/134/183 (133/139/169), cuDNN 379/391/371
//   24x24  64->128  149/132/219 (152/114/184), cuDNN 383/322/346
//   24x24 128->128  184/184/266 (177/183/238), cuDNN 539/555/480
//   12x12 128->256  166/176/223 (146/122/207), cuDNN 418/406/349
//   12x12 256->256  196/199/252 (159/163/241), cuDNN 521/522/445
// cuDNN's Hopper kernels are warpgroup MMAs (wgmma); these are mma.sync, a warp at a time.
#include "cuda/tensor_core_conv.h"

#include <cstdint>

#include "cuda/conv_windows.cuh"
#include "cuda/gemm_bf16.cuh"
#include "cuda/layout.h"
#include "runtime/cuda_check.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

using gemm_bf16::kChunk;
using gemm_bf16::kTileK;
using gemm_bf16::Major;
using gemm_bf16::OperandTile;

// ---- forward and backward data: y = conv(x, w), rows of the GEMM are output pixels --------

struct ConvParams {
    const __nv_bfloat16* input;    // (batch, inHeight, inWidth, inChannels)
    const __nv_bfloat16* weights;  // staged (outChannels, kernelHeight, kernelWidth, inChannels)
    const float* bias;             // (outChannels) or null
    __nv_bfloat16* output;         // (batch, outHeight, outWidth, outChannels)
    float* partials;               // (tailSplits, gemmM - tailRow0, outChannels): the tail's
    int inHeight, inWidth, inChannels;
    int outHeight, outWidth, outChannels, outPlane;
    int kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
    int dilationHeight, dilationWidth;  // input dilation: 1 forward, the stride for backward data
    int gemmM, gemmK;  // batch * outPlane, kernelHeight * kernelWidth * inChannels
    int kPerSplit;     // of a tail split: a multiple of kTileK
    int tilesN;
    // Tiles [0, fullTiles) are computed whole by one block each; the last tailTiles tiles
    // (whole rows of tiles, GEMM rows from tailRow0 on) by tailSplits blocks each (see
    // planConvGemm).
    int fullTiles, tailTiles, tailRow0;
    bool pairStores;   // outChannels even: C[m][n..n+1] is one aligned bf16 pair (float2)
};

// blockIdx.x enumerates the (N tile, M tile) pairs with the N tiles varying fastest, so that the
// blocks that gather the same pixels (the expensive operand) run together and share them
// through L2. Blocks from fullTiles on are the tail's: (split, tail tile), the tail tile
// varying fastest; a split owns k in [kBegin, kEnd). split is -1 for a whole tile.
struct ConvBlock {
    int m0, n0, kBegin, kEnd, split;
    __device__ ConvBlock(const ConvParams& p, int tileM, int tileN) {
        int tile = int(blockIdx.x);
        split = -1;
        kBegin = 0;
        kEnd = p.gemmK;
        if (tile >= p.fullTiles) {
            const int part = tile - p.fullTiles;
            split = part / p.tailTiles;
            tile = p.fullTiles + (part - split * p.tailTiles);
            kBegin = split * p.kPerSplit;
            kEnd = min(p.gemmK, kBegin + p.kPerSplit);
        }
        n0 = tile % p.tilesN * tileN;
        m0 = tile / p.tilesN * tileM;
    }
};

struct ImplicitConv {
    using Params = ConvParams;
    using Block = ConvBlock;
    static constexpr Major kMajorA = Major::K;
    static constexpr Major kMajorB = Major::K;

    // The block's A rows m = (image, outRow, outColumn), decoded once per block:
    // {offset of the image in the input, packed window origin (outRow*sh-ph, outColumn*sw-pw)}.
    template <int TileM, int TileN>
    struct Tables {
        int2 pixel[TileM];
    };

    template <int TileM, int TileN>
    __device__ static void fillTables(const Params& p, const Block& b, int thread, int threads,
                                      Tables<TileM, TileN>& tables) {
        for (int row = thread; row < TileM; row += threads) {
            const int m = b.m0 + row;
            int imageOffset = 0, origin = packPair(kOutside, kOutside);
            if (m < p.gemmM) {
                const int image = m / p.outPlane, pixel = m - image * p.outPlane;
                const int outRow = pixel / p.outWidth, outColumn = pixel - outRow * p.outWidth;
                imageOffset = image * p.inHeight * p.inWidth * p.inChannels;
                origin = packPair(outRow * p.strideHeight - p.padHeight,
                                  outColumn * p.strideWidth - p.padWidth);
            }
            tables.pixel[row] = int2{imageOffset, origin};
        }
    }

    // A = im2col(x): A[m = pixel][k = (r, s, c)]. Four threads cover a row's 32 k (four 16-byte
    // chunks: consecutive channels of one tap, as inChannels % 8 == 0), so a warp reads eight
    // neighbouring pixels' 64 bytes each; a thread keeps its chunk's (r, s, channel) and steps
    // it by one tile per copy instead of dividing again.
    template <int TileM, int Threads>
    struct ALoader {
        static constexpr int kChunksPerRow = kTileK / kChunk;       // 4
        static constexpr int kRowStep = Threads / kChunksPerRow;
        static constexpr int kRows = TileM / kRowStep;
        static_assert(TileM % kRowStep == 0, "whole rows per thread");
        int firstRow, kOffset, kNext, r, s, channel;  // kNext = (r, s, channel): this thread's next k

        __device__ ALoader(const Params& p, const Block& b, int thread)
            : firstRow(thread / kChunksPerRow), kOffset((thread % kChunksPerRow) * kChunk),
              kNext(b.kBegin + kOffset) {
            const int tap = kNext / p.inChannels;
            channel = kNext - tap * p.inChannels;
            r = tap / p.kernelWidth;
            s = tap - r * p.kernelWidth;
        }
        template <int TileN>
        __device__ void issue(const Params& p, const Block& b, const Tables<TileM, TileN>& tables,
                              OperandTile<TileM, Major::K>& tile) {
            // gemmK and kEnd are multiples of 8: a chunk is wholly inside or outside.
            const bool kInside = kNext < b.kEnd;
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
                const int row = firstRow + kRowStep * i;
                const int2 pixel = tables.pixel[row];
                int h = 0, w = 0;
                const bool valid =
                    kInside && inputIndex(pairHigh(pixel.y) + r, p.dilationHeight, p.inHeight, h) &&
                    inputIndex(pairLow(pixel.y) + s, p.dilationWidth, p.inWidth, w);
                const __nv_bfloat16* source =
                    valid ? p.input + (pixel.x + (h * p.inWidth + w) * p.inChannels + channel) : p.input;
                copyAsync16BytesOrZero(&tile.v[row][kOffset], source, valid);
            }
            kNext += kTileK;
            channel += kTileK;
            while (channel >= p.inChannels) {
                channel -= p.inChannels;
                if (++s == p.kernelWidth) {
                    s = 0;
                    ++r;
                }
            }
        }
    };

    // B = the staged weights: B[k][n] = weights[n][k], rows of gemmK contiguous bf16. Four
    // threads per output channel, one 16-byte chunk each.
    template <int TileN, int Threads>
    struct BLoader {
        static constexpr int kChunksPerRow = kTileK / kChunk;  // 4
        static constexpr int kRowStep = Threads / kChunksPerRow;
        static constexpr int kRows = TileN / kRowStep;
        static_assert(TileN % kRowStep == 0, "whole rows per thread");
        int firstRow, kOffset, kNext;

        __device__ BLoader(const Params&, const Block& b, int thread)
            : firstRow(thread / kChunksPerRow), kOffset((thread % kChunksPerRow) * kChunk),
              kNext(b.kBegin + kOffset) {}
        template <int TileM>
        __device__ void issue(const Params& p, const Block& b, const Tables<TileM, TileN>&,
                              OperandTile<TileN, Major::K>& tile) {
            const bool kInside = kNext < b.kEnd;
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
                const int row = firstRow + kRowStep * i;
                const int n = b.n0 + row;
                const bool valid = kInside && n < p.outChannels;
                const __nv_bfloat16* source = valid ? p.weights + (n * p.gemmK + kNext) : p.weights;
                copyAsync16BytesOrZero(&tile.v[row][kOffset], source, valid);
            }
            kNext += kTileK;
        }
    };

    // C[m][n], C[m][n + 1] -> y[pixel m][channels n, n + 1] (+ bias, rounded to bf16), or to the
    // tail split's fp32 partials.
    __device__ static void storePair(const Params& p, const Block& b, int m, int n, float v0,
                                     float v1) {
        if (m >= p.gemmM || n >= p.outChannels) return;
        const bool second = n + 1 < p.outChannels;
        const int index = m * p.outChannels + n;
        if (b.split >= 0) {
            float* out = p.partials +
                         (std::int64_t(b.split) * (p.gemmM - p.tailRow0) + (m - p.tailRow0)) *
                             p.outChannels +
                         n;
            if (p.pairStores) {
                *reinterpret_cast<float2*>(out) = float2{v0, v1};
            } else {
                out[0] = v0;
                if (second) out[1] = v1;
            }
            return;
        }
        if (p.bias) {
            v0 += __ldg(p.bias + n);
            if (second) v1 += __ldg(p.bias + n + 1);
        }
        if (p.pairStores) {
            *reinterpret_cast<__nv_bfloat162*>(p.output + index) = __floats2bfloat162_rn(v0, v1);
        } else {
            p.output[index] = __float2bfloat16_rn(v0);
            if (second) p.output[index + 1] = __float2bfloat16_rn(v1);
        }
    }
};

// ---- backward filter: dw = dy^T * im2col(x) ------------------------------------------------

struct FilterGradParams {
    const __nv_bfloat16* input;       // x (batch, inHeight, inWidth, inChannels)
    const __nv_bfloat16* outputGrad;  // dy (batch, outHeight, outWidth, outChannels)
    float* partials;                  // (splits, outChannels, gemmN), columns (r, s, c)
    int inHeight, inWidth, inChannels;
    int outHeight, outWidth, outChannels, outPlane;
    int kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
    int gemmN, gemmK;  // kernelHeight * kernelWidth * inChannels, batch * outPlane
    int kPerSplit;     // a multiple of kTileK
    int tilesM;
    // k = image * outPlane + outRow * outWidth + outColumn; one tile further is
    // kTileK = tileStepRows * outWidth + tileStepColumns pixels further.
    int tileStepRows, tileStepColumns;
};

// blockIdx.x enumerates the (M tile, N tile) pairs; every block of one split reads the same
// pixels of dy and x, so the split (blockIdx.y) varies slowest and they share them through L2.
struct FilterGradBlock {
    int m0, n0, kBegin, kEnd, split;
    __device__ FilterGradBlock(const FilterGradParams& p, int tileM, int tileN) {
        const int tile = int(blockIdx.x);
        m0 = tile % p.tilesM * tileM;
        n0 = tile / p.tilesM * tileN;
        split = int(blockIdx.y);
        kBegin = split * p.kPerSplit;
        kEnd = min(p.gemmK, kBegin + p.kPerSplit);
    }
};

struct FilterGrad {
    using Params = FilterGradParams;
    using Block = FilterGradBlock;
    static constexpr Major kMajorA = Major::MN;
    static constexpr Major kMajorB = Major::MN;

    // The block's B columns n = (r, s, c), one entry per 8-column chunk (one tap, eight
    // channels): {(r * inWidth + s) * inChannels + c, packed (r, s)}; kOutside beyond N.
    template <int TileM, int TileN>
    struct Tables {
        int2 chunk[TileN / kChunk];
    };

    template <int TileM, int TileN>
    __device__ static void fillTables(const Params& p, const Block& b, int thread, int threads,
                                      Tables<TileM, TileN>& tables) {
        for (int chunk = thread; chunk < TileN / kChunk; chunk += threads) {
            const int n = b.n0 + chunk * kChunk;
            int2 entry{0, packPair(kOutside, kOutside)};
            if (n < p.gemmN) {
                const int tap = n / p.inChannels, channel = n - tap * p.inChannels;
                const int r = tap / p.kernelWidth, s = tap - r * p.kernelWidth;
                entry = int2{(r * p.inWidth + s) * p.inChannels + channel, packPair(r, s)};
            }
            tables.chunk[chunk] = entry;
        }
    }

    // A = dy^T: A[m = output channel][k = pixel], stored a[pixel][m]. A tile row is TileM
    // consecutive channels of one dy pixel (contiguous); each thread copies one 16-byte chunk
    // of two rows.
    template <int TileM, int Threads>
    struct ALoader {
        static constexpr int kChunksPerRow = TileM / kChunk;
        static constexpr int kRowStep = Threads / kChunksPerRow;
        static constexpr int kRows = kTileK / kRowStep;
        static_assert(kTileK % kRowStep == 0, "whole rows per thread");
        int firstRow, mOffset, kNext;  // kNext: the pixel of this thread's first row
        bool mInside;

        __device__ ALoader(const Params& p, const Block& b, int thread)
            : firstRow(thread / kChunksPerRow), mOffset((thread % kChunksPerRow) * kChunk),
              kNext(b.kBegin + firstRow), mInside(b.m0 + mOffset < p.outChannels) {}
        template <int TileN>
        __device__ void issue(const Params& p, const Block& b, const Tables<TileM, TileN>&,
                              OperandTile<TileM, Major::MN>& tile) {
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
                const int pixel = kNext + kRowStep * i;
                const bool valid = mInside && pixel < b.kEnd;
                const __nv_bfloat16* source =
                    valid ? p.outputGrad + (pixel * p.outChannels + b.m0 + mOffset) : p.outputGrad;
                copyAsync16BytesOrZero(&tile.v[firstRow + kRowStep * i][mOffset], source, valid);
            }
            kNext += kTileK;
        }
    };

    // B = im2col(x): B[k = pixel (image, p, q)][n = (r, s, c)], stored b[pixel][n]. Each
    // thread owns one pixel row of the tile and every kThreadsPerRow-th chunk of it (a warp
    // reads 128 contiguous bytes per tap when inChannels >= 64), and steps its pixel's
    // (image, outRow, outColumn) by one tile per copy.
    template <int TileN, int Threads>
    struct BLoader {
        static constexpr int kThreadsPerRow = Threads / kTileK;
        static constexpr int kChunks = TileN / kChunk / kThreadsPerRow;
        static_assert(Threads % kTileK == 0 && (TileN / kChunk) % kThreadsPerRow == 0,
                      "whole chunks per thread");
        int row, firstChunk, kNext, image, outRow, outColumn;  // output pixel kNext

        __device__ BLoader(const Params& p, const Block& b, int thread)
            : row(thread / kThreadsPerRow), firstChunk(thread % kThreadsPerRow), kNext(b.kBegin + row) {
            image = kNext / p.outPlane;
            const int pixel = kNext - image * p.outPlane;
            outRow = pixel / p.outWidth;
            outColumn = pixel - outRow * p.outWidth;
        }
        template <int TileM>
        __device__ void issue(const Params& p, const Block& b, const Tables<TileM, TileN>& tables,
                              OperandTile<TileN, Major::MN>& tile) {
            const bool rowInside = kNext < b.kEnd;
            const int originH = outRow * p.strideHeight - p.padHeight;
            const int originW = outColumn * p.strideWidth - p.padWidth;
            const int base = ((image * p.inHeight + originH) * p.inWidth + originW) * p.inChannels;
#pragma unroll
            for (int q = 0; q < kChunks; ++q) {
                const int chunk = firstChunk + kThreadsPerRow * q;
                const int2 entry = tables.chunk[chunk];
                const int h = originH + pairHigh(entry.y), w = originW + pairLow(entry.y);
                const bool valid = rowInside && unsigned(h) < unsigned(p.inHeight) &&
                                   unsigned(w) < unsigned(p.inWidth);
                const __nv_bfloat16* source = valid ? p.input + (base + entry.x) : p.input;
                copyAsync16BytesOrZero(&tile.v[row][chunk * kChunk], source, valid);
            }
            kNext += kTileK;
            outColumn += p.tileStepColumns;
            outRow += p.tileStepRows;
            if (outColumn >= p.outWidth) {
                outColumn -= p.outWidth;
                ++outRow;
            }
            while (outRow >= p.outHeight) {
                outRow -= p.outHeight;
                ++image;
            }
        }
    };

    // C[m][n..n+1] -> partials[split][m][n..n+1] (gemmN is a multiple of 8).
    __device__ static void storePair(const Params& p, const Block& b, int m, int n, float v0,
                                     float v1) {
        if (m >= p.outChannels || n >= p.gemmN) return;
        float* out = p.partials + (std::int64_t(b.split) * p.outChannels + m) * p.gemmN + n;
        *reinterpret_cast<float2*>(out) = float2{v0, v1};
    }
};

// ---- helpers ---------------------------------------------------------------------------------

// staged[c][R-1-r][S-1-s][k] = bf16(w[k][c][r][s]): the backward-data convolution's weights
// (input and output channels swapped, taps flipped), channels-last in its input channels k.
__global__ void stageFlippedWeightsKernel(const float* __restrict__ weights, int outChannels,
                                          int inChannels, int taps,
                                          __nv_bfloat16* __restrict__ staged) {
    const int count = outChannels * inChannels * taps;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        // i indexes staged: (c, flipped tap, k)
        const int k = i % outChannels;
        const int flippedTap = (i / outChannels) % taps;
        const int c = i / (outChannels * taps);
        staged[i] = __float2bfloat16_rn(
            __ldg(weights + (k * inChannels + c) * taps + (taps - 1 - flippedTap)));
    }
}

// output[i] = bf16(bias[i % channels] + sum_{s < splits} partials[s * count + i]), adding the
// splits in order so the result does not depend on scheduling (channels-last: i % channels is
// the channel).
__global__ void sumSplitsToBf16Kernel(const float* __restrict__ partials, int splits, int count,
                                      const float* __restrict__ bias, int channels,
                                      __nv_bfloat16* __restrict__ output) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        float total = bias ? __ldg(bias + i % channels) : 0.0f;
        for (int s = 0; s < splits; ++s) total += __ldg(partials + std::int64_t(s) * count + i);
        output[i] = __float2bfloat16_rn(total);
    }
}

// dw[k][c][tap] = sum_{s < splits} partials[s][k][tap * inChannels + c], in split order. The
// threads walk the partials' order (coalesced reads of every split) and scatter each result once.
__global__ void sumSplitsToKcrsKernel(const float* __restrict__ partials, int splits, int count,
                                      int inChannels, int taps, float* __restrict__ weightGrad) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        float total = 0.0f;
        for (int s = 0; s < splits; ++s) total += __ldg(partials + std::int64_t(s) * count + i);
        const int columns = taps * inChannels;
        const int k = i / columns, column = i - k * columns;
        const int tap = column / inChannels, c = column - tap * inChannels;
        weightGrad[(k * inChannels + c) * taps + tap] = total;
    }
}

// ---- planning ----------------------------------------------------------------------------

using WideTiles = gemm_bf16::TileConfig<128, 128, 2>;   // 8 warps
using TallTiles = gemm_bf16::TileConfig<256, 64, 2>;    // 8 warps, N <= 64
using NarrowTiles = gemm_bf16::TileConfig<64, 128, 4>;  // 4 warps, filter gradients, M <= 64

enum class TileShape { Wide, Tall, Narrow };

constexpr int kMinKTilesPerSplit = 8;      // filter gradient splits
constexpr int kMinKTilesPerTailSplit = 4;  // forward tail splits

struct GemmPlan {
    TileShape shape;
    int tileM, tileN, blocksPerSm;
    int tilesM, tilesN;
    std::int64_t slots;  // blocks resident at once on the whole GPU
    int kTiles;
};

GemmPlan planTiles(TileShape shape, std::int64_t gemmM, std::int64_t gemmN, std::int64_t gemmK,
                   int multiprocessors) {
    GemmPlan plan{};
    switch (shape) {
        case TileShape::Wide:
            plan = {shape, WideTiles::kTileM, WideTiles::kTileN, WideTiles::kMinBlocksPerSm};
            break;
        case TileShape::Tall:
            plan = {shape, TallTiles::kTileM, TallTiles::kTileN, TallTiles::kMinBlocksPerSm};
            break;
        case TileShape::Narrow:
            plan = {shape, NarrowTiles::kTileM, NarrowTiles::kTileN, NarrowTiles::kMinBlocksPerSm};
            break;
    }
    plan.tilesM = int((gemmM + plan.tileM - 1) / plan.tileM);
    plan.tilesN = int((gemmN + plan.tileN - 1) / plan.tileN);
    plan.slots = std::int64_t(multiprocessors > 0 ? multiprocessors : 1) * plan.blocksPerSm;
    plan.kTiles = int(gemmK > 0 ? (gemmK + kTileK - 1) / kTileK : 1);
    return plan;
}

std::size_t alignUp256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// Forward-type GEMM (forward, or backward data on the transposed geometry below). Its tiles
// rarely fill a whole number of waves of resident blocks (fer-cnn's 12x12 layers: 1.09 and 2.18
// waves), and a last wave of few tiles takes as long as a full one. So the tiles of the whole
// waves run as they are, and the rest (the "tail", rounded up to whole rows of tiles) is
// split along K into as many parts as fill one more wave: each tail block does 1/tailSplits
// of a tile's work, and a reduce kernel adds the tail's fp32 partials in split order (plus
// bias) into y. With fewer tiles than one wave everything is tail: plain split-K.
struct ConvGemm {
    ConvGeometry geometry;  // of the convolution the kernel computes
    int dilationHeight, dilationWidth;
    GemmPlan plan;
    int fullTiles, tailTiles, tailSplits, kPerSplit;
    std::int64_t gemmM, tailRow0, outputCount;
    std::size_t weightBytes, partialBytes;
};

ConvGemm planConvGemm(const ConvGeometry& g, int dilationHeight, int dilationWidth,
                      int multiprocessors) {
    ConvGemm c{};
    c.geometry = g;
    c.dilationHeight = dilationHeight;
    c.dilationWidth = dilationWidth;
    c.gemmM = std::int64_t(g.batch) * g.outHeight * g.outWidth;
    c.outputCount = c.gemmM * g.outChannels;
    const std::int64_t gemmK = std::int64_t(g.kernelHeight) * g.kernelWidth * g.inChannels;
    c.plan = planTiles(g.outChannels <= TallTiles::kTileN ? TileShape::Tall : TileShape::Wide,
                       c.gemmM, g.outChannels, gemmK, multiprocessors);
    const GemmPlan& plan = c.plan;
    const std::int64_t tiles = std::int64_t(plan.tilesM) * plan.tilesN;
    const std::int64_t lastWave = tiles % plan.slots;
    const std::int64_t tailTiles = (lastWave + plan.tilesN - 1) / plan.tilesN * plan.tilesN;
    std::int64_t splits = tailTiles > 0 ? plan.slots / tailTiles : 1;
    const std::int64_t byDepth = plan.kTiles / kMinKTilesPerTailSplit;
    if (splits > byDepth) splits = byDepth;
    c.fullTiles = int(tiles);
    c.tailTiles = 0;
    c.tailSplits = 1;
    c.kPerSplit = plan.kTiles * kTileK;
    if (splits >= 2) {
        const int tilesPerSplit = int((plan.kTiles + splits - 1) / splits);
        c.kPerSplit = tilesPerSplit * kTileK;
        c.tailSplits = (plan.kTiles + tilesPerSplit - 1) / tilesPerSplit;
        c.tailTiles = int(tailTiles);
        c.fullTiles = int(tiles - tailTiles);
    }
    c.tailRow0 = std::int64_t(c.fullTiles / plan.tilesN) * plan.tileM;
    c.weightBytes = alignUp256(std::size_t(g.outChannels) * gemmK * sizeof(__nv_bfloat16));
    c.partialBytes = c.tailTiles > 0 ? std::size_t(c.tailSplits) * (c.gemmM - c.tailRow0) *
                                           g.outChannels * sizeof(float)
                                     : 0;
    return c;
}

// Filter gradient: M*N is small and K (pixels) huge, so K is always split, into as many parts
// as keep the grid within one wave of resident blocks, each at least kMinKTilesPerSplit deep.
struct FilterGemm {
    GemmPlan plan;
    int splits, kPerSplit;
    std::int64_t gemmN, gemmK, pixels;
    std::size_t partialBytes, biasBytes;
};

FilterGemm planFilterGemm(const ConvGeometry& g, int multiprocessors) {
    FilterGemm f{};
    f.gemmN = std::int64_t(g.kernelHeight) * g.kernelWidth * g.inChannels;
    f.pixels = std::int64_t(g.batch) * g.outHeight * g.outWidth;
    f.gemmK = f.pixels;
    f.plan = planTiles(g.outChannels <= NarrowTiles::kTileM ? TileShape::Narrow : TileShape::Wide,
                       g.outChannels, f.gemmN, f.gemmK, multiprocessors);
    const std::int64_t tiles = std::int64_t(f.plan.tilesM) * f.plan.tilesN;
    std::int64_t splits = tiles > 0 ? f.plan.slots / tiles : 1;
    const std::int64_t byDepth = f.plan.kTiles / kMinKTilesPerSplit;
    if (splits > byDepth) splits = byDepth;
    if (splits > 65535) splits = 65535;
    if (splits < 1) splits = 1;
    const int tilesPerSplit = int((f.plan.kTiles + splits - 1) / splits);
    f.kPerSplit = tilesPerSplit * kTileK;
    f.splits = (f.plan.kTiles + tilesPerSplit - 1) / tilesPerSplit;
    f.partialBytes = alignUp256(std::size_t(f.splits) * g.outChannels * f.gemmN * sizeof(float));
    f.biasBytes = channelSumsChannelsLastWorkspaceBytes(f.pixels, g.outChannels);
    return f;
}

template <class Problem, class Config>
void launchGemm(const char* name, const typename Problem::Params& params, dim3 grid,
                cudaStream_t stream) {
    constexpr std::size_t bytes = gemm_bf16::sharedBytes<Problem, Config>();
    void (*kernel)(typename Problem::Params) = gemm_bf16::gemmBf16Kernel<Problem, Config>;
    CNNSTUDIO_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    launchKernelWithShared(name, kernel, grid, dim3(Config::kThreads), bytes, stream, params);
}

// Runs the planned forward-type GEMM of `input` with the staged `weights` into `output`
// (the tail through the partials and the reduce kernel).
void runConvGemm(const ConvGemm& c, const __nv_bfloat16* input, const __nv_bfloat16* weights,
                 const float* bias, __nv_bfloat16* output, float* partials, int multiprocessors,
                 cudaStream_t stream, const char* name) {
    const ConvGeometry& g = c.geometry;
    if (c.outputCount == 0) return;
    ConvParams p{};
    p.input = input;
    p.weights = weights;
    p.bias = bias;
    p.output = output;
    p.partials = c.tailTiles > 0 ? partials : nullptr;
    p.inHeight = g.inHeight, p.inWidth = g.inWidth, p.inChannels = g.inChannels;
    p.outHeight = g.outHeight, p.outWidth = g.outWidth, p.outChannels = g.outChannels;
    p.outPlane = g.outHeight * g.outWidth;
    p.kernelWidth = g.kernelWidth;
    p.strideHeight = g.strideHeight, p.strideWidth = g.strideWidth;
    p.padHeight = g.padHeight, p.padWidth = g.padWidth;
    p.dilationHeight = c.dilationHeight, p.dilationWidth = c.dilationWidth;
    p.gemmM = int(c.gemmM);
    p.gemmK = g.kernelHeight * g.kernelWidth * g.inChannels;
    p.kPerSplit = c.kPerSplit;
    p.tilesN = c.plan.tilesN;
    p.fullTiles = c.fullTiles;
    p.tailTiles = c.tailTiles;
    p.tailRow0 = int(c.tailRow0);
    p.pairStores = g.outChannels % 2 == 0;
    // Blocks <= tiles + one wave; tiles <= gemmM * gemmN, an output of at most 2^30 elements.
    const dim3 grid(unsigned(c.fullTiles) + unsigned(c.tailTiles) * unsigned(c.tailSplits));
    if (c.plan.shape == TileShape::Tall)
        launchGemm<ImplicitConv, TallTiles>(name, p, grid, stream);
    else
        launchGemm<ImplicitConv, WideTiles>(name, p, grid, stream);
    if (c.tailTiles > 0) {
        const std::int64_t tailCount = (c.gemmM - c.tailRow0) * g.outChannels;
        launchKernel("tensor-core conv: sum of the tail's split-K partials", sumSplitsToBf16Kernel,
                     gridStrideBlocks(std::size_t(tailCount), 256, multiprocessors), 256, stream,
                     static_cast<const float*>(partials), c.tailSplits, int(tailCount), bias,
                     g.outChannels, output + c.tailRow0 * g.outChannels);
    }
}

unsigned elementwiseBlocks(std::int64_t count, int multiprocessors) {
    return gridStrideBlocks(std::size_t(count), 256, multiprocessors);
}

}  // namespace

// ---- the entry points ------------------------------------------------------------------------

bool tensorCoreConvSupports(const ConvGeometry& g, ConvPass pass) {
    if (g.groups != 1) return false;
    for (int extent : {g.inHeight, g.inWidth, g.outHeight, g.outWidth, g.kernelHeight,
                       g.kernelWidth, g.padHeight, g.padWidth})
        if (extent > kMaxPackedExtent) return false;
    const bool channelsIn = g.inChannels % kChunk == 0, channelsOut = g.outChannels % kChunk == 0;
    switch (pass) {
        case ConvPass::Forward: return channelsIn;
        case ConvPass::BackwardData: return channelsOut;
        case ConvPass::BackwardFilter: return channelsIn && channelsOut;
    }
    return false;
}

std::size_t tensorCoreConvWorkspaceBytes(const ConvGeometry& g, ConvPass pass, int multiprocessors) {
    switch (pass) {
        case ConvPass::Forward: {
            const ConvGemm c = planConvGemm(g, 1, 1, multiprocessors);
            return c.weightBytes + c.partialBytes;
        }
        case ConvPass::BackwardData: {
            const ConvGemm c = planConvGemm(backwardDataGeometry(g), g.strideHeight,
                                            g.strideWidth, multiprocessors);
            return c.weightBytes + c.partialBytes;
        }
        case ConvPass::BackwardFilter: {
            const FilterGemm f = planFilterGemm(g, multiprocessors);
            return f.partialBytes + f.biasBytes;
        }
    }
    return 0;
}

void tensorCoreConvForward(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                           const float* bias, __nv_bfloat16* y, void* workspace,
                           int multiprocessors, cudaStream_t stream) {
    const ConvGemm c = planConvGemm(g, 1, 1, multiprocessors);
    char* scratch = static_cast<char*>(workspace);
    __nv_bfloat16* staged = reinterpret_cast<__nv_bfloat16*>(scratch);
    // (K, C, R*S) fp32 -> (K, R*S, C) bf16: each filter's (C, R*S) matrix transposed.
    transposeImages<float, __nv_bfloat16>(w, staged, g.outChannels, g.inChannels,
                                          g.kernelHeight * g.kernelWidth, stream);
    runConvGemm(c, x, staged, bias, y, reinterpret_cast<float*>(scratch + c.weightBytes),
                multiprocessors, stream, "tensor-core conv forward (implicit GEMM)");
}

void tensorCoreConvBackwardData(const ConvGeometry& g, const __nv_bfloat16* dy, const float* w,
                                __nv_bfloat16* dx, void* workspace, int multiprocessors,
                                cudaStream_t stream) {
    const ConvGemm c = planConvGemm(backwardDataGeometry(g), g.strideHeight, g.strideWidth,
                                    multiprocessors);
    char* scratch = static_cast<char*>(workspace);
    __nv_bfloat16* staged = reinterpret_cast<__nv_bfloat16*>(scratch);
    const std::int64_t weightCount = g.weightCount();
    if (weightCount > 0)
        launchKernel("tensor-core conv backward data: stage flipped weights",
                     stageFlippedWeightsKernel, elementwiseBlocks(weightCount, multiprocessors),
                     256, stream, w, g.outChannels, g.inChannels, g.kernelHeight * g.kernelWidth,
                     staged);
    runConvGemm(c, dy, staged, nullptr, dx, reinterpret_cast<float*>(scratch + c.weightBytes),
                multiprocessors, stream, "tensor-core conv backward data (implicit GEMM)");
}

void tensorCoreConvBackwardFilter(const ConvGeometry& g, const __nv_bfloat16* x,
                                  const __nv_bfloat16* dy, float* dw, float* dbias,
                                  void* workspace, int multiprocessors, cudaStream_t stream) {
    const FilterGemm f = planFilterGemm(g, multiprocessors);
    char* scratch = static_cast<char*>(workspace);
    float* partials = reinterpret_cast<float*>(scratch);
    const std::int64_t weightCount = g.weightCount();
    if (weightCount > 0) {
        FilterGradParams p{};
        p.input = x;
        p.outputGrad = dy;
        p.partials = partials;
        p.inHeight = g.inHeight, p.inWidth = g.inWidth, p.inChannels = g.inChannels;
        p.outHeight = g.outHeight, p.outWidth = g.outWidth, p.outChannels = g.outChannels;
        p.outPlane = g.outHeight * g.outWidth;
        p.kernelWidth = g.kernelWidth;
        p.strideHeight = g.strideHeight, p.strideWidth = g.strideWidth;
        p.padHeight = g.padHeight, p.padWidth = g.padWidth;
        p.gemmN = int(f.gemmN);
        p.gemmK = int(f.gemmK);
        p.kPerSplit = f.kPerSplit;
        p.tilesM = f.plan.tilesM;
        p.tileStepRows = g.outWidth > 0 ? kTileK / g.outWidth : 0;
        p.tileStepColumns = g.outWidth > 0 ? kTileK % g.outWidth : 0;
        // tilesM * tilesN <= M * N = the weights' count: the grid's x holds it.
        const dim3 grid(unsigned(f.plan.tilesM) * unsigned(f.plan.tilesN), unsigned(f.splits));
        if (f.plan.shape == TileShape::Narrow)
            launchGemm<FilterGrad, NarrowTiles>("tensor-core conv backward filter (implicit GEMM)",
                                                p, grid, stream);
        else
            launchGemm<FilterGrad, WideTiles>("tensor-core conv backward filter (implicit GEMM)",
                                              p, grid, stream);
        launchKernel("tensor-core conv backward filter: sum of split-K partials",
                     sumSplitsToKcrsKernel, elementwiseBlocks(weightCount, multiprocessors), 256,
                     stream, static_cast<const float*>(partials), f.splits, int(weightCount),
                     g.inChannels, g.kernelHeight * g.kernelWidth, dw);
    }
    if (dbias)
        channelSumsChannelsLast(dy, dbias, f.pixels, g.outChannels,
                                f.biasBytes > 0 ? scratch + f.partialBytes : nullptr, stream);
}

}  // namespace cnnstudio::kernels
