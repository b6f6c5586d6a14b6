// Pooling: x (N, C, H, W) -> y (N, C, P, Q) over kh x kw windows with stride and zero padding;
// padding is never a candidate and never counted.
//   max      y[p][q] = max of the window's in-image elements; the argmax is the first maximum
//            in row-major order within the window (as cpu-ref)
//   average  y[p][q] = sum of the window's in-image elements / their count
//   backward (both): dx[h][w] = sum over the windows (p, q) that contain (h, w) of
//            max:     dy[p][q] when (h, w) is the window's argmax
//            average: dy[p][q] / count(p, q)
// Elements are activations in the layout and type Backend::activationFormat says (fp32 NCHW,
// or bf16 channels-last (N, H, W, C) where the cudnn backend keeps them), compared and summed in
// fp32 registers.
// Forward: one thread per output element. Backward gathers per input element (no atomics, no
// zero fill): it visits the at most ceil(kh/sh) x ceil(kw/sw) windows covering the element.
// Channels-last, consecutive threads take consecutive channels of one pixel, so every access
// of a warp is contiguous.
// Tiling windows (stride = kernel, no padding, the windows cover the image exactly: fer-cnn's
// 2x2 pools) take a faster path: one thread per output element (fp32 NCHW) or per output pixel
// and 8 channels (bf16 channels-last, whole 16-byte channel vectors), each input read once, and
// a backward that scatters (each input element lies in exactly one window: dy to the argmax,
// zero elsewhere). On the H200 the gather kernels took 1.4 ms of a fer-cnn bf16 step at batch 256.
#include <cmath>

#include "cuda/activation_storage.cuh"
#include "cuda/bf16_convert.h"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

struct PoolParams {
    int batch, channels, inHeight, inWidth, outHeight, outWidth;
    int kernelHeight, kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
};

PoolParams poolParams(const PoolGeometry& g) {
    return {g.batch,        g.channels,    g.inHeight,     g.inWidth,
            g.outHeight,    g.outWidth,    g.kernelHeight, g.kernelWidth,
            g.strideHeight, g.strideWidth, g.padHeight,    g.padWidth};
}

// One image plane (image, channel) of a tensor with `height` x `width` pixels, in either layout:
// the offset of its pixel (row, column), and the plane and pixel of a linear element index.
template <bool ChannelsLast>
struct Plane {
    int image, channel;
    __device__ __forceinline__ int offset(const PoolParams& p, int height, int width, int row,
                                          int column) const {
        if constexpr (ChannelsLast)
            return ((image * height + row) * width + column) * p.channels + channel;
        else
            return ((image * p.channels + channel) * height + row) * width + column;
    }
};

// Splits a linear element index of a (batch, channels, height, width) tensor into its plane
// and its pixel (row * width + column).
template <bool ChannelsLast>
__device__ __forceinline__ Plane<ChannelsLast> splitIndex(const PoolParams& p, int index,
                                                          int pixels, int& pixel) {
    if constexpr (ChannelsLast) {
        const int channel = index % p.channels, imagePixel = index / p.channels;
        pixel = imagePixel % pixels;
        return {imagePixel / pixels, channel};
    } else {
        const int plane = index / pixels;
        pixel = index - plane * pixels;
        return {plane / p.channels, plane % p.channels};
    }
}

// The in-image part of window (outRow, outColumn): rows [rowBegin, rowEnd), columns likewise.
struct Window {
    int rowBegin, rowEnd, columnBegin, columnEnd;
};

__device__ __forceinline__ Window windowAt(const PoolParams& p, int outRow, int outColumn) {
    const int row = outRow * p.strideHeight - p.padHeight;
    const int column = outColumn * p.strideWidth - p.padWidth;
    return {max(row, 0), min(row + p.kernelHeight, p.inHeight), max(column, 0),
            min(column + p.kernelWidth, p.inWidth)};
}

