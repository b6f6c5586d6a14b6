// Direct convolutions over inputs of fewer than 8 channels, bf16 channels-last (see
// small_input_conv.h for the ops and why they are not on the tensor cores). T = C*R*S is the
// length of one filter (a row of the KCRS weights), t = (c*R + r)*S + s a tap of it.
//
// forward: one thread per (output pixel, vector of V output channels), V = 8 (16-byte stores)
//   when K % 8 == 0, else 1. The block first copies the weights into shared memory as
//   [t][K], so the V weights of a tap are one 16-byte read; threads of one pixel read the same
//   input value (one broadcast), neighbouring pixels neighbouring values.
// backward data: one thread per input pixel, all its C < 8 channels in registers, over the
//   taps whose outputs read it; the same shared [t][K] weights, dy read V channels at a time.
// backward filter: the output is T rows of K, and row T for dbias (a tap whose input is 1).
//   1. a grid of splits over output rows (n, p): each block owns (tap row, channel vector)
//      outputs and walks its split's pixels, pixel lanes of the block in parallel, then adds
//      the lanes in order -> partials[split][row][K]
//   2. one warp per output element adds its splits in 32 strided lanes, then the lanes in order
//      (as layout.cu's channel sums) -> dw (KCRS) and dbias.
// Counts stay below 2^30 (index_limits.h), so indices are 32-bit.
#include <cstdint>

#include "cuda/activation_storage.cuh"
#include "cuda/small_input_conv.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

constexpr int kMaxInputChannels = 8;  // exclusive: C < 8
constexpr int kMaxWeights = 12288;    // K*C*R*S: 48 KiB of fp32 in shared memory
constexpr int kThreads = 256;
constexpr int kMaxFilterSplits = 1024;
constexpr int kSplitLanes = 32;

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

    __host__ __device__ int tap(int c, int r, int s) const {
        return (c * kernelHeight + r) * kernelWidth + s;
    }
};

// shared[t * K + k] = w[k * T + t]: the weights with each tap's K values contiguous.
__device__ void loadWeightsByTap(const SmallConv& g, const float* __restrict__ w, float* shared) {
    const int count = g.taps * g.outChannels;
    for (int i = int(threadIdx.x); i < count; i += int(blockDim.x)) {
        const int t = i / g.outChannels, k = i - t * g.outChannels;
        shared[i] = __ldg(w + k * g.taps + t);
    }
}

// acc[j] += value * weights[j] for the V weights at `weights` (16-byte aligned when V = 8).
template <int V>
__device__ __forceinline__ void accumulateTap(float value, const float* weights, float (&acc)[V]) {
    if constexpr (V == 8) {
        const float4 low = reinterpret_cast<const float4*>(weights)[0];
        const float4 high = reinterpret_cast<const float4*>(weights)[1];
        const float wv[8] = {low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[j] = fmaf(value, wv[j], acc[j]);
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = fmaf(value, weights[j], acc[j]);
    }
}

template <int V>
__global__ void __launch_bounds__(kThreads)
smallInputConvForwardKernel(SmallConv g, const __nv_bfloat16* __restrict__ x,
                            const float* __restrict__ w, const float* __restrict__ bias,
                            __nv_bfloat16* __restrict__ y) {
    extern __shared__ float4 sharedMemory[];
    float* weights = reinterpret_cast<float*>(sharedMemory);  // [t][K]
    loadWeightsByTap(g, w, weights);
    __syncthreads();
    const int vectors = g.outChannels / V;
    const int count = g.batch * g.outHeight * g.outWidth * vectors;
    for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < count;
         i += int(gridDim.x * blockDim.x)) {
        const int pixel = i / vectors, k0 = (i - pixel * vectors) * V;
        const int q = pixel % g.outWidth, rest = pixel / g.outWidth;
        const int p = rest % g.outHeight, n = rest / g.outHeight;
        float acc[V];
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = bias != nullptr ? __ldg(bias + k0 + j) : 0.0f;
        const int top = p * g.strideHeight - g.padHeight, left = q * g.strideWidth - g.padWidth;
        const __nv_bfloat16* image = x + n * g.inHeight * g.inWidth * g.inChannels;
        for (int r = 0; r < g.kernelHeight; ++r) {
            const int h = top + r;
            if (h < 0 || h >= g.inHeight) continue;
            for (int s = 0; s < g.kernelWidth; ++s) {
                const int column = left + s;
                if (column < 0 || column >= g.inWidth) continue;
                const __nv_bfloat16* in = image + (h * g.inWidth + column) * g.inChannels;
                for (int c = 0; c < g.inChannels; ++c)
                    accumulateTap<V>(__bfloat162float(in[c]),
                                     weights + g.tap(c, r, s) * g.outChannels + k0, acc);
            }
        }
        Packed<__nv_bfloat16, V> out;
#pragma unroll
        for (int j = 0; j < V; ++j) out.set(j, acc[j]);
        out.store(y + pixel * g.outChannels + k0);
    }
}

