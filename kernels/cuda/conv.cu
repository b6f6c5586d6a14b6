// 2-D convolution (cross-correlation, as PyTorch's conv2d) with any stride, padding and groups.
//   x (N, C, H, W), w (K, C/G, R, S), bias (K), y (N, K, P, Q), g = the group of channel k
//   forward          y[n][k][p][q] = bias[k]
//                      + sum_{c,r,s} x[n][g*C/G + c][p*sh - ph + r][q*sw - pw + s] * w[k][c][r][s]
//   backward data    dx[n][c][h][w] = sum over every (k, r, s, p, q) of the forward line
//                      that read x[n][c][h][w], of dy[n][k][p][q] * w[k][c][r][s]
//   backward filter  dw[k][c][r][s] = sum_{n,p,q} dy[n][k][p][q] * x[n][g*C/G + c][p*sh-ph+r][q*sw-pw+s]
//                    dbias[k] = sum_{n,p,q} dy[n][k][p][q]
// This file computes them on fp32 NCHW activations; in bf16 precision (bf16 channels-last
// activations) the ops hand over to conv_channels_last.cpp.
//
// All three are implicit GEMMs on the tensor-core GEMM core (gemm.cuh, fp32 accuracy), per group:
//   forward          M = K/G, N = N*P*Q, K = C/G*R*S   A = w (rows of C/G*R*S)
//                                                     B = im2col(x), gathered on the fly
//   backward data    the same kernel: dx is the forward convolution of dy with the weights
//                    transposed to (C, K/G, R, S) and flipped in R and S, stride 1, padding
//                    R-1-ph, and dy "dilated" by the forward stride (taps that fall between
//                    dy positions read zero). M = C/G, N = N*H*W, K = K/G*R*S.
//   backward filter  M = K/G, N = C/G*R*S, K = N*P*Q   A = dy (rows of P*Q per image)
//                                                     B = im2col(x) transposed
// When the output has too few tiles to fill the GPU (dense layers, small feature maps, every
// backward filter) the K dimension is split across blocks; each block writes its partial
// product to scratch memory and a second kernel adds the partials in order (deterministic).
//
// Depthwise convolutions (one input channel per group) would be GEMMs with M or K of a few
// elements, so they get direct kernels: one thread per output (forward) or input (backward
// data) element, and blocks per (filter, part of the positions) that accumulate every tap at
// once for the filter gradient.
//
// Built for: 3x3 stride 1, 64-256 channels, 48x48 to 12x12 maps, batch 256 (fer-cnn); the
// GEMM core keeps 16 warps per SM with no spills (128 registers). On an H200 fer-cnn's 3x3
// convolutions take 0.5-1.2 ms per direction at 38-50 TFLOP/s (docs/measurements.md, "Our own
// kernels on tensor cores"; re-measure with conv_bench --backend cuda --batch 256).
#include <cstdint>

#include "cuda/activation_storage.cuh"
#include "cuda/block_reduce.cuh"
#include "cuda/channel_sums.cuh"
#include "cuda/conv_windows.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/gemm.cuh"
#include "cuda/index_limits.h"
#include "runtime/async_copy.cuh"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

using gemm::kPadA;
using gemm::kPadB;
using gemm::kTileK;
using gemm::kTileN;

// The tile of a thread block of either convolution GEMM: blockIdx.z enumerates (split, group),
// blockIdx.x the (N tile, M tile) pairs with the M tiles varying fastest, so that the blocks
// that multiply the same B columns (im2col of the same pixels) run at the same time and share
// them through L2; the split owns k in [kBegin, kEnd).
struct GroupSplitBlock {
    int m0, n0, kBegin, kEnd, group, split;
    template <class Params>
    __device__ GroupSplitBlock(const Params& p, int tileM, int tileN) {
        group = int(blockIdx.z) % p.groups;
        split = int(blockIdx.z) / p.groups;
        const int tilesM = (p.groupOutChannels + tileM - 1) / tileM;
        m0 = int(blockIdx.x) % tilesM * tileM;
        n0 = int(blockIdx.x) / tilesM * tileN;
        kBegin = split * p.kPerSplit;
        kEnd = min(p.gemmK, kBegin + p.kPerSplit);
    }
};

// ---- forward and backward data: y = conv(x, w), implicit GEMM over im2col(x) ---------------

struct ImplicitConvParams {
    const float* input;    // (batch, inChannels, inHeight, inWidth)
    const float* weights;  // (outChannels, inChannels / groups, kernelHeight, kernelWidth)
    const float* bias;     // (outChannels) or null; null as well when K is split
    float* output;         // (batch, outChannels, outHeight, outWidth) per split
    std::int64_t splitStride;  // elements between the outputs of two splits
    int batch, inChannels, inHeight, inWidth;
    int outChannels, outHeight, outWidth;
    int kernelHeight, kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
    int dilationHeight, dilationWidth;  // input dilation: 1 forward, the stride for backward data
    int groups, groupInChannels, groupOutChannels;
    int gemmN, gemmK;  // batch * outHeight * outWidth, groupInChannels * kernelHeight * kernelWidth
    int kPerSplit;     // a multiple of kTileK
    int taps, inPlane, outPlane;  // kernelHeight * kernelWidth, inHeight * inWidth, ...
    // k = channel * taps + tap; one tile further is tileStepChannels channels and
    // tileStepTaps taps further (kTileK = tileStepChannels * taps + tileStepTaps).
    int tileStepChannels, tileStepTaps;
    // No dilation and at most 32 taps: each column's in-image taps are one bit mask, so a load
    // is a mask test and an add (the general path decodes and bounds-checks every tap).
    bool tapMasks;
    bool outputVectorised;  // outPlane % 4 == 0 and output 16-byte aligned
    bool weightsVectorised;  // gemmK % 4 == 0 and weights 16-byte aligned: 16-byte A copies
};

struct ImplicitConv {
    using Params = ImplicitConvParams;
    using Block = GroupSplitBlock;

