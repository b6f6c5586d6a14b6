// Direct convolutions over inputs of fewer than 8 channels, bf16 channels-last (see
// small_input_conv.h for the ops and why they are not on the tensor cores). T = C*R*S is the
// length of one filter (a row of the KCRS weights), t = (c*R + r)*S + s a tap of it.
//
// The work per output is small (T multiply-adds), so these kernels are built around memory
// traffic and the overhead around each multiply-add. Nsight Compute on the first versions
// (docs/logs/2026-12-02-input-layer): the forward pass was bound by shared-memory reads, one per
// four multiply-adds; the filter pass by load latency, each channel lane of a pixel fetching the
// same input values and waiting on them.
// forward: one thread per (4 neighbouring output pixels of a row, KC output channels), KC = 16
//   when K allows (8 or 1 otherwise). The block first copies the weights into shared memory as
//   [t][K]; each 16-byte read of 4 weights then feeds 16 multiply-adds. (A thread per (pixel,
//   8 channels) holding its 72 weights in registers, for grey 3x3 layers, took 0.074 ms on
//   fer-cnn's input layer against this kernel's 0.059: docs/logs/2026-12-03-input-layer-pipelined.)
// backward filter: the result is T rows of K, and row T for dbias (a tap whose input is 1).
//   1. a grid of splits over the output pixels, each summing its pixels -> partials[split][row][K]:
//      on the tensor cores when dy comes in 16-byte packs (K % 8 == 0), as a GEMM of dy and the
//      pixels' tap values (smallInputConvFilterPartialsMmaKernel), else a channel a lane on the
//      CUDA cores. The CUDA-core form with 8-channel vectors, its loads pipelined, took 0.071 ms
//      on fer-cnn's input layer (masked by the ReLU, batch 256), the tensor-core form 0.048
//      (docs/logs/2026-12-04-filter-mma).
//   2. 32 elements x 8 split lanes per block: each lane adds every eighth split (reads of 32
//      consecutive elements), then the lanes are added in order -> dw (KCRS) and dbias.
// input block (conv -> batch norm -> ReLU in training, small_input_conv.h has the maths):
//   forward: the patches' moments (a pass over x only), one block turning them into the
//   statistics and the folded weights, then the forward kernel above with those weights and the
//   ReLU; that block keeps the moments in c's room. backward: the filter partials above with dy
//   masked by the ReLU's output, their split sums, and one block turning sums and the kept
//   moments into the gradients.
// Every kernel here (and filterFinishKernel) is a dependent launch (runtime/launch.cuh), as the
// batch norm's: the input block's five kernels follow one another on the step's critical path.
// Nothing is added by atomics, so results do not depend on scheduling. Counts stay below 2^30
// (index_limits.h), so indices are 32-bit.
#include <algorithm>
#include <cstdint>


#include "cuda/activation_storage.cuh"
#include "cuda/direct_conv_channels_last.h"
#include "cuda/gemm_bf16.cuh"
#include "cuda/small_input_conv.h"
#include "runtime/async_copy.cuh"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

constexpr int kMaxInputChannels = 8;  // exclusive: C < 8
constexpr int kMaxWeights = 12288;    // K*C*R*S: 48 KiB of fp32 in shared memory
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kPixelsPerThread = 4;                      // forward
constexpr int kChannelLanes = 8;                         // per pixel, backward filter
constexpr int kPixelLanes = kThreads / kChannelLanes;    // 32 per block
constexpr int kPixelLanesPerWarp = 32 / kChannelLanes;   // 4
constexpr int kTapChunk = 10;  // rows summed per pass over dy: a 3x3 kernel over one channel and
                               // the bias row (with 9, the bias row took a second pass over dy)
constexpr int kMaxFilterSplits = 640;  // about one wave of the tensor-core form on an H200
constexpr int kMinPixelsPerSplit = 256;

struct SmallConv {
    int batch, inChannels, inHeight, inWidth;
    int outChannels, outHeight, outWidth;
    int kernelHeight, kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
    int taps;  // T = inChannels * kernelHeight * kernelWidth

    explicit SmallConv(const ConvGeometry& g)
        : batch(g.batch), inChannels(g.inChannels), inHeight(g.inHeight), inWidth(g.inWidth),
          outChannels(g.outChannels), outHeight(g.outHeight), outWidth(g.outWidth),
          kernelHeight(g.kernelHeight), kernelWidth(g.kernelWidth),
          strideHeight(g.strideHeight), strideWidth(g.strideWidth), padHeight(g.padHeight),
          padWidth(g.padWidth), taps(g.inChannels * g.kernelHeight * g.kernelWidth) {}

    __device__ int tap(int c, int r, int s) const { return (c * kernelHeight + r) * kernelWidth + s; }
};

// An output pixel and the top-left input position of its window.
struct OutputPixel {
    int n = 0, p = 0, q = 0;

