// Direct convolutions of any geometry on bf16 channels-last activations (see
// direct_conv_channels_last.h for the ops and why they are not on the tensor cores).
//
// Forward and backward data are one gather: each element of out (N, outH, outW, outC) adds the
// terms of in (N, inH, inW, inC) that its taps reach. Forward: in = x, out = y, the taps of
// filter k are (c < C/G, r, s). Backward data: in = dy, out = dx, the taps of input channel c
// are (k of its group, r, s), and a tap reaches dy[p][q] only where p*sh = h+ph-r and
// q*sw = w+pw-s hold exactly (the forward line read backwards). A thread owns kTilePixels = 4
// consecutive output columns of one row and V output channels, so each weight it reads feeds
// 4 outputs, and consecutive threads take consecutive channels (coalesced reads and writes).
//   depthwise 3x3, stride 1 along the width: the block holds the weights of up to 1024
//     channels as [r][s][c] in shared memory (s mirrored for backward data). A thread takes
//     V = 8, 4 or 1 channels, loads the 6 input columns of each tap row once (16-byte vectors
//     when V = 8) and adds each into the outputs that read it (4.5 loads per output where a
//     tap-by-tap loop makes 9). Consecutive threads take the channel vectors of one pixel, then
//     the next tile of the row.
//   general: a block is (channel lanes, pixel lanes); a channel lane takes V = 4 output
//     channels of one group (or 1), whose weights the block holds as [tap][channel] in shared
//     memory, in chunks of taps where they pass 48 KiB. Each tap loads one input value per
//     pixel (the lanes of one group read the same address) and feeds V multiply-adds.
// Backward filter: the result is rows of K, row t = (c*R + r)*S + s for the taps and row
// C/G*R*S for dbias (a tap whose input is 1), added from partial sums over splits of the output
// pixels that depend on the geometry only, so the workspace size is known before the launch:
//   1. depthwise 3x3: a block is (channel lanes of V = 4 or 1 channels, tile lanes) over the
//      4-pixel tiles of one split; a thread keeps the 9 taps and dbias of its channels in
//      registers and, per tile, reads dy once and the 3 x 6 input vectors the taps reach once.
//      general: a block is (channel lanes, pixel lanes) over the pixels of one split for one
//      chunk of taps (9 for V = 4, 16 for V = 1); a pixel's dy vector is read once per chunk.
//      Then the pixel lanes are added in order (shuffles, then across warps)
//      -> partials[split][row][K]
//   2. 32 elements x 8 split lanes per block: each lane adds every eighth split, then the lanes
//      are added in order -> dw (KCRS) and dbias.
// Nothing is added by atomics, so results do not depend on scheduling. Tensors stay below 2^30
// elements (index_limits.h), so indices are 32-bit; only offsets between the workspace's
// splits are 64-bit.
//
// Built for mini-Xception's depthwise 3x3 convolutions (C = K = G = 32..256, 48x48 to 6x6
// maps, batch 128-256): a few multiply-adds per byte, so the depthwise kernels aim at reading
// each input and writing each output once from DRAM, the 9-fold reuse of inputs served from
// L1 and L2.
#include <algorithm>
#include <cstdint>

#include "cuda/activation_storage.cuh"
#include "cuda/direct_conv_channels_last.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kTilePixels = 4;        // consecutive output columns per thread
constexpr int kSharedFloats = 12288;  // 48 KiB: the most weights a general block holds at once
constexpr int kDepthwiseSide = 3;     // R = S of the depthwise kernels
constexpr int kDepthwiseTaps = kDepthwiseSide * kDepthwiseSide;
constexpr int kDepthwiseWindow = kTilePixels + kDepthwiseSide - 1;  // input columns of a tile
constexpr int kDepthwiseBlockChannels = 1024;  // per block: 36 KiB of weights
constexpr int kFilterBlocks = 512;  // partial-sum blocks wanted: ~4 per SM of an H200 (132)
constexpr int kMinTilesPerLane = 2;   // depthwise filter: least tiles a tile lane sums per split
constexpr int kMinPixelsPerLane = 8;  // general filter: the same in pixels
constexpr std::int64_t kMaxPartialFloats = std::int64_t(1) << 24;  // 64 MiB of workspace
constexpr int kFinishElements = 32;                        // per block of the finishing kernel
constexpr int kFinishLanes = kThreads / kFinishElements;   // 8 split lanes

// Taps of one block of the general filter kernel, per pass over its pixels: V * chunk
// accumulators per thread.
template <int V>
constexpr int kFilterTapChunk = V == 1 ? 16 : 9;

// Tap channel codes of the general filter kernel beyond the real taps.
constexpr int kBiasTap = -2;  // the dbias row: an input of 1
constexpr int kNoTap = -1;    // past the last row

// One direction of the gather: out (batch, outHeight, outWidth, outChannels) from
// in (batch, inHeight, inWidth, inChannels). Output channel o is in group o / groupOut, and its
// taps (j, r, s), j < groupIn, read input channel (o / groupOut) * groupIn + j.
//   forward        in = x, out = y, groupIn = C/G, groupOut = K/G
//   backward data  in = dy, out = dx, groupIn = K/G, groupOut = C/G
// Kernel, strides and padding are the forward convolution's.
struct DirectPass {
    int batch, inHeight, inWidth, inChannels;
    int outHeight, outWidth, outChannels;
    int groupIn, groupOut;
    int kernelHeight, kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
    int taps;  // groupIn * kernelHeight * kernelWidth: the terms of one output
};