// Output position (p or q) whose window reads input position `at` through kernel offset `offset`:
// false when it falls between two strided windows or outside the output.
__device__ __forceinline__ bool outputReading(int at, int offset, int stride, int pad, int extent,
                                              int& position) {
    const int shifted = at + pad - offset;
    if (shifted < 0 || shifted % stride != 0) return false;
    position = shifted / stride;
    return position < extent;
}

template <int V>
__global__ void __launch_bounds__(kThreads)
smallInputConvBackwardDataKernel(SmallConv g, const __nv_bfloat16* __restrict__ dy,
                                 const float* __restrict__ w, __nv_bfloat16* __restrict__ dx) {
    extern __shared__ float4 sharedMemory[];
    float* weights = reinterpret_cast<float*>(sharedMemory);  // [t][K]
    loadWeightsByTap(g, w, weights);
    __syncthreads();
    const int count = g.batch * g.inHeight * g.inWidth;
    for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < count;
         i += int(gridDim.x * blockDim.x)) {
        const int column = i % g.inWidth, rest = i / g.inWidth;
        const int h = rest % g.inHeight, n = rest / g.inHeight;
        float acc[kMaxInputChannels] = {};
        for (int r = 0; r < g.kernelHeight; ++r) {
            int p = 0;
            if (!outputReading(h, r, g.strideHeight, g.padHeight, g.outHeight, p)) continue;
            for (int s = 0; s < g.kernelWidth; ++s) {
                int q = 0;
                if (!outputReading(column, s, g.strideWidth, g.padWidth, g.outWidth, q)) continue;
                const __nv_bfloat16* gradient =
                    dy + ((n * g.outHeight + p) * g.outWidth + q) * g.outChannels;
                for (int k0 = 0; k0 < g.outChannels; k0 += V) {
                    const Packed<__nv_bfloat16, V> d = Packed<__nv_bfloat16, V>::load(gradient + k0);
#pragma unroll
                    for (int c = 0; c < kMaxInputChannels; ++c) {
                        if (c >= g.inChannels) break;
                        const float* tapWeights = weights + g.tap(c, r, s) * g.outChannels + k0;
#pragma unroll
                        for (int j = 0; j < V; ++j) acc[c] = fmaf(d.get(j), tapWeights[j], acc[c]);
                    }
                }
            }
        }
#pragma unroll
        for (int c = 0; c < kMaxInputChannels; ++c)
            if (c < g.inChannels) dx[i * g.inChannels + c] = __float2bfloat16_rn(acc[c]);
    }
}

// The backward filter's splits: ranges of output rows (n, p), at most kMaxFilterSplits; they
// depend on the geometry only, so the workspace size is known before the launch.
struct FilterSplits {
    int rowsPerSplit, splits;
};

FilterSplits filterSplits(const ConvGeometry& g) {
    const int rows = g.batch * g.outHeight;
    const int perSplit = (rows + kMaxFilterSplits - 1) / kMaxFilterSplits;
    return {perSplit, (rows + perSplit - 1) / perSplit};
}