    OutputPixel() = default;
    __device__ OutputPixel(const SmallConv& g, int pixel) {
        q = pixel % g.outWidth;
        const int row = pixel / g.outWidth;
        p = row % g.outHeight;
        n = row / g.outHeight;
    }
    __device__ int top(const SmallConv& g) const { return p * g.strideHeight - g.padHeight; }
    __device__ int left(const SmallConv& g) const { return q * g.strideWidth - g.padWidth; }
    // The pixel `step` further (step > 0), without dividing.
    __device__ void advance(const SmallConv& g, int step) {
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

// The input value a tap of output pixel `at` reads: zero in the padding.
__device__ __forceinline__ float tapInput(const SmallConv& g, const __nv_bfloat16* __restrict__ x,
                                          const OutputPixel& at, int c, int r, int s) {
    const int h = at.top(g) + r, column = at.left(g) + s;
    if (h < 0 || h >= g.inHeight || column < 0 || column >= g.inWidth) return 0.0f;
    return __bfloat162float(x[((at.n * g.inHeight + h) * g.inWidth + column) * g.inChannels + c]);
}

// shared[t * K + k] = w[k * T + t]: the weights with each tap's K values contiguous.
__device__ void loadWeightsByTap(const SmallConv& g, const float* __restrict__ w, float* shared) {
    const int count = g.taps * g.outChannels;
    for (int i = int(threadIdx.x); i < count; i += int(blockDim.x)) {
        const int t = i / g.outChannels, k = i - t * g.outChannels;
        shared[i] = __ldg(w + k * g.taps + t);
    }
}

template <int KC>
__global__ void __launch_bounds__(kThreads)
smallInputConvForwardKernel(SmallConv g, const __nv_bfloat16* __restrict__ x,
                            const float* __restrict__ w, const float* __restrict__ bias,
                            bool relu, __nv_bfloat16* __restrict__ y) {
    startAfterPriorGrid();
    extern __shared__ float4 sharedMemory[];
    float* weights = reinterpret_cast<float*>(sharedMemory);  // [t][K]
    loadWeightsByTap(g, w, weights);
    __syncthreads();
    constexpr int kPixels = kPixelsPerThread;
    const int chunks = g.outChannels / KC;
    const int pixelGroups = (g.outWidth + kPixels - 1) / kPixels;  // per output row
    const int count = g.batch * g.outHeight * pixelGroups * chunks;
    for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < count;
         i += int(gridDim.x * blockDim.x)) {
        const int group = i / chunks, k0 = (i - group * chunks) * KC;
        const int row = group / pixelGroups, q0 = (group - row * pixelGroups) * kPixels;
        const int p = row % g.outHeight, n = row / g.outHeight;
        float acc[kPixels][KC];
#pragma unroll
        for (int j = 0; j < KC; ++j) {
            const float start = bias != nullptr ? __ldg(bias + k0 + j) : 0.0f;
#pragma unroll
            for (int px = 0; px < kPixels; ++px) acc[px][j] = start;
        }
        for (int c = 0; c < g.inChannels; ++c)
            for (int r = 0; r < g.kernelHeight; ++r) {
                const int h = p * g.strideHeight - g.padHeight + r;
                if (h < 0 || h >= g.inHeight) continue;  // zeros: nothing to add
                const __nv_bfloat16* inRow = x + (n * g.inHeight + h) * g.inWidth * g.inChannels + c;
                for (int s = 0; s < g.kernelWidth; ++s) {
                    float value[kPixels];
#pragma unroll
                    for (int px = 0; px < kPixels; ++px) {
                        const int column = (q0 + px) * g.strideWidth - g.padWidth + s;
                        value[px] = column >= 0 && column < g.inWidth
                                        ? __bfloat162float(inRow[column * g.inChannels])
                                        : 0.0f;
                    }
                    float tapWeights[KC];
                    loadFloats<KC>(weights + g.tap(c, r, s) * g.outChannels + k0, tapWeights);
#pragma unroll
                    for (int px = 0; px < kPixels; ++px)
#pragma unroll
                        for (int j = 0; j < KC; ++j) acc[px][j] = fmaf(value[px], tapWeights[j], acc[px][j]);
                }
            }
        if (relu)
#pragma unroll
            for (int px = 0; px < kPixels; ++px)
#pragma unroll
                for (int j = 0; j < KC; ++j) acc[px][j] = fmaxf(acc[px][j], 0.0f);
#pragma unroll
        for (int px = 0; px < kPixels; ++px)
            if (q0 + px < g.outWidth)
                storeBf16<KC % 8 == 0 ? 8 : 1>(acc[px], y + (row * g.outWidth + q0 + px) * g.outChannels + k0);
    }
}

// The backward filter's splits: ranges of output pixels, at most kMaxFilterSplits; they depend
// on the geometry only, so the workspace size is known before the launch.
struct FilterSplits {
    int pixelsPerSplit, splits;
};

FilterSplits filterSplits(const ConvGeometry& g) {
    const int pixels = g.batch * g.outHeight * g.outWidth;
    int perSplit = (pixels + kMaxFilterSplits - 1) / kMaxFilterSplits;
    if (perSplit < kMinPixelsPerSplit) perSplit = kMinPixelsPerSplit;
    return {perSplit, (pixels + perSplit - 1) / perSplit};
}

// One tap of the chunk a lane sums, packed in one register: c << 16 | r << 8 | s (kernel sizes
// below 256), kBiasTap for the bias row, kNoTap past the last row.
constexpr int kBiasTap = -2;
constexpr int kNoTap = -1;

__device__ int tapCode(const SmallConv& g, int t, int tapRows) {
    if (t >= tapRows) return kNoTap;
    if (t == g.taps) return kBiasTap;
    const int s = t % g.kernelWidth, cr = t / g.kernelWidth;
    return (cr / g.kernelHeight) << 16 | (cr % g.kernelHeight) << 8 | s;
}

// The input value of tap `code` for output pixel `at` (zero past the split).
__device__ __forceinline__ float tapValue(const SmallConv& g, const __nv_bfloat16* __restrict__ x,
                                          int code, const OutputPixel& at, bool inSplit) {
    if (code == kNoTap || !inSplit) return 0.0f;
    if (code == kBiasTap) return 1.0f;
    return tapInput(g, x, at, code >> 16, (code >> 8) & 0xff, code & 0xff);
}

// Whether the filter partials gate dy by the ReLU's output (dy where y > 0).
enum class Gate { None, ReluOutput };

// tapRows = T + 1 when dbias is wanted, else T. Gate::ReluOutput: dy counts as zero where the
// ReLU's output `relu` (the layout of dy) is not positive, for the input block's backward. The form on the CUDA
// cores, for dy that does not come in 16-byte packs (K % 8 != 0; the tensor cores take the rest,
// below): a block is 32 pixel lanes x 8 channel lanes, a channel lane one channel of a pixel,
// which it multiplies by the pixel's kTapChunk tap values; the eight lanes of a pixel fetch them
// (one or two each) and pass them round by shuffles. Channel blocks of 8 and tap chunks are
// passes over the split's pixels; at the end of a pass the pixel lanes are added in order
// (shuffles, then across warps).
template <Gate G>
__global__ void __launch_bounds__(kThreads)
smallInputConvFilterPartialsKernel(SmallConv g, const __nv_bfloat16* __restrict__ x,
                                   const __nv_bfloat16* __restrict__ dy,
                                   const __nv_bfloat16* __restrict__ relu, int tapRows,
                                   int pixelsPerSplit, float* __restrict__ partials) {
    startAfterPriorGrid();
    static_assert(kTapChunk <= 2 * kChannelLanes, "a channel lane fetches at most two taps");
    __shared__ float warpSums[kWarps][kChannelLanes][kTapChunk];
    const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
    const int channelLane = lane % kChannelLanes, groupFirstLane = lane - channelLane;
    const int pixelLane = lane / kChannelLanes + kPixelLanesPerWarp * warp;
    const int pixels = g.batch * g.outHeight * g.outWidth;
    const int first = int(blockIdx.x) * pixelsPerSplit;
    const int last = min(pixels, first + pixelsPerSplit);
    float* splitPartials = partials + std::int64_t(blockIdx.x) * tapRows * g.outChannels;
    for (int channelBlock = 0; channelBlock < g.outChannels; channelBlock += kChannelLanes) {
        const int k = channelBlock + channelLane;
        const bool hasChannel = k < g.outChannels;
        for (int tapBase = 0; tapBase < tapRows; tapBase += kTapChunk) {
            // This lane fetches taps channelLane and channelLane + 8 of the chunk.
            const int low = tapCode(g, tapBase + channelLane, tapRows);
            const int high = channelLane + kChannelLanes < kTapChunk
                                 ? tapCode(g, tapBase + channelLane + kChannelLanes, tapRows)
                                 : kNoTap;
            float acc[kTapChunk] = {};
            OutputPixel at(g, min(first + pixelLane, pixels - 1));
            for (int base = first; base < last; base += kPixelLanes) {
                const int pixel = base + pixelLane;
                const bool inSplit = pixel < last;
                const float lowValue = tapValue(g, x, low, at, inSplit);
                const float highValue = tapValue(g, x, high, at, inSplit);
                at.advance(g, kPixelLanes);
                float gradient = 0.0f;
                if (inSplit && hasChannel) {
                    const int element = pixel * g.outChannels + k;
                    gradient = __bfloat162float(dy[element]);
                    if (G == Gate::ReluOutput && !(__bfloat162float(relu[element]) > 0.0f)) gradient = 0.0f;
                }
#pragma unroll
                for (int tc = 0; tc < kTapChunk; ++tc) {
                    const float value = __shfl_sync(0xffffffffu, tc < kChannelLanes ? lowValue : highValue,
                                                    groupFirstLane + tc % kChannelLanes);
                    acc[tc] = fmaf(value, gradient, acc[tc]);
                }
            }
            // The warp's four pixel lanes of each channel lane, then the warps, in order.
#pragma unroll
            for (int tc = 0; tc < kTapChunk; ++tc) {
                acc[tc] += __shfl_xor_sync(0xffffffffu, acc[tc], kChannelLanes);
                acc[tc] += __shfl_xor_sync(0xffffffffu, acc[tc], 2 * kChannelLanes);
                if (lane < kChannelLanes) warpSums[warp][channelLane][tc] = acc[tc];
            }
            __syncthreads();
            for (int e = int(threadIdx.x); e < kChannelLanes * kTapChunk; e += kThreads) {
                const int tc = e / kChannelLanes, laneOfK = e % kChannelLanes;
                if (tapBase + tc >= tapRows || channelBlock + laneOfK >= g.outChannels) continue;
                float total = 0.0f;
                for (int wp = 0; wp < kWarps; ++wp) total += warpSums[wp][laneOfK][tc];
                splitPartials[(tapBase + tc) * g.outChannels + channelBlock + laneOfK] = total;
            }
            __syncthreads();
        }
    }
}

// ---- the filter partials on the tensor cores (K % 8 == 0, dy in 16-byte packs) ------------
// The same sums as a GEMM per split: partials (K x rows) = A (K x pixels) * B (pixels x rows),
// A = dy (masked by the ReLU's output where given), B the tap values of each pixel (and 1 in the
// bias row), on mma.sync m16n8k16 with bf16 operands and fp32 accumulators. x and dy are bf16,
// so every product is exact, as on the CUDA cores. Each warp takes chunks of 16 pixels (the
// MMA's k) a block stride apart: the chunk's dy tile, 16 pixels x 64 channels (and y's), arrive
// by cp.async in one of two shared-memory stages while the other is multiplied; A's fragments
// leave the tile by ldmatrix.trans (the tile's rows are pixels, A's columns; gemm_bf16.cuh has
// the fragment tables), masked where y is not positive; the tap values the warp computes from x
// a chunk ahead, straight into B fragments. A pass covers 64 channels (four m16 pieces) and 16
// rows (two n8 pieces); at its end the warps' sums are added in order.
// What bounds it is latency (ncu: 2.9 warps a scheduler, 0.44 instructions issued a cycle, the
// tap values' gathers from x a third of the sectors): on fer-cnn's input layer, four stages at
// three blocks a multiprocessor took 58.5 us, three at four 51, two at five (kept) 48, against
// 71 for the CUDA-core form with 8-channel vectors (docs/logs/2026-12-04-filter-mma).
constexpr int kMmaWarps = 4;
constexpr int kMmaStages = 2;
constexpr int kMmaPixels = 16;
constexpr int kMmaChannels = 64;
constexpr int kMmaRows = 16;
// A tile row: 64 channels and 8 of padding, 144 bytes (nine 16-byte groups), so the eight rows
// one ldmatrix phase reads start in eight different groups.
constexpr int kMmaPitch = kMmaChannels + 8;

struct alignas(16) MmaTile {  // 16-byte rows for cp.async and ldmatrix
    __nv_bfloat16 v[kMmaPixels][kMmaPitch];  // v[pixel][channel]
};

// The kernel's dynamic shared memory: each warp's stages of tiles (dy, then y), and the warps'
// sums at the end of a pass in the same room.
template <Gate G>
union MmaShared {
    MmaTile tiles[kMmaWarps][kMmaStages][G == Gate::ReluOutput ? 2 : 1];
    float warpSums[kMmaWarps][kMmaRows][kMmaChannels];
};

template <Gate G>
__global__ void __launch_bounds__(kMmaWarps * 32, 5)
smallInputConvFilterPartialsMmaKernel(SmallConv g, const __nv_bfloat16* __restrict__ x,
                                      const __nv_bfloat16* __restrict__ dy,
                                      const __nv_bfloat16* __restrict__ relu, int tapRows,
                                      int pixelsPerSplit, float* __restrict__ partials) {
    startAfterPriorGrid();
    constexpr int kChunkStride = kMmaWarps * kMmaPixels;  // the block's pixels per iteration
    extern __shared__ float4 sharedMemory[];
    auto& shared = *reinterpret_cast<MmaShared<G>*>(sharedMemory);
    const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
    const int fragmentRow = lane / 4, fragmentPair = lane % 4;  // g and t of the fragment tables
    const int pixels = g.batch * g.outHeight * g.outWidth;
    const int first = int(blockIdx.x) * pixelsPerSplit;
    const int last = min(pixels, first + pixelsPerSplit);
    float* splitPartials = partials + std::int64_t(blockIdx.x) * tapRows * g.outChannels;
    // This lane's pixels of a chunk in A's and B's fragments: 2t, 2t + 1, 2t + 8, 2t + 9.
    const int laneOffsets[4] = {2 * fragmentPair, 2 * fragmentPair + 1, 2 * fragmentPair + 8,
                                2 * fragmentPair + 9};
    for (int channelBlock = 0; channelBlock < g.outChannels; channelBlock += kMmaChannels) {
        // Starts the copies of the chunk at `base` into `stage`: 16 pixels x 8 packs of dy (and
        // of y), zeros past the split and the channels (K % 8 == 0: a pack is all in or all out).
        auto issue = [&](int base, int stage) {
            MmaTile* into = shared.tiles[warp][stage];
            for (int i = lane; i < kMmaPixels * kMmaChannels / 8; i += 32) {
                const int row = i / (kMmaChannels / 8), channel = (i % (kMmaChannels / 8)) * 8;
                const bool valid = base + row < last && channelBlock + channel < g.outChannels;
                const std::int64_t at = valid ? std::int64_t(base + row) * g.outChannels + channelBlock + channel : 0;
                copyAsync16BytesOrZero(&into[0].v[row][channel], dy + at, valid);
                if constexpr (G == Gate::ReluOutput)
                    copyAsync16BytesOrZero(&into[1].v[row][channel], relu + at, valid);
            }
            commitAsyncCopies();
        };
        for (int rowBase = 0; rowBase < tapRows; rowBase += kMmaRows) {
            // The taps of this lane's B columns: rows rowBase + g and rowBase + 8 + g.
            const int codes[2] = {tapCode(g, rowBase + fragmentRow, tapRows),
                                  tapCode(g, rowBase + kMmaRows / 2 + fragmentRow, tapRows)};
            OutputPixel at[4];
#pragma unroll
            for (int e = 0; e < 4; ++e)
                at[e] = OutputPixel(g, min(first + warp * kMmaPixels + laneOffsets[e], pixels - 1));
            // The B fragments of the chunk at `base` (tap values, zero past the split); moves
            // `at` on to the chunk after.
            auto tapFragments = [&](int base, unsigned (&b)[2][2]) {
                float value[2][4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const bool inSplit = base + laneOffsets[e] < last;
#pragma unroll
                    for (int piece = 0; piece < 2; ++piece) value[piece][e] = tapValue(g, x, codes[piece], at[e], inSplit);
                    at[e].advance(g, kChunkStride);
                }
#pragma unroll
                for (int piece = 0; piece < 2; ++piece)
#pragma unroll
                    for (int half = 0; half < 2; ++half) {
                        const __nv_bfloat162 two = __floats2bfloat162_rn(value[piece][2 * half], value[piece][2 * half + 1]);
                        memcpy(&b[piece][half], &two, sizeof two);
                    }
            };
            float acc[kMmaChannels / 16][2][4] = {};
            int base = first + warp * kMmaPixels;
            for (int stage = 0; stage < kMmaStages - 1; ++stage) issue(base + stage * kChunkStride, stage);
            unsigned b[2][2];
            tapFragments(base, b);
            for (int stage = 0; base < last; base += kChunkStride, stage = (stage + 1) % kMmaStages) {
                issue(base + (kMmaStages - 1) * kChunkStride, (stage + kMmaStages - 1) % kMmaStages);
                unsigned nextB[2][2];
                tapFragments(base + kChunkStride, nextB);
                waitAsyncCopies<kMmaStages - 1>();
                __syncwarp();
                const MmaTile* chunk = shared.tiles[warp][stage];
#pragma unroll
                for (int piece = 0; piece < kMmaChannels / 16; ++piece) {
                    const int row = (lane & 7) + (lane >> 4) * 8, column = piece * 16 + ((lane >> 3) & 1) * 8;
                    unsigned a[4];
                    gemm_bf16::loadMatricesTransposed(a, &chunk[0].v[row][column]);
                    if constexpr (G == Gate::ReluOutput) {
                        unsigned output[4];
                        gemm_bf16::loadMatricesTransposed(output, &chunk[1].v[row][column]);
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            __nv_bfloat162 two;
                            memcpy(&two, &output[e], sizeof two);
                            a[e] &= __hgt2_mask(two, __nv_bfloat162{});
                        }
                    }
                    gemm_bf16::mmaBf16(a, b[0], acc[piece][0]);
                    gemm_bf16::mmaBf16(a, b[1], acc[piece][1]);
                }
                __syncwarp();  // the stage is read before a later chunk's copies overwrite it
#pragma unroll
                for (int piece = 0; piece < 2; ++piece) {
                    b[piece][0] = nextB[piece][0];
                    b[piece][1] = nextB[piece][1];
                }
            }
            // The copies fetched past the split land before the sums overwrite the tiles.
            waitAsyncCopies<0>();
            __syncthreads();
            // C's fragments: (channel m + g, rows 2t, 2t + 1) and (channel m + g + 8, the same).
#pragma unroll
            for (int piece = 0; piece < kMmaChannels / 16; ++piece)
#pragma unroll
                for (int column = 0; column < 2; ++column)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int channel = piece * 16 + fragmentRow + (e / 2) * 8;
                        const int row = column * 8 + 2 * fragmentPair + e % 2;
                        shared.warpSums[warp][row][channel] = acc[piece][column][e];
                    }
            __syncthreads();
            for (int e = int(threadIdx.x); e < kMmaRows * kMmaChannels; e += int(blockDim.x)) {
                const int row = e / kMmaChannels, channel = e % kMmaChannels;
                if (rowBase + row >= tapRows || channelBlock + channel >= g.outChannels) continue;
                float total = 0.0f;
                for (int w = 0; w < kMmaWarps; ++w) total += shared.warpSums[w][row][channel];
                splitPartials[(rowBase + row) * g.outChannels + channelBlock + channel] = total;
            }
            __syncthreads();
        }
    }
}