DirectPass makePass(const ConvGeometry& g, bool backwardData) {
    DirectPass p{};
    p.batch = g.batch;
    const int groupInput = g.inChannels / g.groups, groupOutput = g.outChannels / g.groups;
    if (backwardData) {
        p.inHeight = g.outHeight, p.inWidth = g.outWidth, p.inChannels = g.outChannels;
        p.outHeight = g.inHeight, p.outWidth = g.inWidth, p.outChannels = g.inChannels;
        p.groupIn = groupOutput, p.groupOut = groupInput;
    } else {
        p.inHeight = g.inHeight, p.inWidth = g.inWidth, p.inChannels = g.inChannels;
        p.outHeight = g.outHeight, p.outWidth = g.outWidth, p.outChannels = g.outChannels;
        p.groupIn = groupInput, p.groupOut = groupOutput;
    }
    p.kernelHeight = g.kernelHeight, p.kernelWidth = g.kernelWidth;
    p.strideHeight = g.strideHeight, p.strideWidth = g.strideWidth;
    p.padHeight = g.padHeight, p.padWidth = g.padWidth;
    p.taps = p.groupIn * g.kernelHeight * g.kernelWidth;
    return p;
}

// The geometries of the depthwise kernels: one channel per group, 3x3, stride 1 along the width.
bool isDepthwise3x3(const ConvGeometry& g) {
    return g.groups == g.inChannels && g.groups == g.outChannels &&
           g.kernelHeight == kDepthwiseSide && g.kernelWidth == kDepthwiseSide &&
           g.strideWidth == 1;
}

__host__ __device__ __forceinline__ int tilesPerRow(const DirectPass& g) {
    return (g.outWidth + kTilePixels - 1) / kTilePixels;
}

// The tile a thread computes: output columns q0 .. q0 + kTilePixels - 1 of output row (n, p);
// row = n * outHeight + p.
struct Tile {
    int n, p, q0, row;
};

__device__ __forceinline__ Tile tileAt(const DirectPass& g, int tile, int rowTiles) {
    const int row = tile / rowTiles;
    return {row / g.outHeight, row % g.outHeight, (tile - row * rowTiles) * kTilePixels, row};
}

// An output pixel of the forward convolution (general filter kernel), advanced without dividing.
struct OutputPixel {
    int n, p, q;

    __device__ OutputPixel(const DirectPass& g, int pixel) {
        q = pixel % g.outWidth;
        const int row = pixel / g.outWidth;
        p = row % g.outHeight;
        n = row / g.outHeight;
    }
    // The pixel `step` further (step > 0).
    __device__ void advance(const DirectPass& g, int step) {
        q += step;
        while (q >= g.outWidth) {
            q -= g.outWidth;
            if (++p == g.outHeight) {
                p = 0;
                ++n;
            }
        }
    }
};

// The row of `in` that kernel row r reaches from output row p, or -1 where it reads zero.
// Backward data inverts the forward line's p*sh - ph + r = h for p.
template <bool BackwardData>
__device__ __forceinline__ int inputRow(const DirectPass& g, int p, int r) {
    if constexpr (BackwardData) {
        const int scaled = p + g.padHeight - r;  // = the dy row * sh where one is reached
        if (scaled < 0 || scaled % g.strideHeight != 0) return -1;
        const int row = scaled / g.strideHeight;
        return row < g.inHeight ? row : -1;
    } else {
        const int row = p * g.strideHeight - g.padHeight + r;
        return unsigned(row) < unsigned(g.inHeight) ? row : -1;
    }
}

// The columns of `in` that kernel column s reaches from output columns q0 .. q0 + 3, -1 where
// they read zero. Backward data steps the quotient and remainder of (q0 + px + pw - s) / sw
// along the tile instead of dividing per pixel (the quotient rounded down: the first may be
// negative).
template <bool BackwardData>
__device__ __forceinline__ void inputColumns(const DirectPass& g, int q0, int s,
                                             int (&columns)[kTilePixels]) {
    if constexpr (BackwardData) {
        const int scaled = q0 + g.padWidth - s;
        const int stride = g.strideWidth;
        int column = scaled >= 0 ? scaled / stride : -((stride - 1 - scaled) / stride);
        int remainder = scaled - column * stride;
#pragma unroll
        for (int px = 0; px < kTilePixels; ++px) {
            columns[px] = remainder == 0 && unsigned(column) < unsigned(g.inWidth) ? column : -1;
            if (++remainder == stride) {
                remainder = 0;
                ++column;
            }
        }
    } else {
#pragma unroll
        for (int px = 0; px < kTilePixels; ++px) {
            const int column = (q0 + px) * g.strideWidth - g.padWidth + s;
            columns[px] = unsigned(column) < unsigned(g.inWidth) ? column : -1;
        }
    }
}

// ---- forward and backward data -----------------------------------------------------------