// Block: (pixel lanes, output lanes); an output is (tap row t < tapRows, channel vector), with
// tapRows = T + 1 when dbias is wanted, else T. Each
// round gives every output lane one output; rounds repeat while outputs remain, the same
// number for every thread so that the barriers are uniform.
template <int V>
__global__ void __launch_bounds__(kThreads)
smallInputConvFilterPartialsKernel(SmallConv g, const __nv_bfloat16* __restrict__ x,
                                   const __nv_bfloat16* __restrict__ dy, int tapRows,
                                   int rowsPerSplit, int outputLanes, float* __restrict__ partials) {
    __shared__ float laneSums[kThreads * V];  // [pixel lane][output lane][j]
    const int outputLane = int(threadIdx.x) % outputLanes;
    const int pixelLane = int(threadIdx.x) / outputLanes;
    const int pixelLanes = kThreads / outputLanes;
    const int vectors = g.outChannels / V;
    const int outputs = tapRows * vectors;
    const int firstRow = int(blockIdx.x) * rowsPerSplit;
    const int lastRow = min(g.batch * g.outHeight, firstRow + rowsPerSplit);
    float* splitPartials = partials + std::int64_t(blockIdx.x) * tapRows * g.outChannels;
    for (int round = 0; round * outputLanes < outputs; ++round) {
        const int output = round * outputLanes + outputLane;
        float acc[V] = {};
        if (output < outputs && pixelLane < pixelLanes) {
            const int t = output / vectors, k0 = (output - t * vectors) * V;
            const bool isBias = t == g.taps;
            const int s = t % g.kernelWidth, cr = t / g.kernelWidth;
            const int r = cr % g.kernelHeight, c = cr / g.kernelHeight;
            for (int row = firstRow; row < lastRow; ++row) {
                const int n = row / g.outHeight, p = row - n * g.outHeight;
                const int h = p * g.strideHeight - g.padHeight + r;
                if (!isBias && (h < 0 || h >= g.inHeight)) continue;  // the tap reads padding
                const __nv_bfloat16* inRow = x + ((n * g.inHeight + h) * g.inWidth) * g.inChannels + c;
                const __nv_bfloat16* gradientRow = dy + row * g.outWidth * g.outChannels + k0;
                for (int q = pixelLane; q < g.outWidth; q += pixelLanes) {
                    const int column = q * g.strideWidth - g.padWidth + s;
                    float value = 1.0f;
                    if (!isBias) {
                        if (column < 0 || column >= g.inWidth) continue;
                        value = __bfloat162float(inRow[column * g.inChannels]);
                    }
                    const Packed<__nv_bfloat16, V> d =
                        Packed<__nv_bfloat16, V>::load(gradientRow + q * g.outChannels);
#pragma unroll
                    for (int j = 0; j < V; ++j) acc[j] = fmaf(value, d.get(j), acc[j]);
                }
            }
        }
#pragma unroll
        for (int j = 0; j < V; ++j) laneSums[int(threadIdx.x) * V + j] = acc[j];
        __syncthreads();
        if (pixelLane == 0 && output < outputs) {
#pragma unroll
            for (int j = 0; j < V; ++j) {
                float total = 0.0f;
                for (int lane = 0; lane < pixelLanes; ++lane)
                    total += laneSums[(lane * outputLanes + outputLane) * V + j];
                splitPartials[output * V + j] = total;  // = t * K + k0 + j
            }
        }
        __syncthreads();
    }
}

// One warp per element e = t * K + k of the (tapRows, K) result: lane l adds splits l, l + 32,
// ..., then the lanes are added in order.
__global__ void __launch_bounds__(kThreads)
smallInputConvFilterFinishKernel(SmallConv g, const float* __restrict__ partials, int tapRows,
                                 int splits, float* __restrict__ dw, float* __restrict__ dbias) {
    const int elements = tapRows * g.outChannels;
    const int element = int(blockIdx.x) * (kThreads / kSplitLanes) + int(threadIdx.x) / kSplitLanes;
    const int lane = int(threadIdx.x) % kSplitLanes;
    float sum = 0.0f;
    if (element < elements)
        for (int split = lane; split < splits; split += kSplitLanes)
            sum += partials[std::int64_t(split) * elements + element];
    __shared__ float laneSums[kThreads];
    laneSums[threadIdx.x] = sum;
    __syncwarp();
    if (lane != 0 || element >= elements) return;
    float total = 0.0f;
    for (int l = 0; l < kSplitLanes; ++l) total += laneSums[int(threadIdx.x) + l];
    const int t = element / g.outChannels, k = element - t * g.outChannels;
    if (t < g.taps)
        dw[k * g.taps + t] = total;
    else
        dbias[k] = total;
}