// ---- the input block: y = relu(batchNorm(conv(x) + bias)) in training ----------------------
// Moments of the patches (small_input_conv.h has the maths), for at most kMomentTaps taps (a 3x3
// kernel over one channel), in a fixed layout of kMomentSums: S[t] first, then G[a][b] for a <= b
// in row order; taps past T read zero. A thread holds its patch and the sums of its pixels (a
// grid stride apart) in registers, in fp32: a product of two bf16 values is exact, and a thread
// adds about ten. The block adds its threads in double, by shuffles within each warp and then
// the warps in order -> partials[block][kMomentSums]. (A first version gathered tiles of patches
// into shared memory and summed each product over them in double, for up to 27 taps: 118 us a
// call on fer-cnn's input layer, against the forward convolution's 67.)
constexpr int kMomentTaps = 9;
constexpr int kMomentSums = kMomentTaps + kMomentTaps * (kMomentTaps + 1) / 2;
constexpr int kMaxMomentBlocks = 256;

// Where G[a][b], a <= b, sits among the sums.
__host__ __device__ constexpr int momentPairIndex(int a, int b) {
    return kMomentTaps + a * kMomentTaps - a * (a - 1) / 2 + (b - a);
}

int momentBlocks(const ConvGeometry& g) {
    const int pixels = g.batch * g.outHeight * g.outWidth;
    return std::min(kMaxMomentBlocks, (pixels + kThreads - 1) / kThreads);
}

