// 2-D convolution (cross-correlation, as PyTorch's conv2d) with any stride, padding and groups.
//   x (N, C, H, W), w (K, C/G, R, S), bias (K), y (N, K, P, Q), g = the group of channel k
//   forward          y[n][k][p][q] = bias[k]
//                      + sum_{c,r,s} x[n][g*C/G + c][p*sh - ph + r][q*sw - pw + s] * w[k][c][r][s]
//   backward data    dx[n][c][h][w] = sum over every (k, r, s, p, q) of the forward line
//                      that read x[n][c][h][w], of dy[n][k][p][q] * w[k][c][r][s]
//   backward filter  dw[k][c][r][s] = sum_{n,p,q} dy[n][k][p][q] * x[n][g*C/G + c][p*sh-ph+r][q*sw-pw+s]
//                    dbias[k] = sum_{n,p,q} dy[n][k][p][q]
//
// All three are implicit GEMMs on the tiled SGEMM core (gemm.cuh), per group:
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
// data) element, and one block per (filter, tap) for the filter gradient.
//
// Tuned for: 3x3 stride 1, 64-256 channels, 48x48 to 12x12 maps, batch 256 (fer-cnn).
#include <cstdint>

#include "cuda/channel_sums.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/gemm.cuh"
#include "cuda/geometry_checks.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

using gemm::kPad;
using gemm::kTileK;
using gemm::kTileN;

// Loaders keep per-column window positions as two signed 16-bit halves of one register (the
// GEMM's 64 accumulators leave little room). Image sizes, kernels and padding up to
// kMaxPackedExtent keep every window position inside 16 bits (checked on the host).
constexpr int kMaxPackedExtent = 8192;
__host__ __device__ __forceinline__ int packPair(int high, int low) {
    return int((unsigned(high) << 16) | (unsigned(low) & 0xffffu));
}
__device__ __forceinline__ int pairHigh(int packed) { return packed >> 16; }
__device__ __forceinline__ int pairLow(int packed) { return int(short(packed & 0xffff)); }

// Window position of columns beyond N: far enough outside any image that every bounds test
// fails (also after adding a tap offset below kMaxPackedExtent), so those columns load zeros
// without a separate validity flag.
constexpr int kOutside = -32768;

bool isAligned16(const void* pointer) {
    return (reinterpret_cast<std::uintptr_t>(pointer) & 15u) == 0;
}

// Input row (or column) index that a window position reads, for an input dilated by
// `dilation` (1 in the forward pass): false when the position is padding or falls between two
// dilated input elements.
__device__ __forceinline__ bool inputIndex(int position, int dilation, int extent, int& index) {
    if (position < 0) return false;
    if (dilation != 1) {
        if (position % dilation != 0) return false;
        position /= dilation;
    }
    index = position;
    return position < extent;
}

// The tile of a thread block of either convolution GEMM: blockIdx.z enumerates (split, group),
// x and y the tiles of N and M; the split owns k in [kBegin, kEnd).
struct GroupSplitBlock {
    int m0, n0, kBegin, kEnd, group, split;
    template <class Params>
    __device__ GroupSplitBlock(const Params& p, int tileM, int tileN) {
        group = int(blockIdx.z) % p.groups;
        split = int(blockIdx.z) / p.groups;
        m0 = int(blockIdx.y) * tileM;
        n0 = int(blockIdx.x) * tileN;
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
    bool weightsVectorised;  // gemmK % 4 == 0 and weights 16-byte aligned
    bool outputVectorised;   // outHeight * outWidth % 4 == 0 and output 16-byte aligned
};

struct ImplicitConv {
    using Params = ImplicitConvParams;

    using Block = GroupSplitBlock;

    // A = the group's weights, row m holding gemmK contiguous values. Two threads per row,
    // four consecutive k each (one float4 when aligned).
    template <int TileM, int Threads>
    struct ALoader {
        static_assert(Threads == 2 * TileM, "two threads per tile row");
        static constexpr int kStaged = 4;
        int row, kOffset;
        const float* rowPointer;  // null when the row is beyond M