std::size_t weightBytes(const ConvGeometry& g) {
    return std::size_t(g.weightCount()) * sizeof(float);
}

bool vectorisable(const ConvGeometry& g, const void* activations) {
    return g.outChannels % 8 == 0 && isAligned(activations, 16);
}

}  // namespace

bool isSmallInputConv(const ConvGeometry& g) {
    return g.groups == 1 && g.inChannels < kMaxInputChannels && g.weightCount() <= kMaxWeights;
}

void smallInputConvForward(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                           const float* bias, __nv_bfloat16* y, int multiprocessors,
                           cudaStream_t stream) {
    const std::size_t count = std::size_t(g.outputCount());
    if (vectorisable(g, y))
        launchKernelWithShared("small-input convolution forward", smallInputConvForwardKernel<8>,
                               gridStrideBlocks(count / 8, kThreads, multiprocessors), kThreads,
                               weightBytes(g), stream, SmallConv(g), x, w, bias, y);
    else
        launchKernelWithShared("small-input convolution forward", smallInputConvForwardKernel<1>,
                               gridStrideBlocks(count, kThreads, multiprocessors), kThreads,
                               weightBytes(g), stream, SmallConv(g), x, w, bias, y);
}

void smallInputConvBackwardData(const ConvGeometry& g, const __nv_bfloat16* dy, const float* w,
                                __nv_bfloat16* dx, int multiprocessors, cudaStream_t stream) {
    const std::size_t pixels = std::size_t(g.batch) * g.inHeight * g.inWidth;
    const unsigned blocks = gridStrideBlocks(pixels, kThreads, multiprocessors);
    if (vectorisable(g, dy))
        launchKernelWithShared("small-input convolution backward data",
                               smallInputConvBackwardDataKernel<8>, blocks, kThreads,
                               weightBytes(g), stream, SmallConv(g), dy, w, dx);
    else
        launchKernelWithShared("small-input convolution backward data",
                               smallInputConvBackwardDataKernel<1>, blocks, kThreads,
                               weightBytes(g), stream, SmallConv(g), dy, w, dx);
}

std::size_t smallInputConvBackwardFilterWorkspaceBytes(const ConvGeometry& g) {
    const std::size_t rows = std::size_t(g.inChannels) * g.kernelHeight * g.kernelWidth + 1;
    return std::size_t(filterSplits(g).splits) * rows * std::size_t(g.outChannels) * sizeof(float);
}

void smallInputConvBackwardFilter(const ConvGeometry& g, const __nv_bfloat16* x,
                                  const __nv_bfloat16* dy, float* dw, float* dbias,
                                  void* workspace, cudaStream_t stream) {
    const SmallConv conv(g);
    const FilterSplits splits = filterSplits(g);
    float* partials = static_cast<float*>(workspace);
    const bool vectorised = vectorisable(g, dy);
    const int tapRows = conv.taps + (dbias != nullptr ? 1 : 0);
    const int outputs = tapRows * (vectorised ? g.outChannels / 8 : g.outChannels);
    const int outputLanes = outputs < kThreads ? outputs : kThreads;
    if (vectorised)
        launchKernel("small-input convolution filter partials",
                     smallInputConvFilterPartialsKernel<8>, unsigned(splits.splits), kThreads,
                     stream, conv, x, dy, tapRows, splits.rowsPerSplit, outputLanes, partials);
    else
        launchKernel("small-input convolution filter partials",
                     smallInputConvFilterPartialsKernel<1>, unsigned(splits.splits), kThreads,
                     stream, conv, x, dy, tapRows, splits.rowsPerSplit, outputLanes, partials);
    const int elements = tapRows * g.outChannels;
    const int elementsPerBlock = kThreads / kSplitLanes;
    launchKernel("small-input convolution filter finish", smallInputConvFilterFinishKernel,
                 unsigned((elements + elementsPerBlock - 1) / elementsPerBlock), kThreads, stream,
                 conv, partials, tapRows, splits.splits, dw, dbias);
}

}  // namespace cnnstudio::kernels