__global__ void __launch_bounds__(kThreads)
patchMomentsKernel(SmallConv g, const __nv_bfloat16* __restrict__ x,
                   double* __restrict__ partials) {
    startAfterPriorGrid();
    __shared__ double warpSums[kWarps][kMomentSums];
    int codes[kMomentTaps];
#pragma unroll
    for (int t = 0; t < kMomentTaps; ++t) codes[t] = tapCode(g, t, g.taps);
    float sums[kMomentSums] = {};
    const int pixels = g.batch * g.outHeight * g.outWidth;
    for (int pixel = int(blockIdx.x * blockDim.x + threadIdx.x); pixel < pixels;
         pixel += int(gridDim.x * blockDim.x)) {
        const OutputPixel at(g, pixel);
        float v[kMomentTaps];
#pragma unroll
        for (int t = 0; t < kMomentTaps; ++t)
            v[t] = codes[t] == kNoTap ? 0.0f
                                      : tapInput(g, x, at, codes[t] >> 16, (codes[t] >> 8) & 0xff,
                                                 codes[t] & 0xff);
#pragma unroll
        for (int a = 0; a < kMomentTaps; ++a) {
            sums[a] += v[a];
#pragma unroll
            for (int b = a; b < kMomentTaps; ++b)
                sums[momentPairIndex(a, b)] = fmaf(v[a], v[b], sums[momentPairIndex(a, b)]);
        }
    }
    const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
#pragma unroll
    for (int i = 0; i < kMomentSums; ++i) {
        double total = sums[i];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
            total += __shfl_xor_sync(0xffffffffu, total, offset);
        if (lane == 0) warpSums[warp][i] = total;
    }
    __syncthreads();
    for (int i = int(threadIdx.x); i < kMomentSums; i += kThreads) {
        double total = 0.0;
        for (int w = 0; w < kWarps; ++w) total += warpSums[w][i];
        partials[std::int64_t(blockIdx.x) * kMomentSums + i] = total;
    }
}