// The max-pooling rule everywhere: a window's first maximum is kept, and a NaN wins over numbers
// (it is propagated, as in PyTorch) and the first NaN stays.
__device__ __forceinline__ bool replacesMaximum(float value, float best) {
    return value > best || (isnan(value) && !isnan(best));
}

// Offset of the window's first maximum in row-major order (replacesMaximum).
template <class T, bool ChannelsLast>
__device__ __forceinline__ int windowArgmax(const PoolParams& p, const T* x,
                                            const Plane<ChannelsLast>& plane, const Window& w) {
    int best = plane.offset(p, p.inHeight, p.inWidth, w.rowBegin, w.columnBegin);
    float bestValue = toFloat(x[best]);
    for (int h = w.rowBegin; h < w.rowEnd; ++h)
        for (int c = w.columnBegin; c < w.columnEnd; ++c) {
            const int at = plane.offset(p, p.inHeight, p.inWidth, h, c);
            const float value = toFloat(x[at]);
            if (replacesMaximum(value, bestValue)) {
                bestValue = value;
                best = at;
            }
        }
    return best;
}

template <class T, bool ChannelsLast, bool IsMax>
__global__ void poolForwardKernel(PoolParams p, const T* __restrict__ x, T* __restrict__ y) {
    const int outPixels = p.outHeight * p.outWidth;
    const int count = p.batch * p.channels * outPixels;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        int pixel = 0;
        const Plane<ChannelsLast> plane = splitIndex<ChannelsLast>(p, i, outPixels, pixel);
        const int outRow = pixel / p.outWidth, outColumn = pixel - outRow * p.outWidth;
        const Window w = windowAt(p, outRow, outColumn);
        if constexpr (IsMax) {
            y[i] = x[windowArgmax(p, x, plane, w)];
        } else {
            float sum = 0.0f;
            for (int h = w.rowBegin; h < w.rowEnd; ++h)
                for (int c = w.columnBegin; c < w.columnEnd; ++c)
                    sum += toFloat(x[plane.offset(p, p.inHeight, p.inWidth, h, c)]);
            y[i] = fromFloat<T>(sum / float((w.rowEnd - w.rowBegin) * (w.columnEnd - w.columnBegin)));
        }
    }
}

// Differentiates the forward lines above: each dx element collects from the windows that
// contain it.
template <class T, bool ChannelsLast, bool IsMax>
__global__ void poolBackwardKernel(PoolParams p, const T* __restrict__ x,
                                   const T* __restrict__ dy, T* __restrict__ dx) {
    const int inPixels = p.inHeight * p.inWidth;
    const int count = p.batch * p.channels * inPixels;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        int position = 0;
        const Plane<ChannelsLast> plane = splitIndex<ChannelsLast>(p, i, inPixels, position);
        const int row = position / p.inWidth, column = position - row * p.inWidth;
        // Windows covering row: outRow * sh - ph <= row <= outRow * sh - ph + kh - 1.
        const int rowLow = row + p.padHeight - p.kernelHeight + 1;
        const int columnLow = column + p.padWidth - p.kernelWidth + 1;
        const int outRowBegin = rowLow <= 0 ? 0 : (rowLow + p.strideHeight - 1) / p.strideHeight;
        const int outRowEnd = min(p.outHeight, (row + p.padHeight) / p.strideHeight + 1);
        const int outColumnBegin =
            columnLow <= 0 ? 0 : (columnLow + p.strideWidth - 1) / p.strideWidth;
        const int outColumnEnd = min(p.outWidth, (column + p.padWidth) / p.strideWidth + 1);
        float sum = 0.0f;
        for (int outRow = outRowBegin; outRow < outRowEnd; ++outRow)
            for (int outColumn = outColumnBegin; outColumn < outColumnEnd; ++outColumn) {
                const Window w = windowAt(p, outRow, outColumn);
                const float grad =
                    toFloat(dy[plane.offset(p, p.outHeight, p.outWidth, outRow, outColumn)]);
                if constexpr (IsMax) {
                    if (windowArgmax(p, x, plane, w) == i) sum += grad;
                } else {
                    sum += grad / float((w.rowEnd - w.rowBegin) * (w.columnEnd - w.columnBegin));
                }
            }
        dx[i] = fromFloat<T>(sum);
    }
}