    // The block's B columns n = (image, outRow, outColumn), decoded once per block.
    struct Tables {
        // tapMasks: {offset of the window's top-left corner in the input (may be negative),
        //            bit t set when tap t lies inside the image}
        int2 window[kTileN];
        // general path: {offset of the image's first channel of the group, packed origin}
        int2 image[kTileN];
        int tapOffset[32];  // tapMasks: r * inWidth + s of tap t = r * kernelWidth + s
    };

    __device__ static void fillTables(const Params& p, const Block& b, int thread, int threads,
                                      Tables& tables) {
        for (int column = thread; column < kTileN; column += threads) {
            const int n = b.n0 + column;
            int imageOffset = 0, originH = kOutside, originW = kOutside, windowOffset = 0;
            unsigned insideTaps = 0;
            if (n < p.gemmN) {
                const int image = n / p.outPlane, pixel = n - image * p.outPlane;
                const int outRow = pixel / p.outWidth, outColumn = pixel - outRow * p.outWidth;
                imageOffset = (image * p.inChannels + b.group * p.groupInChannels) * p.inPlane;
                originH = outRow * p.strideHeight - p.padHeight;
                originW = outColumn * p.strideWidth - p.padWidth;
                windowOffset = imageOffset + originH * p.inWidth + originW;
                if (p.tapMasks)
                    for (int tap = 0; tap < p.taps; ++tap) {
                        const int h = originH + tap / p.kernelWidth;
                        const int w = originW + tap % p.kernelWidth;
                        if (h >= 0 && h < p.inHeight && w >= 0 && w < p.inWidth)
                            insideTaps |= 1u << tap;
                    }
            }
            tables.window[column] = int2{windowOffset, int(insideTaps)};
            tables.image[column] = int2{imageOffset, packPair(originH, originW)};
        }
        if (p.tapMasks)
            for (int tap = thread; tap < p.taps; tap += threads)
                tables.tapOffset[tap] = (tap / p.kernelWidth) * p.inWidth + tap % p.kernelWidth;
    }

    // A = the group's weights, row m holding gemmK contiguous values. Two threads per row,
    // four consecutive k each: one 16-byte copy when the rows allow it.
    template <int TileM, int Threads>
    struct ALoader {
        static_assert(Threads == 2 * TileM, "two threads per tile row");
        int row, kOffset, kNext;  // kNext: this thread's first k of the next tile
        const float* rowPointer;  // null when the row is beyond M

        __device__ ALoader(const Params& p, const Block& b, int thread)
            : row(thread / 2), kOffset((thread % 2) * 4), kNext(b.kBegin + kOffset) {
            const int m = b.m0 + row;
            rowPointer = m < p.groupOutChannels
                             ? p.weights + std::int64_t(b.group * p.groupOutChannels + m) * p.gemmK
                             : nullptr;
        }
        __device__ void issue(const Params& p, const Block& b, const Tables&,
                              float (*tile)[kTileK + kPadA]) {
            const int valid = rowPointer ? max(0, min(4, b.kEnd - kNext)) : 0;
            const float* source = valid > 0 ? rowPointer + kNext : p.weights;
            if (p.weightsVectorised)
                copyAsync16OrZero(&tile[row][kOffset], source, valid);
            else
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    copyAsyncOrZero(&tile[row][kOffset + j], j < valid ? source + j : p.weights,
                                    j < valid);
            kNext += kTileK;
        }
    };

    // B = im2col(x): B[k = (c, r, s)][n = (image, p, q)]. A warp copies 32 consecutive output
    // pixels of one k row (consecutive input addresses for stride 1); each thread owns the
    // columns lane + 32 j and one or two k rows, whose (channel, tap) it steps by one tile
    // per copy instead of dividing again.
    template <int Threads>
    struct BLoader {
        static constexpr int kRowGroups = Threads / 32;
        static constexpr int kRows = kTileK / kRowGroups;  // 1 (256 threads) or 2 (128)
        int column, firstRow, kNext;
        int channel[kRows], tap[kRows];  // of this thread's k rows in the next tile

        __device__ BLoader(const Params& p, const Block& b, int thread)
            : column(thread % 32), firstRow(thread / 32), kNext(b.kBegin + firstRow) {
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
                const int k = kNext + kRowGroups * i;
                channel[i] = k / p.taps;
                tap[i] = k - channel[i] * p.taps;
            }
        }
        __device__ void issue(const Params& p, const Block& b, const Tables& tables,
                              float (*tile)[kTileN + kPadB]) {
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
                const bool rowInside = kNext + kRowGroups * i < b.kEnd;
                float* destination = &tile[firstRow + kRowGroups * i][column];
                if (p.tapMasks) {
                    const int offset = channel[i] * p.inPlane + tables.tapOffset[tap[i]];
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const int2 window = tables.window[column + 32 * j];
                        const bool valid = rowInside && ((unsigned(window.y) >> tap[i]) & 1u);
                        copyAsyncOrZero(destination + 32 * j,
                                        valid ? p.input + (window.x + offset) : p.input, valid);
                    }
                } else {
                    const int r = tap[i] / p.kernelWidth, s = tap[i] - r * p.kernelWidth;
                    const int channelOffset = channel[i] * p.inPlane;
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const int2 image = tables.image[column + 32 * j];
                        int h = 0, w = 0;
                        const bool valid =
                            rowInside &&
                            inputIndex(pairHigh(image.y) + r, p.dilationHeight, p.inHeight, h) &&
                            inputIndex(pairLow(image.y) + s, p.dilationWidth, p.inWidth, w);
                        copyAsyncOrZero(
                            destination + 32 * j,
                            valid ? p.input + (image.x + channelOffset + h * p.inWidth + w) : p.input,
                            valid);
                    }
                }
                channel[i] += p.tileStepChannels;
                tap[i] += p.tileStepTaps;
                if (tap[i] >= p.taps) {
                    tap[i] -= p.taps;
                    ++channel[i];
                }
            }
            kNext += kTileK;
        }
    };

    // C[m][n..n+3] -> y[image][group*M + m][pixel..pixel+3] (+ bias).
    __device__ static void storeQuad(const Params& p, const Block& b, int m, int n,
                                     const float (&values)[4]) {
        if (m >= p.groupOutChannels || n >= p.gemmN) return;
        const int channel = b.group * p.groupOutChannels + m;
        const float bias = p.bias ? __ldg(p.bias + channel) : 0.0f;
        float* output = p.output + b.split * p.splitStride;
        if (p.outputVectorised) {
            // outPlane and n are multiples of 4: the four pixels are contiguous in one image.
            const int image = n / p.outPlane, pixel = n - image * p.outPlane;
            *reinterpret_cast<float4*>(output + (image * p.outChannels + channel) * p.outPlane +
                                       pixel) =
                float4{values[0] + bias, values[1] + bias, values[2] + bias, values[3] + bias};
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                if (n + q >= p.gemmN) break;
                const int image = (n + q) / p.outPlane, pixel = (n + q) - image * p.outPlane;
                output[(image * p.outChannels + channel) * p.outPlane + pixel] = values[q] + bias;
            }
        }
    }
};