// Depthwise 3x3 (C = K = G), stride 1 along the width. Forward (out = y):
//   y[n][p][q][c] = bias[c] + sum_{r,s} x[n][p*sh-ph+r][q-pw+s][c] * w[c][0][r][s]
// Backward data (out = dx) differentiates that line with respect to x:
//   dx[n][h][w][c] = sum_{r,s} dy[n][p][w+pw-s][c] * w[c][0][r][s] over the p with p*sh = h+ph-r
// A tile at q0 reads input columns colBase + j, j < kDepthwiseWindow; column j feeds output
// px = j - s' with s' = s forward (colBase = q0 - pw) and s' = 2 - s backward (colBase =
// q0 + pw - 2), so the weights are kept at [r][s'] and the loops are the same.
// blockIdx.x: a block of kDepthwiseBlockChannels channels; blockIdx.y strides over the
// (tile, channel vector) pairs, channel vectors fastest.
template <bool BackwardData, int V>
__global__ void __launch_bounds__(kThreads)
depthwise3x3Kernel(DirectPass g, const __nv_bfloat16* __restrict__ in,  // (N, inH, inW, C)
                   const float* __restrict__ w,                         // (C, 1, 3, 3)
                   const float* __restrict__ bias,                      // (C) or null
                   __nv_bfloat16* __restrict__ out) {                   // (N, outH, outW, C)
    extern __shared__ float4 sharedMemory[];
    float* weights = reinterpret_cast<float*>(sharedMemory);  // [r][s'][channel of the block]
    const int channel0 = int(blockIdx.x) * kDepthwiseBlockChannels;
    const int channels = min(kDepthwiseBlockChannels, g.outChannels - channel0);
    for (int i = int(threadIdx.x); i < channels * kDepthwiseTaps; i += kThreads) {
        const int c = i / kDepthwiseTaps, t = i - c * kDepthwiseTaps;
        const int r = t / kDepthwiseSide, s = t - r * kDepthwiseSide;
        const int mirrored = BackwardData ? kDepthwiseSide - 1 - s : s;
        weights[(r * kDepthwiseSide + mirrored) * channels + c] =
            __ldg(w + channel0 * kDepthwiseTaps + i);
    }
    __syncthreads();
    const int vectors = channels / V;
    const int rowTiles = tilesPerRow(g);
    const int count = g.batch * g.outHeight * rowTiles * vectors;
    for (int i = int(blockIdx.y * blockDim.x + threadIdx.x); i < count;
         i += int(gridDim.y * blockDim.x)) {
        const int tile = i / vectors, c = (i - tile * vectors) * V;
        const Tile at = tileAt(g, tile, rowTiles);
        const int channel = channel0 + c;
        float acc[kTilePixels][V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const float start = !BackwardData && bias != nullptr ? __ldg(bias + channel + j) : 0.0f;
#pragma unroll
            for (int px = 0; px < kTilePixels; ++px) acc[px][j] = start;
        }
        const int colBase =
            BackwardData ? at.q0 + g.padWidth - (kDepthwiseSide - 1) : at.q0 - g.padWidth;
#pragma unroll
        for (int r = 0; r < kDepthwiseSide; ++r) {
            const int row = inputRow<BackwardData>(g, at.p, r);
            if (row < 0) continue;  // zeros: nothing to add
            const __nv_bfloat16* inRow =
                in + (at.n * g.inHeight + row) * g.inWidth * g.inChannels + channel;
            Packed<__nv_bfloat16, V> window[kDepthwiseWindow];
#pragma unroll
            for (int j = 0; j < kDepthwiseWindow; ++j) {
                const int column = colBase + j;
                window[j] = unsigned(column) < unsigned(g.inWidth)
                                ? Packed<__nv_bfloat16, V>::load(inRow + column * g.inChannels)
                                : Packed<__nv_bfloat16, V>{};
            }
            float tapWeights[kDepthwiseSide][V];
#pragma unroll
            for (int s = 0; s < kDepthwiseSide; ++s)
                loadFloats<V>(weights + (r * kDepthwiseSide + s) * channels + c, tapWeights[s]);
#pragma unroll
            for (int j = 0; j < kDepthwiseWindow; ++j) {
                float value[V];
#pragma unroll
                for (int v = 0; v < V; ++v) value[v] = window[j].get(v);
#pragma unroll
                for (int s = 0; s < kDepthwiseSide; ++s) {
                    const int px = j - s;
                    if (px < 0 || px >= kTilePixels) continue;
#pragma unroll
                    for (int v = 0; v < V; ++v)
                        acc[px][v] = fmaf(value[v], tapWeights[s][v], acc[px][v]);
                }
            }
        }
#pragma unroll
        for (int px = 0; px < kTilePixels; ++px)
            if (at.q0 + px < g.outWidth)
                storeBf16<V>(acc[px],
                             out + (at.row * g.outWidth + at.q0 + px) * g.outChannels + channel);
    }
}

// weights[tc * blockChannels + i] = the weight of tap t0 + tc of output channel channel0 + i,
// for tc < t1 - t0 (zero past the last channel). Forward: w[o][t], t = (c*R + r)*S + s.
// Backward data: tap t = (j*R + r)*S + s of input channel o is w[k][o % (C/G)][r][s] with
// k = (o / (C/G)) * (K/G) + j.
template <bool BackwardData>
__device__ void loadWeightChunk(const DirectPass& g, const float* __restrict__ w, int channel0,
                                int blockChannels, int t0, int t1, float* weights) {
    const int kernelTaps = g.kernelHeight * g.kernelWidth;
    const int count = (t1 - t0) * blockChannels;
    for (int i = int(threadIdx.x); i < count; i += kThreads) {
        const int tc = i / blockChannels, o = channel0 + (i - tc * blockChannels);
        const int t = t0 + tc;
        float value = 0.0f;
        if (o < g.outChannels) {
            if constexpr (BackwardData) {
                const int j = t / kernelTaps, rs = t - j * kernelTaps;
                const int k = o / g.groupOut * g.groupIn + j;
                value = __ldg(w + (k * g.groupOut + o % g.groupOut) * kernelTaps + rs);
            } else {
                value = __ldg(w + o * g.taps + t);
            }
        }
        weights[i] = value;
    }
}