constexpr int kVector = 8;  // bf16 channels in one 16-byte access
using ChannelVector = Packed<__nv_bfloat16, kVector>;

bool tilesExactly(const PoolGeometry& g) {
    return g.strideHeight == g.kernelHeight && g.strideWidth == g.kernelWidth &&
           g.padHeight == 0 && g.padWidth == 0 && g.inHeight == g.outHeight * g.kernelHeight &&
           g.inWidth == g.outWidth * g.kernelWidth;
}

// Offset of the top-left input element of output element i's window, fp32 NCHW.
__device__ __forceinline__ int tiledWindowNchw(const PoolParams& p, int i) {
    const int outColumn = i % p.outWidth, rest = i / p.outWidth;
    const int outRow = rest % p.outHeight, plane = rest / p.outHeight;
    return (plane * p.inHeight + outRow * p.kernelHeight) * p.inWidth + outColumn * p.kernelWidth;
}

template <bool IsMax>
__global__ void tiledPoolForwardNchwKernel(PoolParams p, const float* __restrict__ x,
                                           float* __restrict__ y) {
    const int count = p.batch * p.channels * p.outHeight * p.outWidth;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const float* window = x + tiledWindowNchw(p, i);
        float result = window[0];
        for (int h = 0; h < p.kernelHeight; ++h)
            for (int w = h == 0 ? 1 : 0; w < p.kernelWidth; ++w) {
                const float value = window[h * p.inWidth + w];
                if constexpr (IsMax)
                    result = replacesMaximum(value, result) ? value : result;
                else
                    result += value;
            }
        y[i] = IsMax ? result : result / float(p.kernelHeight * p.kernelWidth);
    }
}

template <bool IsMax>
__global__ void tiledPoolBackwardNchwKernel(PoolParams p, const float* __restrict__ x,
                                            const float* __restrict__ dy, float* __restrict__ dx) {
    const int count = p.batch * p.channels * p.outHeight * p.outWidth;
    const int area = p.kernelHeight * p.kernelWidth;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int first = tiledWindowNchw(p, i);
        int argmax = 0;  // window position h * kernelWidth + w
        if constexpr (IsMax) {
            float best = x[first];
            for (int position = 1; position < area; ++position) {
                const int h = position / p.kernelWidth, w = position - h * p.kernelWidth;
                const float value = x[first + h * p.inWidth + w];
                if (replacesMaximum(value, best)) {
                    best = value;
                    argmax = position;
                }
            }
        }
        const float gradient = dy[i];
        for (int position = 0; position < area; ++position) {
            const int h = position / p.kernelWidth, w = position - h * p.kernelWidth;
            dx[first + h * p.inWidth + w] =
                IsMax ? (position == argmax ? gradient : 0.0f) : gradient / float(area);
        }
    }
}

// The first input element (top-left of the window) and the output element of thread i's
// 8-channel vector, in elements.
struct TiledWindow {
    int input, output;
};

__device__ __forceinline__ TiledWindow tiledWindowOf(const PoolParams& p, int i) {
    const int vectors = p.channels / kVector;
    const int channel = (i % vectors) * kVector, pixel = i / vectors;
    const int outColumn = pixel % p.outWidth, rest = pixel / p.outWidth;
    const int outRow = rest % p.outHeight, image = rest / p.outHeight;
    const int row = outRow * p.kernelHeight, column = outColumn * p.kernelWidth;
    return {((image * p.inHeight + row) * p.inWidth + column) * p.channels + channel,
            pixel * p.channels + channel};
}