        __device__ ALoader(const Params& p, const Block& b, int thread)
            : row(thread / 2), kOffset((thread % 2) * 4) {
            const int m = b.m0 + row;
            rowPointer = m < p.groupOutChannels
                             ? p.weights + std::int64_t(b.group * p.groupOutChannels + m) * p.gemmK
                             : nullptr;
        }
        __device__ void load(const Params& p, const Block& b, int k0,
                             float (&staged)[kStaged]) const {
            const int k = k0 + kOffset;
            if (rowPointer && p.weightsVectorised && k < b.kEnd) {
                // gemmK and k are multiples of 4 and kEnd is gemmK or a multiple of 8, so
                // k..k+3 all lie inside the range.
                const float4 v = __ldg(reinterpret_cast<const float4*>(rowPointer + k));
                staged[0] = v.x, staged[1] = v.y, staged[2] = v.z, staged[3] = v.w;
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    staged[j] = rowPointer && k + j < b.kEnd ? __ldg(rowPointer + k + j) : 0.0f;
            }
        }
        __device__ void store(const float (&staged)[kStaged], float (*tile)[TileM + kPad]) const {
#pragma unroll
            for (int j = 0; j < 4; ++j) tile[kOffset + j][row] = staged[j];
        }
    };

    // B = im2col(x): B[k = (c, r, s)][n = (image, p, q)]. A warp reads 32 consecutive output
    // pixels of one k row (consecutive input addresses for stride 1); each thread keeps four
    // columns (lane + 32 j) for the whole K loop and decodes its k row once per tile.
    template <int Threads>
    struct BLoader {
        static constexpr int kRowGroups = Threads / 32;
        static constexpr int kRows = kTileK / kRowGroups;  // 1 (256 threads) or 2 (128)
        static constexpr int kStaged = 4 * kRows;
        int firstRow, column;
        int imageOffset[4];  // (image, first channel of the group) plane offset
        int origin[4];       // packed window origin of the column's output pixel (packOrigin)