// The taps t0 .. t1 - 1 of one tile: acc[px][v] += in(tap, px) * weight(tap, v). Taps are
// walked as (j, r, s) so that the input row is found once per (j, r).
template <bool BackwardData, int V>
__device__ __forceinline__ void accumulateTaps(const DirectPass& g,
                                               const __nv_bfloat16* __restrict__ in,
                                               const float* tapWeights, int blockChannels,
                                               const Tile& at, int inChannel0, int t0, int t1,
                                               float (&acc)[kTilePixels][V]) {
    const int kernelTaps = g.kernelHeight * g.kernelWidth;
    int j = t0 / kernelTaps;
    int r = (t0 - j * kernelTaps) / g.kernelWidth;
    int s = t0 - j * kernelTaps - r * g.kernelWidth;
    for (int t = t0; t < t1;) {
        const int sEnd = min(g.kernelWidth, s + (t1 - t));
        const int row = inputRow<BackwardData>(g, at.p, r);
        if (row >= 0) {
            const __nv_bfloat16* inRow =
                in + (at.n * g.inHeight + row) * g.inWidth * g.inChannels + inChannel0 + j;
            const float* rowWeights = tapWeights + (t - t0 - s) * blockChannels;
            for (int column = s; column < sEnd; ++column) {
                float weight[V];
                loadFloats<V>(rowWeights + column * blockChannels, weight);
                int columns[kTilePixels];
                inputColumns<BackwardData>(g, at.q0, column, columns);
#pragma unroll
                for (int px = 0; px < kTilePixels; ++px) {
                    const float value = columns[px] >= 0
                                            ? __bfloat162float(inRow[columns[px] * g.inChannels])
                                            : 0.0f;
#pragma unroll
                    for (int v = 0; v < V; ++v) acc[px][v] = fmaf(value, weight[v], acc[px][v]);
                }
            }
        }
        t += sEnd - s;
        s = 0;
        if (++r == g.kernelHeight) {
            r = 0;
            ++j;
        }
    }
}

// Any geometry. Forward (out = y) computes the forward line of the header; backward data
// (out = dx) differentiates it with respect to x, gathering for each dx element the (k, r, s,
// p, q) terms that read it. Block: (lanes channel lanes) x (kThreads / lanes pixel lanes);
// channel lane l takes output channels channel0 + l*V .. + V - 1 (one group: groupOut % V == 0),
// pixel lanes take tiles. blockIdx.x: the block's channels; blockIdx.y strides over the tiles.
// The weights of the block's channels are in shared memory in chunks of chunkTaps taps: loaded
// once when one chunk holds them all, else chunk by chunk for each sweep of the pixel lanes.
template <bool BackwardData, int V>
__global__ void __launch_bounds__(kThreads)
directConvKernel(DirectPass g, const __nv_bfloat16* __restrict__ in,  // (N, inH, inW, inC)
                 const float* __restrict__ w,                         // (K, C/G, R, S)
                 const float* __restrict__ bias,                      // (K) or null (forward)
                 __nv_bfloat16* __restrict__ out,                     // (N, outH, outW, outC)
                 int lanes, int chunkTaps) {
    extern __shared__ float4 sharedMemory[];
    float* weights = reinterpret_cast<float*>(sharedMemory);  // [tap of the chunk][lanes * V]
    const int blockChannels = lanes * V;
    const int lane = int(threadIdx.x) % lanes, pixelLane = int(threadIdx.x) / lanes;
    const int pixelLanes = kThreads / lanes;
    const int channel0 = int(blockIdx.x) * blockChannels;
    const int channel = channel0 + lane * V;
    const bool active = channel < g.outChannels;
    const int inChannel0 = min(channel, g.outChannels - 1) / g.groupOut * g.groupIn;
    const int rowTiles = tilesPerRow(g);
    const int tiles = g.batch * g.outHeight * rowTiles;
    const bool oneChunk = chunkTaps >= g.taps;
    if (oneChunk) {
        loadWeightChunk<BackwardData>(g, w, channel0, blockChannels, 0, g.taps, weights);
        __syncthreads();
    }
    for (int base = int(blockIdx.y) * pixelLanes; base < tiles;
         base += int(gridDim.y) * pixelLanes) {
        const int tile = base + pixelLane;
        const bool working = active && tile < tiles;
        const Tile at = tileAt(g, min(tile, tiles - 1), rowTiles);
        float acc[kTilePixels][V];
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const float start =
                !BackwardData && bias != nullptr && active ? __ldg(bias + channel + v) : 0.0f;
#pragma unroll
            for (int px = 0; px < kTilePixels; ++px) acc[px][v] = start;
        }
        for (int t0 = 0; t0 < g.taps; t0 += chunkTaps) {
            const int t1 = min(g.taps, t0 + chunkTaps);
            if (!oneChunk) {
                __syncthreads();  // the previous chunk is no longer read
                loadWeightChunk<BackwardData>(g, w, channel0, blockChannels, t0, t1, weights);
                __syncthreads();
            }
            if (working)
                accumulateTaps<BackwardData, V>(g, in, weights + lane * V, blockChannels, at,
                                                inChannel0, t0, t1, acc);
        }
        if (!working) continue;
#pragma unroll
        for (int px = 0; px < kTilePixels; ++px)
            if (at.q0 + px < g.outWidth)
                storeBf16<V>(acc[px],
                             out + (at.row * g.outWidth + at.q0 + px) * g.outChannels + channel);
    }
}