template <bool IsMax>
__global__ void tiledPoolForwardKernel(PoolParams p, const __nv_bfloat16* __restrict__ x,
                                       __nv_bfloat16* __restrict__ y) {
    const int count = p.batch * p.outHeight * p.outWidth * (p.channels / kVector);
    const int rowStride = p.inWidth * p.channels;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const TiledWindow window = tiledWindowOf(p, i);
        float result[kVector];
        for (int h = 0; h < p.kernelHeight; ++h)
            for (int w = 0; w < p.kernelWidth; ++w) {
                const ChannelVector values =
                    ChannelVector::load(x + window.input + h * rowStride + w * p.channels);
                for (int lane = 0; lane < kVector; ++lane) {
                    const float value = values.get(lane);
                    if (h == 0 && w == 0)
                        result[lane] = value;
                    else if constexpr (IsMax)
                        result[lane] = replacesMaximum(value, result[lane]) ? value : result[lane];
                    else
                        result[lane] += value;
                }
            }
        ChannelVector out;
        const float scale = IsMax ? 1.0f : 1.0f / float(p.kernelHeight * p.kernelWidth);
        for (int lane = 0; lane < kVector; ++lane) out.set(lane, result[lane] * scale);
        out.store(y + window.output);
    }
}

template <bool IsMax>
__global__ void tiledPoolBackwardKernel(PoolParams p, const __nv_bfloat16* __restrict__ x,
                                        const __nv_bfloat16* __restrict__ dy,
                                        __nv_bfloat16* __restrict__ dx) {
    const int count = p.batch * p.outHeight * p.outWidth * (p.channels / kVector);
    const int rowStride = p.inWidth * p.channels, area = p.kernelHeight * p.kernelWidth;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const TiledWindow window = tiledWindowOf(p, i);
        const ChannelVector gradient = ChannelVector::load(dy + window.output);
        int argmax[kVector] = {};  // window position (h * kernelWidth + w) per lane
        if constexpr (IsMax) {
            float best[kVector];
            for (int position = 0; position < area; ++position) {
                const int h = position / p.kernelWidth, w = position - h * p.kernelWidth;
                const ChannelVector values =
                    ChannelVector::load(x + window.input + h * rowStride + w * p.channels);
                for (int lane = 0; lane < kVector; ++lane) {
                    const float value = values.get(lane);
                    if (position == 0 || replacesMaximum(value, best[lane])) {
                        best[lane] = value;
                        argmax[lane] = position;
                    }
                }
            }
        }
        for (int position = 0; position < area; ++position) {
            const int h = position / p.kernelWidth, w = position - h * p.kernelWidth;
            ChannelVector out;
            for (int lane = 0; lane < kVector; ++lane)
                out.set(lane, IsMax ? (argmax[lane] == position ? gradient.get(lane) : 0.0f)
                                    : gradient.get(lane) / float(area));
            out.store(dx + window.input + h * rowStride + w * p.channels);
        }
    }
}

template <class T, bool ChannelsLast>
void launchPoolForward(const PoolGeometry& g, const T* x, T* y, int multiprocessors,
                       cudaStream_t stream) {
    const unsigned blocks = gridStrideBlocks(std::size_t(g.outputCount()), 256, multiprocessors);
    if (g.kind == PoolKind::Max)
        launchKernel("max pool forward", poolForwardKernel<T, ChannelsLast, true>, blocks, 256,
                     stream, poolParams(g), x, y);
    else
        launchKernel("average pool forward", poolForwardKernel<T, ChannelsLast, false>, blocks,
                     256, stream, poolParams(g), x, y);
}

template <class T, bool ChannelsLast>
void launchPoolBackward(const PoolGeometry& g, const T* x, const T* dy, T* dx,
                        int multiprocessors, cudaStream_t stream) {
    const unsigned blocks = gridStrideBlocks(std::size_t(g.inputCount()), 256, multiprocessors);
    if (g.kind == PoolKind::Max)
        launchKernel("max pool backward", poolBackwardKernel<T, ChannelsLast, true>, blocks, 256,
                     stream, poolParams(g), x, dy, dx);
    else
        launchKernel("average pool backward", poolBackwardKernel<T, ChannelsLast, false>, blocks,
                     256, stream, poolParams(g), x, dy, dx);
}