// ---- backward filter: dw = dy * im2col(x)^T ------------------------------------------------

struct FilterGradParams {
    const float* input;       // x (batch, inChannels, inHeight, inWidth)
    const float* outputGrad;  // dy (batch, outChannels, outHeight, outWidth)
    float* weightGrad;        // dw (outChannels, inChannels / groups, kh, kw) per split
    std::int64_t splitStride;  // elements between the results of two splits
    int batch, inChannels, inHeight, inWidth;
    int outChannels, outHeight, outWidth;
    int kernelHeight, kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
    int groups, groupInChannels, groupOutChannels;
    int gemmN, gemmK;  // groupInChannels * kh * kw, batch * outHeight * outWidth
    int kPerSplit;
    int taps, inPlane, outPlane;
    // k = image * outPlane + pixel, pixel = outRow * outWidth + outColumn; one tile further:
    // kTileK = tileStepImages * outPlane + tileStepPixels = tileStepRows * outWidth + tileStepColumns
    int tileStepImages, tileStepPixels, tileStepRows, tileStepColumns;
    bool weightGradVectorised;  // gemmN % 4 == 0 and weightGrad 16-byte aligned
    bool outputGradVectorised;  // outPlane % 4 == 0 and outputGrad 16-byte aligned: 16-byte A copies
};

struct FilterGrad {
    using Params = FilterGradParams;
    using Block = GroupSplitBlock;

    // The block's B columns n = (c, r, s), decoded once per block.
    struct Tables {
        int offset[kTileN];  // (group's channel c) * inPlane + r * inWidth + s
        int tap[kTileN];     // packed (r, s); kOutside beyond N
    };

    __device__ static void fillTables(const Params& p, const Block& b, int thread, int threads,
                                      Tables& tables) {
        for (int column = thread; column < kTileN; column += threads) {
            const int n = b.n0 + column;
            if (n < p.gemmN) {
                const int channel = n / p.taps, tap = n - channel * p.taps;
                const int r = tap / p.kernelWidth, s = tap - r * p.kernelWidth;
                tables.offset[column] =
                    (b.group * p.groupInChannels + channel) * p.inPlane + r * p.inWidth + s;
                tables.tap[column] = packPair(r, s);
            } else {
                tables.offset[column] = 0;
                tables.tap[column] = packPair(kOutside, kOutside);
            }
        }
    }

    // A = dy of the group's output channels: row m, k = (image, pixel). Two threads per row,
    // four consecutive k each: one 16-byte copy when each image's plane holds whole quads.
    template <int TileM, int Threads>
    struct ALoader {
        static_assert(Threads == 2 * TileM, "two threads per tile row");
        int row, kOffset, kNext, image, pixel;  // (image, pixel) of kNext
        const float* channelPointer;  // dy plane of image 0 for this row; null beyond M

        __device__ ALoader(const Params& p, const Block& b, int thread)
            : row(thread / 2), kOffset((thread % 2) * 4), kNext(b.kBegin + kOffset) {
            image = kNext / p.outPlane;
            pixel = kNext - image * p.outPlane;
            const int m = b.m0 + row;
            channelPointer = m < p.groupOutChannels
                                 ? p.outputGrad + (b.group * p.groupOutChannels + m) * p.outPlane
                                 : nullptr;
        }
        __device__ void issue(const Params& p, const Block& b, const Tables&,
                              float (*tile)[kTileK + kPadA]) {
            const int imageStride = p.outChannels * p.outPlane;
            const int valid = channelPointer ? max(0, min(4, b.kEnd - kNext)) : 0;
            if (p.outputGradVectorised) {
                // kNext and outPlane are multiples of 4: the quad lies in one image.
                const float* quad =
                    valid > 0 ? channelPointer + image * imageStride + pixel : p.outputGrad;
                copyAsync16OrZero(&tile[row][kOffset], quad, valid);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    int elementImage = image, elementPixel = pixel + j;
                    while (elementPixel >= p.outPlane) {
                        elementPixel -= p.outPlane;
                        ++elementImage;
                    }
                    const float* element =
                        j < valid ? channelPointer + elementImage * imageStride + elementPixel
                                  : p.outputGrad;
                    copyAsyncOrZero(&tile[row][kOffset + j], element, j < valid);
                }
            }
            kNext += kTileK;
            image += p.tileStepImages;
            pixel += p.tileStepPixels;
            if (pixel >= p.outPlane) {
                pixel -= p.outPlane;
                ++image;
            }
        }
    };

    // B = im2col(x)^T: B[k = (image, p, q)][n = (c, r, s)]. Eight threads cover the eight k
    // rows of a tile (consecutive output pixels: one 32-byte sector of x per column for stride
    // 1); each thread copies groups of four consecutive columns and steps its row's output
    // pixel by one tile per copy.
    template <int Threads>
    struct BLoader {
        static constexpr int kColumnGroups = Threads / kTileK;      // 32 or 16
        static constexpr int kSets = kTileN / (4 * kColumnGroups);  // 1 or 2
        int row, firstColumn, kNext, image, outRow, outColumn;  // output pixel of kNext

        __device__ BLoader(const Params& p, const Block& b, int thread)
            : row(thread % kTileK), firstColumn((thread / kTileK) * 4), kNext(b.kBegin + row) {
            image = kNext / p.outPlane;
            const int pixel = kNext - image * p.outPlane;
            outRow = pixel / p.outWidth;
            outColumn = pixel - outRow * p.outWidth;
        }
        __device__ void issue(const Params& p, const Block& b, const Tables& tables,
                              float (*tile)[kTileN + kPadB]) {
            const bool rowInside = kNext < b.kEnd;
            const int originH = outRow * p.strideHeight - p.padHeight;
            const int originW = outColumn * p.strideWidth - p.padWidth;
            const int base = image * p.inChannels * p.inPlane + originH * p.inWidth + originW;
#pragma unroll
            for (int set = 0; set < kSets; ++set) {
                const int first = firstColumn + set * 4 * kColumnGroups;
                const int4 offsets = *reinterpret_cast<const int4*>(&tables.offset[first]);
                const int4 taps = *reinterpret_cast<const int4*>(&tables.tap[first]);
                const int offset[4] = {offsets.x, offsets.y, offsets.z, offsets.w};
                const int tap[4] = {taps.x, taps.y, taps.z, taps.w};
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int h = originH + pairHigh(tap[q]), w = originW + pairLow(tap[q]);
                    const bool valid = rowInside && unsigned(h) < unsigned(p.inHeight) &&
                                       unsigned(w) < unsigned(p.inWidth);
                    copyAsyncOrZero(&tile[row][first + q],
                                    valid ? p.input + (base + offset[q]) : p.input, valid);
                }
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

    // C[m][n..n+3] -> dw[group*M + m][n..n+3] of this split.
    __device__ static void storeQuad(const Params& p, const Block& b, int m, int n,
                                     const float (&values)[4]) {
        if (m >= p.groupOutChannels || n >= p.gemmN) return;
        float* row = p.weightGrad + b.split * p.splitStride +
                     (b.group * p.groupOutChannels + m) * p.gemmN;
        if (p.weightGradVectorised) {
            *reinterpret_cast<float4*>(row + n) = float4{values[0], values[1], values[2], values[3]};
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q)
                if (n + q < p.gemmN) row[n + q] = values[q];
        }
    }
};