// ---- backward filter ---------------------------------------------------------------------

// Adds acc over the block's pixel lanes in a fixed order (shuffles within a warp, then the
// warps in turn) and writes its rows firstRow + i < rows, for the block's lanes * V channels
// from channel0, to sums[row * channels + channel]. Threads are laid out as
// threadIdx.x = pixel lane * lanes + channel lane, lanes a power of two up to 32.
template <int Rows, int V>
__device__ void writeBlockSums(float (&acc)[Rows][V], int lanes, int firstRow, int rows,
                               int channels, int channel0, float* __restrict__ sums) {
    __shared__ float warpSums[kWarps][32 * V];
    const int laneInWarp = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
    const int blockChannels = lanes * V;
#pragma unroll
    for (int i = 0; i < Rows; ++i) {
        if (firstRow + i >= rows) break;  // the same in every thread
#pragma unroll
        for (int v = 0; v < V; ++v) {
            float value = acc[i][v];
            for (int offset = lanes; offset < 32; offset *= 2)
                value += __shfl_xor_sync(kFullMask, value, offset);
            if (laneInWarp < lanes) warpSums[warp][laneInWarp * V + v] = value;
        }
        __syncthreads();
        for (int e = int(threadIdx.x); e < blockChannels; e += kThreads) {
            float total = 0.0f;
            for (int wp = 0; wp < kWarps; ++wp) total += warpSums[wp][e];
            if (channel0 + e < channels) sums[(firstRow + i) * channels + channel0 + e] = total;
        }
        __syncthreads();
    }
}

// Differentiates the depthwise forward line (depthwise3x3Kernel) with respect to w and bias:
//   dw[c][0][r][s] = sum_{n,p,q} dy[n][p][q][c] * x[n][p*sh-ph+r][q-pw+s][c]
//   dbias[c]       = sum_{n,p,q} dy[n][p][q][c]
// Block: (lanes channel lanes of V channels) x (kThreads / lanes tile lanes) over the tiles
// blockIdx.y * tilesPerSplit .. of the output; blockIdx.x: the block's channels. rows = 9, or
// 10 with dbias. A tile's input column j feeds tap s of output px = j - s, as in the forward.
template <int V>
__global__ void __launch_bounds__(kThreads)
depthwise3x3FilterPartialsKernel(DirectPass g,
                                 const __nv_bfloat16* __restrict__ x,   // (N, H, W, C)
                                 const __nv_bfloat16* __restrict__ dy,  // (N, P, Q, C)
                                 int lanes, int tilesPerSplit, int rows,
                                 float* __restrict__ partials) {  // [split][rows][C]
    constexpr int kRows = kDepthwiseTaps + 1;  // the taps, then dbias
    const int lane = int(threadIdx.x) % lanes, tileLane = int(threadIdx.x) / lanes;
    const int tileLanes = kThreads / lanes;
    const int channel0 = int(blockIdx.x) * lanes * V;
    const int channel = channel0 + lane * V;
    const int rowTiles = tilesPerRow(g);
    const int tiles = g.batch * g.outHeight * rowTiles;
    const int first = int(blockIdx.y) * tilesPerSplit;
    const int last = min(tiles, first + tilesPerSplit);
    float acc[kRows][V] = {};
    if (channel < g.outChannels)
        for (int tile = first + tileLane; tile < last; tile += tileLanes) {
            const Tile at = tileAt(g, tile, rowTiles);
            float gradient[kTilePixels][V];
#pragma unroll
            for (int px = 0; px < kTilePixels; ++px) {
                const int pixel = at.row * g.outWidth + at.q0 + px;
                const auto d =
                    at.q0 + px < g.outWidth
                        ? Packed<__nv_bfloat16, V>::load(dy + pixel * g.outChannels + channel)
                        : Packed<__nv_bfloat16, V>{};
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    gradient[px][v] = d.get(v);
                    acc[kDepthwiseTaps][v] += gradient[px][v];
                }
            }
#pragma unroll
            for (int r = 0; r < kDepthwiseSide; ++r) {
                const int row = inputRow<false>(g, at.p, r);
                if (row < 0) continue;
                const __nv_bfloat16* inRow =
                    x + (at.n * g.inHeight + row) * g.inWidth * g.inChannels + channel;
                Packed<__nv_bfloat16, V> window[kDepthwiseWindow];
#pragma unroll
                for (int j = 0; j < kDepthwiseWindow; ++j) {
                    const int column = at.q0 - g.padWidth + j;
                    window[j] = unsigned(column) < unsigned(g.inWidth)
                                    ? Packed<__nv_bfloat16, V>::load(inRow + column * g.inChannels)
                                    : Packed<__nv_bfloat16, V>{};
                }
#pragma unroll
                for (int j = 0; j < kDepthwiseWindow; ++j) {
                    float value[V];
#pragma unroll
                    for (int v = 0; v < V; ++v) value[v] = window[j].get(v);
#pragma unroll
                    for (int s = 0; s < kDepthwiseSide; ++s) {
                        const int px = j - s;
                        if (px < 0 || px >= kTilePixels) continue;
#pragma unroll
                        for (int v = 0; v < V; ++v)
                            acc[r * kDepthwiseSide + s][v] =
                                fmaf(value[v], gradient[px][v], acc[r * kDepthwiseSide + s][v]);
                    }
                }
            }
        }
    writeBlockSums<kRows, V>(acc, lanes, 0, rows, g.outChannels, channel0,
                             partials + std::int64_t(blockIdx.y) * rows * g.outChannels);
}