// One thread per `elementsPerThread` output elements; `maxKernel` or `averageKernel` by g.kind.
template <class MaxKernel, class AverageKernel, class... Pointers>
void launchTiledPool(const PoolGeometry& g, int elementsPerThread, int multiprocessors,
                     cudaStream_t stream, MaxKernel maxKernel, AverageKernel averageKernel,
                     Pointers... pointers) {
    const std::size_t threads = std::size_t(g.outputCount() / elementsPerThread);
    const unsigned blocks = gridStrideBlocks(threads, 256, multiprocessors);
    if (g.kind == PoolKind::Max)
        launchKernel("max pool (tiling windows)", maxKernel, blocks, 256, stream, poolParams(g),
                     pointers...);
    else
        launchKernel("average pool (tiling windows)", averageKernel, blocks, 256, stream,
                     poolParams(g), pointers...);
}

// Pooling runs in the two formats backends use: fp32 NCHW (fp32, tf32) and bf16 channels-last
// (bf16). True for the latter.
bool poolsBf16ChannelsLast(const ActivationFormat& format, const OpLabel& op) {
    const ActivationFormat bf16ChannelsLast{true, true};
    if (format != ActivationFormat{} && format != bf16ChannelsLast)
        ops::failOp(op, "activations must be fp32 NCHW or bf16 channels-last",
                    "a backend with another activation format overrides pooling");
    return format == bf16ChannelsLast;
}

}  // namespace

void CudaBackend::doPoolForward(const PoolGeometry& g, const float* x, float* y) {
    const OpLabel op = opLabel("poolForward");
    requireIndexable(g, op);
    activateDevice();
    const int sms = deviceProperties().multiProcessorCount;
    const bool vectors = g.channels % kVector == 0 && isAligned(x, 16) && isAligned(y, 16);
    if (!poolsBf16ChannelsLast(activationFormat(), op)) {
        if (tilesExactly(g))
            launchTiledPool(g, 1, sms, stream(), tiledPoolForwardNchwKernel<true>,
                            tiledPoolForwardNchwKernel<false>, x, y);
        else
            launchPoolForward<float, false>(g, x, y, sms, stream());
    } else if (tilesExactly(g) && vectors)
        launchTiledPool(g, kVector, sms, stream(), tiledPoolForwardKernel<true>,
                        tiledPoolForwardKernel<false>, asBf16(x), asBf16(y));
    else
        launchPoolForward<__nv_bfloat16, true>(g, asBf16(x), asBf16(y), sms, stream());
}

void CudaBackend::doPoolBackward(const PoolGeometry& g, const float* x, const float* y,
                                 const float* dy, float* dx) {
    const OpLabel op = opLabel("poolBackward");
    requireIndexable(g, op);
    activateDevice();
    const int sms = deviceProperties().multiProcessorCount;
    const bool vectors =
        g.channels % kVector == 0 && isAligned(x, 16) && isAligned(dy, 16) && isAligned(dx, 16);
    if (!poolsBf16ChannelsLast(activationFormat(), op)) {
        if (tilesExactly(g))
            launchTiledPool(g, 1, sms, stream(), tiledPoolBackwardNchwKernel<true>,
                            tiledPoolBackwardNchwKernel<false>, x, dy, dx);
        else
            launchPoolBackward<float, false>(g, x, dy, dx, sms, stream());
    } else if (tilesExactly(g) && vectors)
        launchTiledPool(g, kVector, sms, stream(), tiledPoolBackwardKernel<true>,
                        tiledPoolBackwardKernel<false>, asBf16(x), asBf16(dy), asBf16(dx));
    else
        launchPoolBackward<__nv_bfloat16, true>(g, asBf16(x), asBf16(dy), asBf16(dx), sms, stream());
}

}  // namespace cnnstudio::kernels