        __device__ BLoader(const Params& p, const Block& b, int thread)
            : firstRow(thread / 32), column(thread % 32) {
            const int outPlane = p.outHeight * p.outWidth;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int n = b.n0 + column + 32 * j;
                if (n < p.gemmN) {
                    const int image = n / outPlane, pixel = n - image * outPlane;
                    const int outRow = pixel / p.outWidth, outColumn = pixel - outRow * p.outWidth;
                    imageOffset[j] = (image * p.inChannels + b.group * p.groupInChannels) *
                                     (p.inHeight * p.inWidth);
                    origin[j] = packPair(outRow * p.strideHeight - p.padHeight,
                                         outColumn * p.strideWidth - p.padWidth);
                } else {
                    imageOffset[j] = 0;
                    origin[j] = packPair(kOutside, kOutside);
                }
            }
        }
        __device__ void load(const Params& p, const Block& b, int k0,
                             float (&staged)[kStaged]) const {
            const int taps = p.kernelHeight * p.kernelWidth;
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
                const int k = k0 + firstRow + kRowGroups * i;
                if (k >= b.kEnd) {
#pragma unroll
                    for (int j = 0; j < 4; ++j) staged[i * 4 + j] = 0.0f;
                    continue;
                }
                const int channel = k / taps, tap = k - channel * taps;
                const int r = tap / p.kernelWidth, s = tap - r * p.kernelWidth;
                const float* channelBase = p.input + channel * (p.inHeight * p.inWidth);
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    int h = 0, w = 0;
                    const bool inside =
                        inputIndex(pairHigh(origin[j]) + r, p.dilationHeight, p.inHeight, h) &&
                        inputIndex(pairLow(origin[j]) + s, p.dilationWidth, p.inWidth, w);
                    staged[i * 4 + j] =
                        inside ? __ldg(channelBase + imageOffset[j] + h * p.inWidth + w) : 0.0f;
                }
            }
        }
        __device__ void store(const float (&staged)[kStaged], float (*tile)[kTileN + kPad]) const {
#pragma unroll
            for (int i = 0; i < kRows; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    tile[firstRow + kRowGroups * i][column + 32 * j] = staged[i * 4 + j];
        }
    };

    // C[m][n..n+3] -> y[image][group*M + m][pixel..pixel+3] (+ bias).
    __device__ static void storeQuad(const Params& p, const Block& b, int m, int n,
                                     const float (&values)[4]) {
        if (m >= p.groupOutChannels || n >= p.gemmN) return;
        const int channel = b.group * p.groupOutChannels + m;
        const int outPlane = p.outHeight * p.outWidth;
        const float bias = p.bias ? __ldg(p.bias + channel) : 0.0f;
        float* output = p.output + b.split * p.splitStride;
        if (p.outputVectorised) {
            // outPlane and n are multiples of 4: the four pixels are contiguous in one image.
            const int image = n / outPlane, pixel = n - image * outPlane;
            *reinterpret_cast<float4*>(output + (image * p.outChannels + channel) * outPlane +
                                       pixel) =
                float4{values[0] + bias, values[1] + bias, values[2] + bias, values[3] + bias};
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                if (n + q >= p.gemmN) break;
                const int image = (n + q) / outPlane, pixel = (n + q) - image * outPlane;
                output[(image * p.outChannels + channel) * outPlane + pixel] = values[q] + bias;
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
    bool outputGradVectorised;  // outHeight * outWidth % 4 == 0 and dy 16-byte aligned
    bool weightGradVectorised;  // gemmN % 4 == 0 and weightGrad 16-byte aligned
};

struct FilterGrad {
    using Params = FilterGradParams;
    using Block = GroupSplitBlock;

    // A = dy of the group's output channels: row m, k = (image, pixel). Two threads per row,
    // four consecutive k each.
    template <int TileM, int Threads>
    struct ALoader {
        static_assert(Threads == 2 * TileM, "two threads per tile row");
        static constexpr int kStaged = 4;
        int row, kOffset;
        const float* channelPointer;  // dy plane of image 0 for this row; null beyond M

        __device__ ALoader(const Params& p, const Block& b, int thread)
            : row(thread / 2), kOffset((thread % 2) * 4) {
            const int m = b.m0 + row;
            channelPointer = m < p.groupOutChannels
                                 ? p.outputGrad + (b.group * p.groupOutChannels + m) *
                                                      (p.outHeight * p.outWidth)
                                 : nullptr;
        }
        __device__ void load(const Params& p, const Block& b, int k0,
                             float (&staged)[kStaged]) const {
            const int k = k0 + kOffset;
            const int outPlane = p.outHeight * p.outWidth;
            const int imageStride = p.outChannels * outPlane;
            if (channelPointer && p.outputGradVectorised && k < b.kEnd) {
                // outPlane, k and kEnd are multiples of 4: k..k+3 lie in one image.
                const int image = k / outPlane, pixel = k - image * outPlane;
                const float4 v = __ldg(
                    reinterpret_cast<const float4*>(channelPointer + image * imageStride + pixel));
                staged[0] = v.x, staged[1] = v.y, staged[2] = v.z, staged[3] = v.w;
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    staged[j] = 0.0f;
                    if (channelPointer && k + j < b.kEnd) {
                        const int image = (k + j) / outPlane, pixel = (k + j) - image * outPlane;
                        staged[j] = __ldg(channelPointer + image * imageStride + pixel);
                    }
                }
            }
        }
        __device__ void store(const float (&staged)[kStaged], float (*tile)[TileM + kPad]) const {
#pragma unroll
            for (int j = 0; j < 4; ++j) tile[kOffset + j][row] = staged[j];
        }
    };

    // B = im2col(x)^T: B[k = (image, p, q)][n = (c, r, s)]. Eight threads cover the eight k
    // rows of a tile (consecutive output pixels: one 32-byte sector of x per column for stride
    // 1); each thread keeps groups of four consecutive columns for the whole K loop and stores
    // each group as one float4.
    template <int Threads>
    struct BLoader {
        static constexpr int kColumnGroups = Threads / kTileK;              // 32 or 16
        static constexpr int kSets = kTileN / (4 * kColumnGroups);          // 1 or 2
        static constexpr int kStaged = 4 * kSets;
        int row, firstColumn;
        int channelOffset[kStaged];  // plane offset of the column's input channel
        int tap[kStaged];            // packed (r, s) of the column; kOutside beyond N

        __device__ BLoader(const Params& p, const Block& b, int thread)
            : row(thread % kTileK), firstColumn((thread / kTileK) * 4) {
            const int taps = p.kernelHeight * p.kernelWidth;
#pragma unroll
            for (int set = 0; set < kSets; ++set)
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int index = set * 4 + q;
                    const int n = b.n0 + firstColumn + set * 4 * kColumnGroups + q;
                    if (n < p.gemmN) {
                        const int channel = n / taps, r = (n - channel * taps) / p.kernelWidth;
                        const int s = n - channel * taps - r * p.kernelWidth;
                        channelOffset[index] = (b.group * p.groupInChannels + channel) *
                                               (p.inHeight * p.inWidth);
                        tap[index] = packPair(r, s);
                    } else {
                        channelOffset[index] = 0;
                        tap[index] = packPair(kOutside, kOutside);
                    }
                }
        }
        __device__ void load(const Params& p, const Block& b, int k0,
                             float (&staged)[kStaged]) const {
            const int k = k0 + row;
            if (k >= b.kEnd) {
#pragma unroll
                for (int i = 0; i < kStaged; ++i) staged[i] = 0.0f;
                return;
            }
            const int outPlane = p.outHeight * p.outWidth;
            const int image = k / outPlane, pixel = k - image * outPlane;
            const int outRow = pixel / p.outWidth, outColumn = pixel - outRow * p.outWidth;
            const int originH = outRow * p.strideHeight - p.padHeight;
            const int originW = outColumn * p.strideWidth - p.padWidth;
            const float* imageBase = p.input + image * p.inChannels * (p.inHeight * p.inWidth);
#pragma unroll
            for (int i = 0; i < kStaged; ++i) {
                const int h = originH + pairHigh(tap[i]), w = originW + pairLow(tap[i]);
                const bool inside = h >= 0 && h < p.inHeight && w >= 0 && w < p.inWidth;
                staged[i] = inside ? __ldg(imageBase + channelOffset[i] + h * p.inWidth + w) : 0.0f;
            }
        }
        __device__ void store(const float (&staged)[kStaged], float (*tile)[kTileN + kPad]) const {
#pragma unroll
            for (int set = 0; set < kSets; ++set)
                *reinterpret_cast<float4*>(&tile[row][firstColumn + set * 4 * kColumnGroups]) =
                    float4{staged[set * 4], staged[set * 4 + 1], staged[set * 4 + 2],
                           staged[set * 4 + 3]};
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
    const dim3 grid(unsigned((gemmN + kTileN - 1) / kTileN),
                    unsigned((gemmM + shape.tileM - 1) / shape.tileM), unsigned(gridZ));
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

// Runs y = conv(x, w) (+ bias) through the implicit GEMM, splitting K when the output alone
// does not fill the GPU. `dilation` is the input dilation (1 for a forward convolution).
// Scratch: `scratch` must hold implicitConvScratchBytes(...) bytes.
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
    p.weightsVectorised = p.gemmK % 4 == 0 && isAligned16(w);
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
    p.outputVectorised = (g.outHeight * g.outWidth) % 4 == 0 && isAligned16(y);
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
            plan.params.outputVectorised && isAligned16(partials);
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

// Differentiates the forward line with respect to w: one block per (k, r, s) sums
// dy[n][k][p][q] * x[n][k / multiplier][p*sh-ph+r][q*sw-pw+s] over n, p, q.
constexpr int kDepthwiseFilterThreads = 256;
__global__ void __launch_bounds__(kDepthwiseFilterThreads)
depthwiseBackwardFilterKernel(DepthwiseParams p, const float* __restrict__ x,
                              const float* __restrict__ dy, float* __restrict__ dw) {
    const int taps = p.kernelHeight * p.kernelWidth;
    const int k = blockIdx.x / taps, tap = blockIdx.x % taps;
    const int r = tap / p.kernelWidth, s = tap % p.kernelWidth;
    const int outPlane = p.outHeight * p.outWidth;
    const float* inputChannel = x + (k / p.multiplier) * (p.inHeight * p.inWidth);
    const int inputImageStride = p.channels * p.inHeight * p.inWidth;
    float sum = 0.0f;
    for (int e = threadIdx.x; e < p.batch * outPlane; e += blockDim.x) {
        const int image = e / outPlane, pixel = e - image * outPlane;
        const int outRow = pixel / p.outWidth, outColumn = pixel - outRow * p.outWidth;
        const int h = outRow * p.strideHeight - p.padHeight + r;
        const int wIndex = outColumn * p.strideWidth - p.padWidth + s;
        if (h < 0 || h >= p.inHeight || wIndex < 0 || wIndex >= p.inWidth) continue;
        sum = fmaf(__ldg(dy + (image * p.outChannels + k) * outPlane + pixel),
                   __ldg(inputChannel + image * inputImageStride + h * p.inWidth + wIndex), sum);
    }
    sum = blockSum(sum);
    if (threadIdx.x == 0) dw[blockIdx.x] = sum;
}

bool isDepthwise(const ConvGeometry& g) { return g.groups == g.inChannels && g.groups > 1; }

void requireGemmLimits(const ConvGeometry& g, const char* op) {
    requireOp(g.groups <= 65535, op, "at most 65535 groups are supported on the GPU");
    for (int extent : {g.inHeight, g.inWidth, g.outHeight, g.outWidth, g.kernelHeight,
                       g.kernelWidth, g.padHeight, g.padWidth})
        requireOp(extent <= kMaxPackedExtent, op,
                  "image sizes, kernel sizes and padding above " +
                      std::to_string(kMaxPackedExtent) + " are not supported on the GPU");
}

}  // namespace

// ---- the ops ---------------------------------------------------------------------------------

void CudaBackend::convForward(const ConvGeometry& g, const float* x, const float* w,
                              const float* bias, float* y) {
    constexpr const char* op = "convForward";
    validateConv(g, op);
    requirePointer(x, op, "x");
    requirePointer(w, op, "w");
    requirePointer(y, op, "y");
    activateDevice();
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

void CudaBackend::convBackwardData(const ConvGeometry& g, const float* dy, const float* w,
                                   float* dx) {
    constexpr const char* op = "convBackwardData";
    validateConv(g, op);
    requirePointer(dy, op, "dy");
    requirePointer(w, op, "w");
    requirePointer(dx, op, "dx");
    activateDevice();
    const int multiprocessors = deviceProperties().multiProcessorCount;
    if (isDepthwise(g)) {
        launchKernel("conv backward data (depthwise)", depthwiseBackwardDataKernel,
                     elementwiseBlocks(g.inputCount(), multiprocessors), 256, stream(),
                     depthwiseParams(g), dy, w, dx);
        return;
    }
    requireGemmLimits(g, op);
    // dx = conv(dy dilated by the stride, flipped and transposed w), stride 1.
    ConvGeometry transposed{};
    transposed.batch = g.batch;
    transposed.inChannels = g.outChannels;
    transposed.inHeight = g.outHeight;
    transposed.inWidth = g.outWidth;
    transposed.outChannels = g.inChannels;
    transposed.outHeight = g.inHeight;
    transposed.outWidth = g.inWidth;
    transposed.kernelHeight = g.kernelHeight;
    transposed.kernelWidth = g.kernelWidth;
    transposed.strideHeight = 1;
    transposed.strideWidth = 1;
    transposed.padHeight = g.kernelHeight - 1 - g.padHeight;
    transposed.padWidth = g.kernelWidth - 1 - g.padWidth;
    transposed.groups = g.groups;

    const std::size_t weightBytes = alignUp256(std::size_t(g.weightCount()) * sizeof(float));
    // The plan only needs the weights' alignment, which the scratch buffer guarantees.
    ImplicitConvPlan plan = planImplicitConv(transposed, g.strideHeight, g.strideWidth, dy,
                                             nullptr, nullptr, dx, multiprocessors);
    char* scratch = static_cast<char*>(workspace(weightBytes + implicitConvScratchBytes(plan)));
    float* flippedWeights = reinterpret_cast<float*>(scratch);
    plan.params.weights = flippedWeights;
    plan.params.weightsVectorised = plan.params.gemmK % 4 == 0;
    launchKernel("conv backward data: transpose weights", transposeFlipWeightsKernel,
                 elementwiseBlocks(g.weightCount(), multiprocessors), 256, stream(), w,
                 g.outChannels, g.inChannels / g.groups, g.outChannels / g.groups,
                 g.kernelHeight, g.kernelWidth, flippedWeights);
    float* partials = plan.splits > 1 ? reinterpret_cast<float*>(scratch + weightBytes) : nullptr;
    runImplicitConv(plan, nullptr, dx, partials, multiprocessors, stream(),
                    "conv backward data (implicit GEMM)");
}

void CudaBackend::convBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                                     float* dw, float* dbias) {
    constexpr const char* op = "convBackwardFilter";
    validateConv(g, op);
    requirePointer(x, op, "x");
    requirePointer(dy, op, "dy");
    requirePointer(dw, op, "dw");
    activateDevice();
    const int multiprocessors = deviceProperties().multiProcessorCount;
    const int outPlane = g.outHeight * g.outWidth;

    // Scratch: [split-K partials of dw][per-channel partial sums of dy for dbias].
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
        p.outputGradVectorised = outPlane % 4 == 0 && isAligned16(dy);
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
    const std::size_t partialBytes =
        splits > 1 ? alignUp256(std::size_t(splits) * g.weightCount() * sizeof(float)) : 0;
    const int biasSplits =
        dbias ? channelSumSplits(g.outChannels, std::int64_t(g.batch) * outPlane, multiprocessors)
              : 0;
    const std::size_t biasBytes = std::size_t(g.outChannels) * biasSplits * sizeof(double2);
    char* scratch = partialBytes + biasBytes > 0
                        ? static_cast<char*>(workspace(partialBytes + biasBytes))
                        : nullptr;

    if (depthwise) {
        launchKernel("conv backward filter (depthwise)", depthwiseBackwardFilterKernel,
                     unsigned(g.outChannels * g.kernelHeight * g.kernelWidth),
                     kDepthwiseFilterThreads, stream(), depthwiseParams(g), x, dy, dw);
    } else {
        float* partials = splits > 1 ? reinterpret_cast<float*>(scratch) : nullptr;
        p.weightGrad = splits > 1 ? partials : dw;
        p.weightGradVectorised = p.gemmN % 4 == 0 && isAligned16(p.weightGrad);
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
                     outPlane, biasSplits, outPlane % 4 == 0 && isAligned16(dy), biasPartials);
        launchKernel("conv backward bias: channel totals", finishBiasGradKernel,
                     unsigned((g.outChannels + 255) / 256), 256, stream(),
                     static_cast<const double2*>(biasPartials), g.outChannels, biasSplits, dbias);
    }
}

}  // namespace cnnstudio::kernels