// Differentiates the forward line with respect to w and bias, for any geometry:
//   dw[k][c][r][s] = sum_{n,p,q} dy[n][p][q][k] * x[n][p*sh-ph+r][q*sw-pw+s][g*C/G+c]
//   dbias[k]       = sum_{n,p,q} dy[n][p][q][k]
// Block: (lanes channel lanes of V filters of one group: K/G % V == 0) x (kThreads / lanes
// pixel lanes) over the pixels blockIdx.y * pixelsPerSplit .., for the rows chunk * kChunk ..
// of taps (row C/G*R*S is dbias); blockIdx.x = chunk * channelBlocks + the block's channels.
// The chunk's taps are the same for every thread, so their tests below do not diverge.
template <int V>
__global__ void __launch_bounds__(kThreads)
directConvFilterPartialsKernel(DirectPass g, const __nv_bfloat16* __restrict__ x,  // (N, H, W, C)
                               const __nv_bfloat16* __restrict__ dy,  // (N, P, Q, K)
                               int lanes, int channelBlocks, int pixelsPerSplit, int rows,
                               float* __restrict__ partials) {  // [split][rows][K]
    constexpr int kChunk = kFilterTapChunk<V>;
    const int lane = int(threadIdx.x) % lanes, pixelLane = int(threadIdx.x) / lanes;
    const int pixelLanes = kThreads / lanes;
    const int channel0 = int(blockIdx.x) % channelBlocks * lanes * V;
    const int firstRow = int(blockIdx.x) / channelBlocks * kChunk;
    const int channel = channel0 + lane * V;
    const bool active = channel < g.outChannels;
    const int inChannel0 = min(channel, g.outChannels - 1) / g.groupOut * g.groupIn;
    const int kernelTaps = g.kernelHeight * g.kernelWidth;
    // The chunk's taps: input channel within the group (or kBiasTap, kNoTap), kernel row, column.
    int tapChannel[kChunk], tapRow[kChunk], tapColumn[kChunk];
#pragma unroll
    for (int i = 0; i < kChunk; ++i) {
        const int t = firstRow + i;
        const int j = t / kernelTaps, rs = t - j * kernelTaps;
        tapRow[i] = rs / g.kernelWidth;
        tapColumn[i] = rs - tapRow[i] * g.kernelWidth;
        tapChannel[i] = t < g.taps ? j : t < rows ? kBiasTap : kNoTap;
    }
    const int pixels = g.batch * g.outHeight * g.outWidth;
    const int first = int(blockIdx.y) * pixelsPerSplit;
    const int last = min(pixels, first + pixelsPerSplit);
    float acc[kChunk][V] = {};
    if (active && first + pixelLane < last) {
        OutputPixel at(g, first + pixelLane);
        for (int pixel = first + pixelLane; pixel < last; pixel += pixelLanes) {
            const auto d = Packed<__nv_bfloat16, V>::load(dy + pixel * g.outChannels + channel);
            float gradient[V];
#pragma unroll
            for (int v = 0; v < V; ++v) gradient[v] = d.get(v);
            const int top = at.p * g.strideHeight - g.padHeight;
            const int left = at.q * g.strideWidth - g.padWidth;
            const __nv_bfloat16* image =
                x + at.n * g.inHeight * g.inWidth * g.inChannels + inChannel0;
#pragma unroll
            for (int i = 0; i < kChunk; ++i) {
                if (tapChannel[i] == kNoTap) continue;
                float value = 1.0f;
                if (tapChannel[i] != kBiasTap) {
                    const int h = top + tapRow[i], column = left + tapColumn[i];
                    const bool inside = unsigned(h) < unsigned(g.inHeight) &&
                                        unsigned(column) < unsigned(g.inWidth);
                    const int element = (h * g.inWidth + column) * g.inChannels + tapChannel[i];
                    value = inside ? __bfloat162float(image[element]) : 0.0f;
                }
#pragma unroll
                for (int v = 0; v < V; ++v) acc[i][v] = fmaf(value, gradient[v], acc[i][v]);
            }
            at.advance(g, pixelLanes);
        }
    }
    writeBlockSums<kChunk, V>(acc, lanes, firstRow, rows, g.outChannels, channel0,
                              partials + std::int64_t(blockIdx.y) * rows * g.outChannels);
}

// Block: kFinishElements consecutive elements e = row * K + k of the (rows, K) result x
// kFinishLanes split lanes; lane l adds splits l, l + 8, ..., then the lanes are added in order.
// Row t < taps goes to dw[k][t] (t = (c*R + r)*S + s), row taps to dbias[k].
__global__ void __launch_bounds__(kThreads)
filterFinishKernel(const float* __restrict__ partials,  // [splits][rows][K]
                   int rows, int outChannels, int taps, int splits,
                   float* __restrict__ dw,      // (K, C/G, R, S)
                   float* __restrict__ dbias) {  // (K), when rows = taps + 1
    startAfterPriorGrid();
    __shared__ float laneSums[kFinishLanes][kFinishElements];
    const int elements = rows * outChannels;
    const int column = int(threadIdx.x) % kFinishElements;
    const int lane = int(threadIdx.x) / kFinishElements;
    const int element = int(blockIdx.x) * kFinishElements + column;
    float sum = 0.0f;
    if (element < elements)
        for (int split = lane; split < splits; split += kFinishLanes)
            sum += partials[std::int64_t(split) * elements + element];
    laneSums[lane][column] = sum;
    __syncthreads();
    if (lane != 0 || element >= elements) return;
    float total = 0.0f;
    for (int l = 0; l < kFinishLanes; ++l) total += laneSums[l][column];
    const int t = element / outChannels, k = element - t * outChannels;
    if (t < taps)
        dw[k * taps + t] = total;
    else
        dbias[k] = total;
}