// The patches' mean s[t] = S[t] / M and covariance cov[a][b] = G[a][b] / M - s[a] s[b] (full,
// symmetric). cov is kMomentTaps x kMomentTaps whatever T (rows and columns past T are zero).
// The forward keeps them in c's room for the backward (720 bytes).
struct PatchMoments {
    double mean[kMomentTaps];
    double cov[kMomentTaps * kMomentTaps];
};

// Copies the moments, with all of a block's threads.
__device__ void copyPatchMoments(const PatchMoments& from, PatchMoments& to) {
    for (int a = int(threadIdx.x); a < kMomentTaps; a += kThreads) to.mean[a] = from.mean[a];
    for (int e = int(threadIdx.x); e < kMomentTaps * kMomentTaps; e += kThreads)
        to.cov[e] = from.cov[e];
}

// The moments from the partials of `blocks` blocks, in shared memory: each warp adds every
// kWarps-th block, then the warps are added in order. Called by all of a block's threads.
struct MomentsReduction {
    PatchMoments moments;
    double warpTotals[kWarps][kMomentSums];
};

__device__ void reducePatchMoments(const SmallConv& g, const double* __restrict__ partials,
                                   int blocks, MomentsReduction& reduction) {
    PatchMoments& moments = reduction.moments;
    const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
    const double pixels = double(g.batch) * g.outHeight * g.outWidth;
    for (int i = lane; i < kMomentSums; i += 32) {
        double total = 0.0;
#pragma unroll 8
        for (int block = warp; block < blocks; block += kWarps)
            total += partials[std::int64_t(block) * kMomentSums + i];
        reduction.warpTotals[warp][i] = total;
    }
    __syncthreads();
    for (int a = int(threadIdx.x); a < kMomentTaps; a += kThreads) {
        double total = 0.0;
        for (int w = 0; w < kWarps; ++w) total += reduction.warpTotals[w][a];
        moments.mean[a] = total / pixels;
    }
    for (int e = int(threadIdx.x); e < kMomentTaps * kMomentTaps; e += kThreads) {
        const int a = min(e / kMomentTaps, e % kMomentTaps), b = max(e / kMomentTaps, e % kMomentTaps);
        double total = 0.0;
        for (int w = 0; w < kWarps; ++w) total += reduction.warpTotals[w][momentPairIndex(a, b)];
        moments.cov[e] = total / pixels;
    }
    __syncthreads();
    for (int e = int(threadIdx.x); e < kMomentTaps * kMomentTaps; e += kThreads)
        moments.cov[e] -= moments.mean[e / kMomentTaps] * moments.mean[e % kMomentTaps];
    __syncthreads();
}