// ---- helpers of the GEMM paths ------------------------------------------------------------

// output[i] = sum_{s < splits} partials[s * count + i] (+ bias[(i / plane) % channels]),
// adding the splits in order so the result does not depend on scheduling.
__global__ void sumSplitsKernel(const float* __restrict__ partials, int splits, int count,
                                const float* __restrict__ bias, int plane, int channels,
                                float* __restrict__ output) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        float total = bias ? __ldg(bias + (i / plane) % channels) : 0.0f;
        for (int s = 0; s < splits; ++s) total += __ldg(partials + std::int64_t(s) * count + i);
        output[i] = total;
    }
}

// wt[(g*C/G + c)][k][R-1-r][S-1-s] = w[g*K/G + k][c][r][s]: the weights of the backward-data
// convolution (input and output channels swapped within each group, taps flipped).
__global__ void transposeFlipWeightsKernel(const float* __restrict__ weights, int outChannels,
                                           int groupInChannels, int groupOutChannels,
                                           int kernelHeight, int kernelWidth,
                                           float* __restrict__ transposed) {
    const int taps = kernelHeight * kernelWidth;
    const int count = outChannels * groupInChannels * taps;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        // i indexes transposed: (inChannel, k, rFlipped, sFlipped)
        const int tap = i % taps;
        const int k = (i / taps) % groupOutChannels;
        const int inChannel = i / (taps * groupOutChannels);
        const int group = inChannel / groupInChannels, c = inChannel % groupInChannels;
        const int r = kernelHeight - 1 - tap / kernelWidth;
        const int s = kernelWidth - 1 - tap % kernelWidth;
        transposed[i] = __ldg(weights + ((group * groupOutChannels + k) * groupInChannels + c) *
                                            taps + r * kernelWidth + s);
    }
}

// dbias[k] = the channel sum of dy, from channelPartialSumsKernel's partials.
__global__ void finishBiasGradKernel(const double2* __restrict__ partials, int channels,
                                     int splits, float* __restrict__ biasGrad) {
    const int channel = blockIdx.x * blockDim.x + threadIdx.x;
    if (channel < channels) biasGrad[channel] = float(channelTotal(partials, channel, splits).x);
}

// Split-K: for a GEMM with `tiles` output tiles, how many parts to cut K into so that the grid
// covers the GPU about twice, keeping at least 16 k tiles per part and the partial results
// (partialElements floats per part) under 256 MiB.
int chooseSplits(std::int64_t tiles, int gemmK, std::int64_t partialElements, int groups,
                 int multiprocessors, int blocksPerMultiprocessor) {
    const std::int64_t target = 2 * std::int64_t(multiprocessors) * blocksPerMultiprocessor;
    if (tiles >= target) return 1;
    std::int64_t splits = (target + tiles - 1) / tiles;
    const std::int64_t kTiles = (gemmK + kTileK - 1) / kTileK;
    const std::int64_t byDepth = kTiles / 16;
    const std::int64_t byMemory = (std::int64_t(256) << 20) / (4 * partialElements);
    const std::int64_t byGrid = 65535 / groups;
    for (std::int64_t limit : {byDepth, byMemory, byGrid, std::int64_t(256)})
        splits = splits < limit ? splits : limit;
    return int(splits > 1 ? splits : 1);
}

struct GemmLaunch {
    int tileM, threads, blocksPerMultiprocessor;
};

GemmLaunch gemmShape(int gemmM) {
    using Narrow = gemm::TileConfig<1>;
    using Wide = gemm::TileConfig<2>;
    if (gemmM <= Narrow::kTileM)
        return {Narrow::kTileM, Narrow::kThreads, Narrow::kMinBlocksPerSm};
    return {Wide::kTileM, Wide::kThreads, Wide::kMinBlocksPerSm};
}