// ---- launchers ---------------------------------------------------------------------------

// Channel lanes of a block: a power of two covering the channel vectors, at most a warp.
int channelLanes(int channels, int perLane) {
    const int vectors = (channels + perLane - 1) / perLane;
    int lanes = 1;
    while (lanes < vectors && lanes < 32) lanes *= 2;
    return lanes;
}

template <bool BackwardData, int V>
void launchDepthwise(const char* name, const DirectPass& pass, const __nv_bfloat16* in,
                     const float* w, const float* bias, __nv_bfloat16* out, int multiprocessors,
                     cudaStream_t stream) {
    const int blockChannels = std::min(pass.outChannels, kDepthwiseBlockChannels);
    const unsigned channelBlocks =
        unsigned((pass.outChannels + kDepthwiseBlockChannels - 1) / kDepthwiseBlockChannels);
    const std::size_t items =
        std::size_t(pass.batch) * pass.outHeight * tilesPerRow(pass) * (blockChannels / V);
    launchKernelWithShared(name, depthwise3x3Kernel<BackwardData, V>,
                           dim3(channelBlocks, gridStrideBlocks(items, kThreads, multiprocessors)),
                           kThreads, std::size_t(blockChannels) * kDepthwiseTaps * sizeof(float),
                           stream, pass, in, w, bias, out);
}

template <bool BackwardData, int V>
void launchGeneral(const char* name, const DirectPass& pass, const __nv_bfloat16* in,
                   const float* w, const float* bias, __nv_bfloat16* out, int multiprocessors,
                   cudaStream_t stream) {
    const int lanes = channelLanes(pass.outChannels, V);
    const int blockChannels = lanes * V;
    const int chunkTaps = std::min(pass.taps, kSharedFloats / blockChannels);
    const std::int64_t channelBlocks = (pass.outChannels + blockChannels - 1) / blockChannels;
    const std::int64_t pixelLanes = kThreads / lanes;
    const std::int64_t tiles = std::int64_t(pass.batch) * pass.outHeight * tilesPerRow(pass);
    const std::int64_t needed = (tiles + pixelLanes - 1) / pixelLanes;
    // About four blocks per multiprocessor in all: each loads its weights.
    const std::int64_t enough =
        std::max<std::int64_t>(1, 4 * std::int64_t(multiprocessors) / channelBlocks);
    const unsigned pixelBlocks = unsigned(std::max<std::int64_t>(1, std::min(needed, enough)));
    launchKernelWithShared(name, directConvKernel<BackwardData, V>,
                           dim3(unsigned(channelBlocks), pixelBlocks), kThreads,
                           std::size_t(chunkTaps) * blockChannels * sizeof(float), stream, pass,
                           in, w, bias, out, lanes, chunkTaps);
}

// The widest channel vector the channel count and both tensors' alignment allow.
template <bool BackwardData>
void runGather(const ConvGeometry& g, const __nv_bfloat16* in, const float* w, const float* bias,
               __nv_bfloat16* out, int multiprocessors, cudaStream_t stream) {
    const DirectPass pass = makePass(g, BackwardData);
    if (isDepthwise3x3(g)) {
        const char* name = BackwardData ? "direct conv backward data (depthwise 3x3)"
                                        : "direct conv forward (depthwise 3x3)";
        const int channels = pass.outChannels;
        if (channels % 8 == 0 && isAligned(in, 16) && isAligned(out, 16))
            launchDepthwise<BackwardData, 8>(name, pass, in, w, bias, out, multiprocessors, stream);
        else if (channels % 4 == 0 && isAligned(in, 8) && isAligned(out, 8))
            launchDepthwise<BackwardData, 4>(name, pass, in, w, bias, out, multiprocessors, stream);
        else
            launchDepthwise<BackwardData, 1>(name, pass, in, w, bias, out, multiprocessors, stream);
        return;
    }
    const char* name = BackwardData ? "direct conv backward data" : "direct conv forward";
    if (pass.groupOut % 4 == 0 && isAligned(out, 8))
        launchGeneral<BackwardData, 4>(name, pass, in, w, bias, out, multiprocessors, stream);
    else
        launchGeneral<BackwardData, 1>(name, pass, in, w, bias, out, multiprocessors, stream);
}

// How the filter gradient is split; it depends on the geometry only, so the workspace size is
// known before the launch (the alignment of x and dy may still lower the vector width there,
// with the same splits).
struct FilterPlan {
    bool depthwise;     // the depthwise 3x3 kernel, else the general one
    int vector;         // channels per thread: 4 where the channel count (per group) allows
    int rows;           // taps + 1: room for dbias
    int splits;         // of the output: at most kFilterBlocks / (blocks per split)
    int unitsPerSplit;  // output tiles (depthwise) or pixels (general) per split
};