// One block: the batch statistics of c, the running-statistics update, and the weights and
// bias with the normalisation folded in: w'_k = gamma_k invStd_k w_k,
// b'_k = beta_k + gamma_k invStd_k (b_k - mean_k). The moments go to `kept` for the backward.
__global__ void __launch_bounds__(kThreads)
inputBlockStatisticsKernel(SmallConv g, const double* __restrict__ partials, int blocks,
                           const float* __restrict__ w, const float* __restrict__ bias,
                           const float* __restrict__ gamma, const float* __restrict__ beta,
                           float epsilon, float momentum, float* __restrict__ runningMean,
                           float* __restrict__ runningVar, float* __restrict__ savedMean,
                           float* __restrict__ savedInvStd, float* __restrict__ foldedWeights,
                           float* __restrict__ foldedBias, PatchMoments* __restrict__ kept) {
    startAfterPriorGrid();
    __shared__ MomentsReduction reduction;
    reducePatchMoments(g, partials, blocks, reduction);
    const PatchMoments& moments = reduction.moments;
    copyPatchMoments(moments, *kept);
    const int T = g.taps;
    const double pixels = double(g.batch) * g.outHeight * g.outWidth;
    for (int k = int(threadIdx.x); k < g.outChannels; k += kThreads) {
        const float* wk = w + k * T;
        const double b = bias != nullptr ? double(bias[k]) : 0.0;
        double mean = b, variance = 0.0;
        for (int t = 0; t < T; ++t) {
            double covW = 0.0;
            for (int u = 0; u < T; ++u) covW += moments.cov[t * kMomentTaps + u] * double(wk[u]);
            mean += double(wk[t]) * moments.mean[t];
            variance += double(wk[t]) * covW;
        }
        variance = variance > 0.0 ? variance : 0.0;  // rounding can leave a tiny negative
        const double invStd = 1.0 / sqrt(variance + double(epsilon));
        savedMean[k] = float(mean);
        savedInvStd[k] = float(invStd);
        const double unbiased = variance * pixels / (pixels - 1.0);
        runningMean[k] = float((1.0 - momentum) * runningMean[k] + momentum * mean);
        runningVar[k] = float((1.0 - momentum) * runningVar[k] + momentum * unbiased);
        const double scale = double(gamma[k]) * invStd;
        for (int t = 0; t < T; ++t) foldedWeights[k * T + t] = float(scale * double(wk[t]));
        foldedBias[k] = float(double(beta[k]) + scale * (b - mean));
    }
}