template <class Problem>
void launchGemm(const char* name, const typename Problem::Params& params, int gemmM, int gemmN,
                int gridZ, cudaStream_t stream) {
    const GemmLaunch shape = gemmShape(gemmM);
    const std::int64_t tiles = std::int64_t((gemmN + kTileN - 1) / kTileN) *
                               ((gemmM + shape.tileM - 1) / shape.tileM);
    // tiles <= gemmM * gemmN, the output's (or dw's) elements, which requireIndexable keeps
    // below 2^30: the grid's x dimension (up to 2^31 - 1) always holds them.
    const dim3 grid(unsigned(tiles), 1, unsigned(gridZ));
    if (shape.tileM == gemm::TileConfig<1>::kTileM)
        launchKernel(name, gemm::gemmKernel<Problem, 1>, grid, shape.threads, stream, params);
    else
        launchKernel(name, gemm::gemmKernel<Problem, 2>, grid, shape.threads, stream, params);
}

unsigned elementwiseBlocks(std::int64_t count, int multiprocessors) {
    return gridStrideBlocks(std::size_t(count), 256, multiprocessors);
}

// Byte offset of the next 256-byte boundary at or after `bytes` (scratch sub-buffers).
std::size_t alignUp256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// y = conv(x, w) (+ bias) through the implicit GEMM, planned on the host: the kernel
// parameters and how many parts K is split into when the output alone does not fill the GPU.
// planImplicitConv's dilation is the input dilation (1 for a forward convolution); with
// splits, runImplicitConv needs implicitConvScratchBytes(plan) of scratch for the partials.
struct ImplicitConvPlan {
    ImplicitConvParams params;
    int gemmM, splits;
    std::int64_t outputCount;
};

ImplicitConvPlan planImplicitConv(const ConvGeometry& g, int dilationHeight, int dilationWidth,
                                  const float* x, const float* w, const float* bias, float* y,
                                  int multiprocessors) {
    ImplicitConvPlan plan{};
    ImplicitConvParams& p = plan.params;
    p.input = x;
    p.weights = w;
    p.batch = g.batch, p.inChannels = g.inChannels, p.inHeight = g.inHeight, p.inWidth = g.inWidth;
    p.outChannels = g.outChannels, p.outHeight = g.outHeight, p.outWidth = g.outWidth;
    p.kernelHeight = g.kernelHeight, p.kernelWidth = g.kernelWidth;
    p.strideHeight = g.strideHeight, p.strideWidth = g.strideWidth;
    p.padHeight = g.padHeight, p.padWidth = g.padWidth;
    p.dilationHeight = dilationHeight, p.dilationWidth = dilationWidth;
    p.groups = g.groups;
    p.groupInChannels = g.inChannels / g.groups;
    p.groupOutChannels = g.outChannels / g.groups;
    p.gemmN = g.batch * g.outHeight * g.outWidth;
    p.gemmK = p.groupInChannels * g.kernelHeight * g.kernelWidth;
    p.taps = g.kernelHeight * g.kernelWidth;
    p.inPlane = g.inHeight * g.inWidth;
    p.outPlane = g.outHeight * g.outWidth;
    p.tileStepChannels = kTileK / p.taps;
    p.tileStepTaps = kTileK % p.taps;
    p.tapMasks = dilationHeight == 1 && dilationWidth == 1 && p.taps <= 32;
    plan.gemmM = p.groupOutChannels;
    plan.outputCount = g.outputCount();

    const GemmLaunch shape = gemmShape(plan.gemmM);
    const std::int64_t tiles = std::int64_t(g.groups) *
                               ((plan.gemmM + shape.tileM - 1) / shape.tileM) *
                               ((p.gemmN + kTileN - 1) / kTileN);
    plan.splits = chooseSplits(tiles, p.gemmK, plan.outputCount, g.groups, multiprocessors,
                               shape.blocksPerMultiprocessor);
    const int kTiles = (p.gemmK + kTileK - 1) / kTileK;
    p.kPerSplit = (kTiles + plan.splits - 1) / plan.splits * kTileK;
    plan.splits = (p.gemmK + p.kPerSplit - 1) / p.kPerSplit;
    p.bias = plan.splits == 1 ? bias : nullptr;
    p.output = y;
    p.splitStride = plan.outputCount;
    p.outputVectorised = (g.outHeight * g.outWidth) % 4 == 0 && isAligned(y, 16);
    p.weightsVectorised = p.gemmK % 4 == 0 && isAligned(w, 16);
    return plan;
}

std::size_t implicitConvScratchBytes(const ImplicitConvPlan& plan) {
    return plan.splits > 1 ? std::size_t(plan.splits) * plan.outputCount * sizeof(float) : 0;
}

// Launches the planned GEMM; with splits, into `partials` (scratch), then sums them into y.
void runImplicitConv(ImplicitConvPlan plan, const float* bias, float* y, float* partials,
                     int multiprocessors, cudaStream_t stream, const char* name) {
    if (plan.splits > 1) {
        plan.params.output = partials;
        plan.params.outputVectorised =
            plan.params.outputVectorised && isAligned(partials, 16);
    }
    launchGemm<ImplicitConv>(name, plan.params, plan.gemmM, plan.params.gemmN,
                             plan.params.groups * plan.splits, stream);
    if (plan.splits > 1)
        launchKernel("conv: sum of split-K partials", sumSplitsKernel,
                     elementwiseBlocks(plan.outputCount, multiprocessors), 256, stream,
                     static_cast<const float*>(partials), plan.splits, int(plan.outputCount), bias,
                     plan.params.outHeight * plan.params.outWidth, plan.params.outChannels, y);
}

// ---- depthwise (one input channel per group): direct kernels -------------------------------

struct DepthwiseParams {
    int batch, channels, inHeight, inWidth;  // channels = groups = input channels
    int outChannels, outHeight, outWidth, multiplier;  // multiplier = outChannels / channels
    int kernelHeight, kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
};

DepthwiseParams depthwiseParams(const ConvGeometry& g) {
    return {g.batch,        g.inChannels,   g.inHeight,       g.inWidth,
            g.outChannels,  g.outHeight,    g.outWidth,       g.outChannels / g.inChannels,
            g.kernelHeight, g.kernelWidth,  g.strideHeight,   g.strideWidth,
            g.padHeight,    g.padWidth};
}