FilterPlan planFilter(const ConvGeometry& g) {
    const DirectPass pass = makePass(g, false);
    FilterPlan plan{};
    plan.depthwise = isDepthwise3x3(g);
    plan.vector = (plan.depthwise ? pass.outChannels : pass.groupOut) % 4 == 0 ? 4 : 1;
    plan.rows = pass.taps + 1;
    const int lanes = channelLanes(pass.outChannels, plan.vector);
    const std::int64_t channelBlocks =
        (pass.outChannels + lanes * plan.vector - 1) / (lanes * plan.vector);
    const int chunk = plan.vector == 4 ? kFilterTapChunk<4> : kFilterTapChunk<1>;
    const std::int64_t tapChunks = plan.depthwise ? 1 : (plan.rows + chunk - 1) / chunk;
    const std::int64_t pixels = std::int64_t(pass.batch) * pass.outHeight * pass.outWidth;
    const std::int64_t units =
        plan.depthwise ? std::int64_t(pass.batch) * pass.outHeight * tilesPerRow(pass) : pixels;
    const std::int64_t leastPerSplit =
        std::int64_t(plan.depthwise ? kMinTilesPerLane : kMinPixelsPerLane) * (kThreads / lanes);
    const std::int64_t blocksPerSplit = channelBlocks * tapChunks;
    std::int64_t splits = (kFilterBlocks + blocksPerSplit - 1) / blocksPerSplit;
    splits = std::min(splits, units / leastPerSplit);
    splits = std::min(splits, kMaxPartialFloats / (std::int64_t(plan.rows) * pass.outChannels));
    splits = std::max<std::int64_t>(1, splits);
    const std::int64_t perSplit = std::max<std::int64_t>(1, (units + splits - 1) / splits);
    plan.unitsPerSplit = int(perSplit);
    plan.splits = int(std::max<std::int64_t>(1, (units + perSplit - 1) / perSplit));
    return plan;
}

template <int V>
void launchDepthwiseFilter(const DirectPass& pass, const FilterPlan& plan, int rows,
                           const __nv_bfloat16* x, const __nv_bfloat16* dy, float* partials,
                           cudaStream_t stream) {
    const int lanes = channelLanes(pass.outChannels, V);
    const unsigned channelBlocks = unsigned((pass.outChannels + lanes * V - 1) / (lanes * V));
    launchKernel("direct conv filter partials (depthwise 3x3)", depthwise3x3FilterPartialsKernel<V>,
                 dim3(channelBlocks, unsigned(plan.splits)), kThreads, stream, pass, x, dy, lanes,
                 plan.unitsPerSplit, rows, partials);
}

template <int V>
void launchGeneralFilter(const DirectPass& pass, const FilterPlan& plan, int rows,
                         const __nv_bfloat16* x, const __nv_bfloat16* dy, float* partials,
                         cudaStream_t stream) {
    const int lanes = channelLanes(pass.outChannels, V);
    const int channelBlocks = (pass.outChannels + lanes * V - 1) / (lanes * V);
    const int tapChunks = (rows + kFilterTapChunk<V> - 1) / kFilterTapChunk<V>;
    launchKernel("direct conv filter partials", directConvFilterPartialsKernel<V>,
                 dim3(unsigned(channelBlocks * tapChunks), unsigned(plan.splits)), kThreads,
                 stream, pass, x, dy, lanes, channelBlocks, plan.unitsPerSplit, rows, partials);
}

}  // namespace

void directConvForwardChannelsLast(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                                   const float* bias, __nv_bfloat16* y, int multiprocessors,
                                   cudaStream_t stream) {
    runGather<false>(g, x, w, bias, y, multiprocessors, stream);
}

void directConvBackwardDataChannelsLast(const ConvGeometry& g, const __nv_bfloat16* dy,
                                        const float* w, __nv_bfloat16* dx, int multiprocessors,
                                        cudaStream_t stream) {
    runGather<true>(g, dy, w, nullptr, dx, multiprocessors, stream);
}

std::size_t directConvBackwardFilterWorkspaceBytes(const ConvGeometry& g) {
    const FilterPlan plan = planFilter(g);
    return std::size_t(plan.splits) * std::size_t(plan.rows) * std::size_t(g.outChannels) *
           sizeof(float);
}

// The splits depend on g alone (planFilter), so the multiprocessor count is not needed here.
void directConvBackwardFilterChannelsLast(const ConvGeometry& g, const __nv_bfloat16* x,
                                          const __nv_bfloat16* dy, float* dw, float* dbias,
                                          void* workspace, int /*multiprocessors*/,
                                          cudaStream_t stream) {
    const DirectPass pass = makePass(g, false);
    const FilterPlan plan = planFilter(g);
    const int rows = pass.taps + (dbias != nullptr ? 1 : 0);
    float* partials = static_cast<float*>(workspace);
    if (plan.depthwise) {
        if (plan.vector == 4 && isAligned(x, 8) && isAligned(dy, 8))
            launchDepthwiseFilter<4>(pass, plan, rows, x, dy, partials, stream);
        else
            launchDepthwiseFilter<1>(pass, plan, rows, x, dy, partials, stream);
    } else {
        if (plan.vector == 4 && isAligned(dy, 8))
            launchGeneralFilter<4>(pass, plan, rows, x, dy, partials, stream);
        else
            launchGeneralFilter<1>(pass, plan, rows, x, dy, partials, stream);
    }
    finishSplitFilterGradient(partials, rows, g.outChannels, pass.taps, plan.splits, dw, dbias,
                              stream);
}

void finishSplitFilterGradient(const float* partials, int rows, int outChannels, int taps,
                               int splits, float* dw, float* dbias, cudaStream_t stream) {
    const int elements = rows * outChannels;
    launchDependentKernel("conv filter gradient finish", filterFinishKernel,
                          unsigned((elements + kFinishElements - 1) / kFinishElements), kThreads,
                          stream, partials, rows, outChannels, taps, splits, dw, dbias);
}

}  // namespace cnnstudio::kernels