// One block: the gradients from A = sum g v and dbeta = sum g (rows [K][T] and [K] of
// `masked`, the masked filter gradient's sums) and the moments the forward kept: with
// Ac = A - dbeta s, dgamma = invStd w . Ac and dw = gamma invStd (Ac - dgamma invStd cov w);
// dbias is zero.
__global__ void __launch_bounds__(kThreads)
inputBlockGradientsKernel(SmallConv g, const PatchMoments* __restrict__ kept,
                          const float* __restrict__ w, const float* __restrict__ gamma,
                          const float* __restrict__ savedInvStd,
                          const float* __restrict__ maskedSums, const float* __restrict__ maskedBiasSums,
                          float* __restrict__ dw, float* __restrict__ dbias,
                          float* __restrict__ dgamma, float* __restrict__ dbeta) {
    startAfterPriorGrid();
    __shared__ PatchMoments moments;
    copyPatchMoments(*kept, moments);
    __syncthreads();
    const int T = g.taps;
    for (int k = int(threadIdx.x); k < g.outChannels; k += kThreads) {
        const float* wk = w + k * T;
        const float* sums = maskedSums + k * T;
        const double betaGradient = maskedBiasSums[k], invStd = savedInvStd[k];
        double gammaGradient = 0.0;
        for (int t = 0; t < T; ++t)
            gammaGradient += double(wk[t]) * (double(sums[t]) - betaGradient * moments.mean[t]);
        gammaGradient *= invStd;
        const double scale = double(gamma[k]) * invStd;
        for (int t = 0; t < T; ++t) {
            double covW = 0.0;
            for (int u = 0; u < T; ++u) covW += moments.cov[t * kMomentTaps + u] * double(wk[u]);
            const double centred = double(sums[t]) - betaGradient * moments.mean[t];
            dw[k * T + t] = float(scale * (centred - gammaGradient * invStd * covW));
        }
        dgamma[k] = float(gammaGradient);
        dbeta[k] = float(betaGradient);
        // The batch norm subtracts c's mean, and with it the bias: it has no gradient.
        if (dbias != nullptr) dbias[k] = 0.0f;
    }
}

// Workspace regions, each on a 256-byte boundary.
std::size_t alignedBytes(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

std::size_t momentPartialsBytes(const ConvGeometry& g) {
    return alignedBytes(std::size_t(momentBlocks(g)) * kMomentSums * sizeof(double));
}

// The moments' partials of x's patches into the start of `workspace`.
double* launchPatchMoments(const ConvGeometry& g, const __nv_bfloat16* x, void* workspace,
                           cudaStream_t stream) {
    double* partials = static_cast<double*>(workspace);
    launchDependentKernel("input block: patch moments", patchMomentsKernel,
                          unsigned(momentBlocks(g)), kThreads, stream, SmallConv(g), x, partials);
    return partials;
}

std::size_t weightBytes(const ConvGeometry& g) {
    return std::size_t(g.weightCount()) * sizeof(float);
}

bool vectorisable(const ConvGeometry& g, const void* activations) {
    return g.outChannels % 8 == 0 && isAligned(activations, 16);
}

template <int KC>
void launchForward(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                   const float* bias, bool relu, __nv_bfloat16* y, int multiprocessors,
                   cudaStream_t stream) {
    const std::size_t groups = std::size_t(g.batch) * g.outHeight *
                               ((g.outWidth + kPixelsPerThread - 1) / kPixelsPerThread);
    const std::size_t count = groups * std::size_t(g.outChannels / KC);
    launchDependentKernelWithShared("small-input convolution forward",
                                    smallInputConvForwardKernel<KC>,
                                    gridStrideBlocks(count, kThreads, multiprocessors), kThreads,
                                    weightBytes(g), stream, SmallConv(g), x, w, bias, relu, y);
}

template <Gate G>
void launchFilterPartialsMma(const ConvGeometry& g, const __nv_bfloat16* x, const __nv_bfloat16* dy,
                             const __nv_bfloat16* relu, int tapRows, float* partials,
                             cudaStream_t stream) {
    const FilterSplits splits = filterSplits(g);
    void (*kernel)(SmallConv, const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, int, int,
                   float*) = smallInputConvFilterPartialsMmaKernel<G>;
    constexpr std::size_t bytes = sizeof(MmaShared<G>);
    static_assert(bytes <= 48 * 1024, "past 48 KB a launch needs cudaFuncSetAttribute's opt-in");
    launchDependentKernelWithShared("small-input convolution filter partials (tensor cores)", kernel,
                                    unsigned(splits.splits), kMmaWarps * 32, bytes, stream, SmallConv(g), x,
                                    dy, relu, tapRows, splits.pixelsPerSplit, partials);
}

// The filter partials of dy, masked by `relu` where not null: on the tensor cores when dy (and
// relu) come in 16-byte packs, else a channel a lane on the CUDA cores.
void launchFilterPartials(const ConvGeometry& g, const __nv_bfloat16* x, const __nv_bfloat16* dy,
                          const __nv_bfloat16* relu, int tapRows, float* partials,
                          cudaStream_t stream) {
    if (vectorisable(g, dy) && (relu == nullptr || isAligned(relu, 16))) {
        if (relu != nullptr)
            launchFilterPartialsMma<Gate::ReluOutput>(g, x, dy, relu, tapRows, partials, stream);
        else
            launchFilterPartialsMma<Gate::None>(g, x, dy, nullptr, tapRows, partials, stream);
        return;
    }
    const FilterSplits splits = filterSplits(g);
    auto kernel = relu != nullptr ? smallInputConvFilterPartialsKernel<Gate::ReluOutput>
                                  : smallInputConvFilterPartialsKernel<Gate::None>;
    launchDependentKernel("small-input convolution filter partials", kernel,
                          unsigned(splits.splits), kThreads, stream, SmallConv(g), x, dy, relu,
                          tapRows, splits.pixelsPerSplit, partials);
}

// y = conv(x, w) + bias, rectified when `relu`, on the widest channel chunk y allows.
void forwardOnWidestChunks(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                           const float* bias, bool relu, __nv_bfloat16* y, int multiprocessors,
                           cudaStream_t stream) {
    if (g.outChannels % 16 == 0 && isAligned(y, 16))
        launchForward<16>(g, x, w, bias, relu, y, multiprocessors, stream);
    else if (vectorisable(g, y))
        launchForward<8>(g, x, w, bias, relu, y, multiprocessors, stream);
    else
        launchForward<1>(g, x, w, bias, relu, y, multiprocessors, stream);
}

}  // namespace