// y[n][k][p][q] = bias[k] + sum_{r,s} x[n][k / multiplier][p*sh-ph+r][q*sw-pw+s] * w[k][0][r][s]
__global__ void depthwiseForwardKernel(DepthwiseParams p, const float* __restrict__ x,
                                       const float* __restrict__ w,
                                       const float* __restrict__ bias, float* __restrict__ y) {
    const int count = p.batch * p.outChannels * p.outHeight * p.outWidth;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int outColumn = i % p.outWidth;
        const int outRow = (i / p.outWidth) % p.outHeight;
        const int k = (i / (p.outWidth * p.outHeight)) % p.outChannels;
        const int image = i / (p.outWidth * p.outHeight * p.outChannels);
        const float* plane =
            x + (image * p.channels + k / p.multiplier) * (p.inHeight * p.inWidth);
        const float* filter = w + k * p.kernelHeight * p.kernelWidth;
        float sum = bias ? __ldg(bias + k) : 0.0f;
        for (int r = 0; r < p.kernelHeight; ++r) {
            const int h = outRow * p.strideHeight - p.padHeight + r;
            if (h < 0 || h >= p.inHeight) continue;
            for (int s = 0; s < p.kernelWidth; ++s) {
                const int wIndex = outColumn * p.strideWidth - p.padWidth + s;
                if (wIndex < 0 || wIndex >= p.inWidth) continue;
                sum = fmaf(__ldg(plane + h * p.inWidth + wIndex),
                           __ldg(filter + r * p.kernelWidth + s), sum);
            }
        }
        y[i] = sum;
    }
}

// Differentiates the forward line above with respect to x: each dx element gathers the
// (k, r, s, p, q) terms that read it.
__global__ void depthwiseBackwardDataKernel(DepthwiseParams p, const float* __restrict__ dy,
                                            const float* __restrict__ w,
                                            float* __restrict__ dx) {
    const int count = p.batch * p.channels * p.inHeight * p.inWidth;
    const int outPlane = p.outHeight * p.outWidth;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int column = i % p.inWidth;
        const int row = (i / p.inWidth) % p.inHeight;
        const int channel = (i / (p.inWidth * p.inHeight)) % p.channels;
        const int image = i / (p.inWidth * p.inHeight * p.channels);
        float sum = 0.0f;
        for (int j = 0; j < p.multiplier; ++j) {
            const int k = channel * p.multiplier + j;
            const float* gradPlane = dy + (image * p.outChannels + k) * outPlane;
            const float* filter = w + k * p.kernelHeight * p.kernelWidth;
            for (int r = 0; r < p.kernelHeight; ++r) {
                const int rowScaled = row + p.padHeight - r;  // = outRow * strideHeight
                if (rowScaled < 0 || rowScaled % p.strideHeight != 0) continue;
                const int outRow = rowScaled / p.strideHeight;
                if (outRow >= p.outHeight) continue;
                for (int s = 0; s < p.kernelWidth; ++s) {
                    const int columnScaled = column + p.padWidth - s;
                    if (columnScaled < 0 || columnScaled % p.strideWidth != 0) continue;
                    const int outColumn = columnScaled / p.strideWidth;
                    if (outColumn >= p.outWidth) continue;
                    sum = fmaf(__ldg(gradPlane + outRow * p.outWidth + outColumn),
                               __ldg(filter + r * p.kernelWidth + s), sum);
                }
            }
        }
        dx[i] = sum;
    }
}

// Differentiates the forward line with respect to w:
//   dw[k][0][r][s] = sum_{n,p,q} dy[n][k][p][q] * x[n][k / multiplier][p*sh-ph+r][q*sw-pw+s]
// A block takes one filter k, one part of its (n, p, q) positions and up to
// kDepthwiseTapsPerPass taps: each thread reads a dy value once and accumulates it into every
// tap in registers; the block then reduces each tap. With several parts, each writes its sums
// to scratch (partials[part][k][tap]) and sumSplitsKernel adds the parts in order.
constexpr int kDepthwiseFilterThreads = 256;
constexpr int kDepthwiseTapsPerPass = 16;
__global__ void __launch_bounds__(kDepthwiseFilterThreads)
depthwiseBackwardFilterKernel(DepthwiseParams p, const float* __restrict__ x,
                              const float* __restrict__ dy, int parts,
                              float* __restrict__ filterSums) {
    __shared__ float warpTotals[kDepthwiseTapsPerPass][kDepthwiseFilterThreads / 32];
    const int taps = p.kernelHeight * p.kernelWidth;
    const int k = blockIdx.x, part = blockIdx.y, firstTap = blockIdx.z * kDepthwiseTapsPerPass;
    const int outPlane = p.outHeight * p.outWidth;
    const int positions = p.batch * outPlane;
    const int chunk = (positions + parts - 1) / parts;
    const int begin = part * chunk, end = min(positions, begin + chunk);
    const float* inputChannel = x + (k / p.multiplier) * (p.inHeight * p.inWidth);
    const int inputImageStride = p.channels * p.inHeight * p.inWidth;

    int tapRow[kDepthwiseTapsPerPass], tapColumn[kDepthwiseTapsPerPass];
    float sums[kDepthwiseTapsPerPass];
#pragma unroll
    for (int t = 0; t < kDepthwiseTapsPerPass; ++t) {
        const int tap = firstTap + t;
        // Taps beyond the kernel get a row far outside the image, so they never accumulate.
        tapRow[t] = tap < taps ? tap / p.kernelWidth : kOutside;
        tapColumn[t] = tap < taps ? tap % p.kernelWidth : kOutside;
        sums[t] = 0.0f;
    }
    for (int e = begin + int(threadIdx.x); e < end; e += blockDim.x) {
        const int image = e / outPlane, pixel = e - image * outPlane;
        const int outRow = pixel / p.outWidth, outColumn = pixel - outRow * p.outWidth;
        const int originH = outRow * p.strideHeight - p.padHeight;
        const int originW = outColumn * p.strideWidth - p.padWidth;
        const float grad = __ldg(dy + (image * p.outChannels + k) * outPlane + pixel);
        const float* inputImage = inputChannel + image * inputImageStride;
#pragma unroll
        for (int t = 0; t < kDepthwiseTapsPerPass; ++t) {
            const int h = originH + tapRow[t], w = originW + tapColumn[t];
            if (unsigned(h) < unsigned(p.inHeight) && unsigned(w) < unsigned(p.inWidth))
                sums[t] = fmaf(grad, __ldg(inputImage + h * p.inWidth + w), sums[t]);
        }
    }
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int t = 0; t < kDepthwiseTapsPerPass; ++t) {
        const float total = warpSum(sums[t]);
        if (lane == 0) warpTotals[t][warp] = total;
    }
    __syncthreads();
    const int tap = firstTap + int(threadIdx.x);
    if (threadIdx.x < kDepthwiseTapsPerPass && tap < taps) {
        float total = 0.0f;
        for (int w = 0; w < kDepthwiseFilterThreads / 32; ++w) total += warpTotals[threadIdx.x][w];
        filterSums[(std::int64_t(part) * p.outChannels + k) * taps + tap] = total;
    }
}

// Parts of the (n, p, q) positions per filter for depthwiseBackwardFilterKernel: about four
// blocks per multiprocessor overall, at least 4096 positions per block.
int depthwiseFilterParts(const ConvGeometry& g, int multiprocessors) {
    const std::int64_t positions = std::int64_t(g.batch) * g.outHeight * g.outWidth;
    const std::int64_t wanted = (4 * std::int64_t(multiprocessors) + g.outChannels - 1) / g.outChannels;
    const std::int64_t most = positions / 4096;
    const std::int64_t parts = wanted < most ? wanted : most;
    return int(parts > 1 ? (parts < 65535 ? parts : 65535) : 1);
}

bool isDepthwise(const ConvGeometry& g) { return g.groups == g.inChannels && g.groups > 1; }

void requireGemmLimits(const ConvGeometry& g, const OpLabel& op) {
    if (g.groups > 65535)
        ops::failOp(op, "at most 65535 groups are supported on the GPU", "use fewer groups");
    for (int extent : {g.inHeight, g.inWidth, g.outHeight, g.outWidth, g.kernelHeight,
                       g.kernelWidth, g.padHeight, g.padWidth})
        if (extent > kMaxPackedExtent)
            ops::failOp(op,
                        "image sizes, kernel sizes and padding above " +
                            std::to_string(kMaxPackedExtent) + " are not supported on the GPU",
                        "resize the input or use the cudnn backend");
}

}  // namespace

// ---- the ops ---------------------------------------------------------------------------------

void CudaBackend::doConvForward(const ConvGeometry& g, const float* x, const float* w,
                                const float* bias, float* y) {
    const OpLabel op = opLabel("convForward");
    requireIndexable(g, op);
    activateDevice();
    if (storesBf16()) {
        convForwardChannelsLast(g, x, w, bias, y);
        return;
    }
    const int multiprocessors = deviceProperties().multiProcessorCount;
    if (isDepthwise(g)) {
        launchKernel("conv forward (depthwise)", depthwiseForwardKernel,
                     elementwiseBlocks(g.outputCount(), multiprocessors), 256, stream(),
                     depthwiseParams(g), x, w, bias, y);
        return;
    }
    requireGemmLimits(g, op);
    const ImplicitConvPlan plan = planImplicitConv(g, 1, 1, x, w, bias, y, multiprocessors);
    float* partials = plan.splits > 1
                          ? static_cast<float*>(workspace(implicitConvScratchBytes(plan)))
                          : nullptr;
    runImplicitConv(plan, bias, y, partials, multiprocessors, stream(),
                    "conv forward (implicit GEMM)");
}

void CudaBackend::doConvBackwardData(const ConvGeometry& g, const float* dy, const float* w,
                                     float* dx) {
    const OpLabel op = opLabel("convBackwardData");
    requireIndexable(g, op);
    activateDevice();
    if (storesBf16()) {
        convBackwardDataChannelsLast(g, dy, w, dx);
        return;
    }
    const int multiprocessors = deviceProperties().multiProcessorCount;
    if (isDepthwise(g)) {
        launchKernel("conv backward data (depthwise)", depthwiseBackwardDataKernel,
                     elementwiseBlocks(g.inputCount(), multiprocessors), 256, stream(),
                     depthwiseParams(g), dy, w, dx);
        return;
    }
    requireGemmLimits(g, op);
    const ConvGeometry transposed = backwardDataGeometry(g);

    const std::size_t weightBytes = alignUp256(std::size_t(g.weightCount()) * sizeof(float));
    ImplicitConvPlan plan = planImplicitConv(transposed, g.strideHeight, g.strideWidth, dy,
                                             nullptr, nullptr, dx, multiprocessors);
    char* scratch = static_cast<char*>(workspace(weightBytes + implicitConvScratchBytes(plan)));
    float* flippedWeights = reinterpret_cast<float*>(scratch);
    plan.params.weights = flippedWeights;
    launchKernel("conv backward data: transpose weights", transposeFlipWeightsKernel,
                 elementwiseBlocks(g.weightCount(), multiprocessors), 256, stream(), w,
                 g.outChannels, g.inChannels / g.groups, g.outChannels / g.groups,
                 g.kernelHeight, g.kernelWidth, flippedWeights);
    float* partials = plan.splits > 1 ? reinterpret_cast<float*>(scratch + weightBytes) : nullptr;
    runImplicitConv(plan, nullptr, dx, partials, multiprocessors, stream(),
                    "conv backward data (implicit GEMM)");
}

void CudaBackend::doConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                                       float* dw, float* dbias) {
    requireIndexable(g, opLabel("convBackwardFilter"));
    activateDevice();
    enqueueWeightGradient([&] { enqueueConvBackwardFilter(g, x, dy, dw, dbias); });
}