bool isSmallInputConv(const ConvGeometry& g) {
    return g.groups == 1 && g.inChannels < kMaxInputChannels && g.weightCount() <= kMaxWeights;
}

void smallInputConvForward(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                           const float* bias, __nv_bfloat16* y, int multiprocessors,
                           cudaStream_t stream) {
    forwardOnWidestChunks(g, x, w, bias, false, y, multiprocessors, stream);
}

std::size_t smallInputConvBackwardFilterWorkspaceBytes(const ConvGeometry& g) {
    const std::size_t rows = std::size_t(g.inChannels) * g.kernelHeight * g.kernelWidth + 1;
    return std::size_t(filterSplits(g).splits) * rows * std::size_t(g.outChannels) * sizeof(float);
}

void smallInputConvBackwardFilter(const ConvGeometry& g, const __nv_bfloat16* x,
                                  const __nv_bfloat16* dy, float* dw, float* dbias,
                                  void* workspace, cudaStream_t stream) {
    float* partials = static_cast<float*>(workspace);
    const int tapRows = SmallConv(g).taps + (dbias != nullptr ? 1 : 0);
    launchFilterPartials(g, x, dy, nullptr, tapRows, partials, stream);
    finishSplitFilterGradient(partials, tapRows, g.outChannels, SmallConv(g).taps,
                              filterSplits(g).splits, dw, dbias, stream);
}

namespace {

std::size_t roomOfC(const ConvGeometry& g) {
    return std::size_t(g.batch) * g.outHeight * g.outWidth * g.outChannels * sizeof(__nv_bfloat16);
}

}  // namespace

bool isSmallInputConvBatchNormRelu(const ConvGeometry& g, const void* c) {
    return isSmallInputConv(g) && g.inChannels * g.kernelHeight * g.kernelWidth <= kMomentTaps &&
           roomOfC(g) >= sizeof(PatchMoments) && isAligned(c, alignof(PatchMoments));
}

namespace {

// Workspace of the input block's forward: the moments' partials, then w' (K, T) and b' (K).
std::size_t foldedOffset(const ConvGeometry& g) { return momentPartialsBytes(g); }

// ... of its backward: the filter partials, then the masked sums A (K, T) and dbeta (K).
std::size_t maskedSumsOffset(const ConvGeometry& g) {
    return alignedBytes(smallInputConvBackwardFilterWorkspaceBytes(g));
}

float* floatsAt(void* workspace, std::size_t offset) {
    return reinterpret_cast<float*>(static_cast<char*>(workspace) + offset);
}

}  // namespace

std::size_t smallInputConvBatchNormReluWorkspaceBytes(const ConvGeometry& g) {
    const std::size_t perChannel = std::size_t(SmallConv(g).taps) + 1;  // T weights and a bias
    const std::size_t channelBytes = alignedBytes(perChannel * g.outChannels * sizeof(float));
    return std::max(foldedOffset(g), maskedSumsOffset(g)) + channelBytes;
}

void smallInputConvBatchNormReluForwardTraining(
        const ConvGeometry& g, const BatchNormGeometry& bn, const __nv_bfloat16* x, const float* w,
        const float* bias, const float* gamma, const float* beta, void* c, __nv_bfloat16* y,
        float* runningMean, float* runningVar, float* savedMean, float* savedInvStd,
        void* workspace, int multiprocessors, cudaStream_t stream) {
    const SmallConv conv(g);
    const double* partials = launchPatchMoments(g, x, workspace, stream);
    float* foldedWeights = floatsAt(workspace, foldedOffset(g));
    float* foldedBias = foldedWeights + conv.taps * g.outChannels;
    launchDependentKernel("input block: statistics", inputBlockStatisticsKernel, 1u, kThreads,
                          stream, conv, partials, momentBlocks(g), w, bias, gamma, beta, bn.epsilon,
                          bn.momentum, runningMean, runningVar, savedMean, savedInvStd,
                          foldedWeights, foldedBias, static_cast<PatchMoments*>(c));
    forwardOnWidestChunks(g, x, foldedWeights, foldedBias, true, y, multiprocessors, stream);
}

void smallInputConvBatchNormReluBackward(const ConvGeometry& g, const __nv_bfloat16* x,
                                         const float* w, const void* c,
                                         const __nv_bfloat16* y, const __nv_bfloat16* dy,
                                         const float* gamma, const float* savedInvStd, float* dw,
                                         float* dbias, float* dgamma, float* dbeta,
                                         void* workspace, cudaStream_t stream) {
    const SmallConv conv(g);
    float* filterPartials = static_cast<float*>(workspace);
    float* maskedSums = floatsAt(workspace, maskedSumsOffset(g));
    float* maskedBiasSums = maskedSums + conv.taps * g.outChannels;
    launchFilterPartials(g, x, dy, y, conv.taps + 1, filterPartials, stream);
    finishSplitFilterGradient(filterPartials, conv.taps + 1, g.outChannels, conv.taps,
                              filterSplits(g).splits, maskedSums, maskedBiasSums, stream);
    launchDependentKernel("input block: gradients", inputBlockGradientsKernel, 1u, kThreads, stream,
                          conv, static_cast<const PatchMoments*>(c), w, gamma, savedInvStd,
                          static_cast<const float*>(maskedSums),
                          static_cast<const float*>(maskedBiasSums), dw, dbias, dgamma, dbeta);
}

}  // namespace cnnstudio::kernels