void CudaBackend::enqueueConvBackwardFilter(const ConvGeometry& g, const float* x,
                                            const float* dy, float* dw, float* dbias) {
    const OpLabel op = opLabel("convBackwardFilter");
    if (storesBf16()) {
        convBackwardFilterChannelsLast(g, x, dy, dw, dbias);
        return;
    }
    const int multiprocessors = deviceProperties().multiProcessorCount;
    const int outPlane = g.outHeight * g.outWidth;

    // Scratch: [partial dw of each K split or depthwise part][per-channel partial sums of dy
    // for dbias].
    FilterGradParams p{};
    int splits = 1;
    const bool depthwise = isDepthwise(g);
    if (!depthwise) {
        requireGemmLimits(g, op);
        p.input = x;
        p.outputGrad = dy;
        p.batch = g.batch, p.inChannels = g.inChannels, p.inHeight = g.inHeight;
        p.inWidth = g.inWidth;
        p.outChannels = g.outChannels, p.outHeight = g.outHeight, p.outWidth = g.outWidth;
        p.kernelHeight = g.kernelHeight, p.kernelWidth = g.kernelWidth;
        p.strideHeight = g.strideHeight, p.strideWidth = g.strideWidth;
        p.padHeight = g.padHeight, p.padWidth = g.padWidth;
        p.groups = g.groups;
        p.groupInChannels = g.inChannels / g.groups;
        p.groupOutChannels = g.outChannels / g.groups;
        p.gemmN = p.groupInChannels * g.kernelHeight * g.kernelWidth;
        p.gemmK = g.batch * outPlane;
        p.taps = g.kernelHeight * g.kernelWidth;
        p.inPlane = g.inHeight * g.inWidth;
        p.outPlane = outPlane;
        p.tileStepImages = kTileK / outPlane;
        p.tileStepPixels = kTileK % outPlane;
        p.tileStepRows = kTileK / g.outWidth;
        p.tileStepColumns = kTileK % g.outWidth;
        p.splitStride = g.weightCount();
        const GemmLaunch shape = gemmShape(p.groupOutChannels);
        const std::int64_t tiles = std::int64_t(g.groups) *
                                   ((p.groupOutChannels + shape.tileM - 1) / shape.tileM) *
                                   ((p.gemmN + kTileN - 1) / kTileN);
        splits = chooseSplits(tiles, p.gemmK, g.weightCount(), g.groups, multiprocessors,
                              shape.blocksPerMultiprocessor);
        const int kTiles = (p.gemmK + kTileK - 1) / kTileK;
        p.kPerSplit = (kTiles + splits - 1) / splits * kTileK;
        splits = (p.gemmK + p.kPerSplit - 1) / p.kPerSplit;
    }
    if (depthwise && g.kernelHeight * g.kernelWidth > 65535 * kDepthwiseTapsPerPass)
        ops::failOp(op, "depthwise kernels of more than a million taps are not supported on the GPU",
                    "use a smaller kernel");
    const int depthwiseParts = depthwise ? depthwiseFilterParts(g, multiprocessors) : 1;
    const int resultCopies = depthwise ? depthwiseParts : splits;
    const std::size_t partialBytes =
        resultCopies > 1 ? alignUp256(std::size_t(resultCopies) * g.weightCount() * sizeof(float))
                         : 0;
    const int biasSplits =
        dbias ? channelSumSplits(g.outChannels, std::int64_t(g.batch) * outPlane, multiprocessors)
              : 0;
    const std::size_t biasBytes = std::size_t(g.outChannels) * biasSplits * sizeof(double2);
    char* scratch = partialBytes + biasBytes > 0
                        ? static_cast<char*>(workspace(partialBytes + biasBytes))
                        : nullptr;

    if (depthwise) {
        const int taps = g.kernelHeight * g.kernelWidth;
        float* partials = depthwiseParts > 1 ? reinterpret_cast<float*>(scratch) : dw;
        launchKernel("conv backward filter (depthwise)", depthwiseBackwardFilterKernel,
                     dim3(unsigned(g.outChannels), unsigned(depthwiseParts),
                          unsigned((taps + kDepthwiseTapsPerPass - 1) / kDepthwiseTapsPerPass)),
                     kDepthwiseFilterThreads, stream(), depthwiseParams(g), x, dy, depthwiseParts,
                     partials);
        if (depthwiseParts > 1)
            launchKernel("conv backward filter (depthwise): sum of parts", sumSplitsKernel,
                         elementwiseBlocks(g.weightCount(), multiprocessors), 256, stream(),
                         static_cast<const float*>(partials), depthwiseParts, int(g.weightCount()),
                         static_cast<const float*>(nullptr), 1, 1, dw);
    } else {
        float* partials = splits > 1 ? reinterpret_cast<float*>(scratch) : nullptr;
        p.weightGrad = splits > 1 ? partials : dw;
        p.weightGradVectorised = p.gemmN % 4 == 0 && isAligned(p.weightGrad, 16);
        p.outputGradVectorised = p.outPlane % 4 == 0 && isAligned(p.outputGrad, 16);
        launchGemm<FilterGrad>("conv backward filter (implicit GEMM)", p, p.groupOutChannels,
                               p.gemmN, g.groups * splits, stream());
        if (splits > 1)
            launchKernel("conv backward filter: sum of split-K partials", sumSplitsKernel,
                         elementwiseBlocks(g.weightCount(), multiprocessors), 256, stream(),
                         static_cast<const float*>(partials), splits, int(g.weightCount()),
                         static_cast<const float*>(nullptr), 1, 1, dw);
    }

    if (dbias) {
        double2* biasPartials = reinterpret_cast<double2*>(scratch + partialBytes);
        launchKernel("conv backward bias: partial channel sums", channelPartialSumsKernel<false>,
                     dim3(unsigned(g.outChannels), unsigned(biasSplits)), kChannelSumThreads,
                     stream(), dy, static_cast<const float*>(nullptr), g.batch, g.outChannels,
                     outPlane, biasSplits, outPlane % 4 == 0 && isAligned(dy, 16), biasPartials);
        launchKernel("conv backward bias: channel totals", finishBiasGradKernel,
                     unsigned((g.outChannels + 255) / 256), 256, stream(),
                     static_cast<const double2*>(biasPartials), g.outChannels, biasSplits, dbias);
    }
}

}  // namespace cnnstudio::kernels
