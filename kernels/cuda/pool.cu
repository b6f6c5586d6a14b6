// Pooling: x (N, C, H, W) -> y (N, C, P, Q) over kh x kw windows with stride and zero padding;
// padding is never a candidate and never counted.
//   max      y[p][q] = max of the window's in-image elements; the argmax is the first maximum
//            in row-major order within the window (as cpu-ref)
//   average  y[p][q] = sum of the window's in-image elements / their count
//   backward (both): dx[h][w] = sum over the windows (p, q) that contain (h, w) of
//            max:     dy[p][q] when (h, w) is the window's argmax
//            average: dy[p][q] / count(p, q)
// Forward: one thread per output element. Backward gathers per input element (no atomics, no
// zero fill): it visits the at most ceil(kh/sh) x ceil(kw/sw) windows covering the element.
#include <cmath>

#include "cuda/cuda_backend.h"
#include "cuda/geometry_checks.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

struct PoolParams {
    int planes, inHeight, inWidth, outHeight, outWidth;  // planes = batch * channels
    int kernelHeight, kernelWidth, strideHeight, strideWidth, padHeight, padWidth;
};

PoolParams poolParams(const PoolGeometry& g) {
    return {g.batch * g.channels, g.inHeight,     g.inWidth,      g.outHeight,
            g.outWidth,           g.kernelHeight, g.kernelWidth,  g.strideHeight,
            g.strideWidth,        g.padHeight,    g.padWidth};
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

// Index within the plane of the window's first maximum. A NaN wins over numbers (it is
// propagated, as in PyTorch) and the first NaN is kept.
__device__ __forceinline__ int windowArgmax(const float* plane, int width, const Window& w) {
    int best = w.rowBegin * width + w.columnBegin;
    float bestValue = __ldg(plane + best);
    for (int h = w.rowBegin; h < w.rowEnd; ++h)
        for (int c = w.columnBegin; c < w.columnEnd; ++c) {
            const float value = __ldg(plane + h * width + c);
            if (value > bestValue || (isnan(value) && !isnan(bestValue))) {
                bestValue = value;
                best = h * width + c;
            }
        }
    return best;
}

template <bool IsMax>
__global__ void poolForwardKernel(PoolParams p, const float* __restrict__ x,
                                  float* __restrict__ y) {
    const int outPlane = p.outHeight * p.outWidth;
    const int count = p.planes * outPlane;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int planeIndex = i / outPlane, pixel = i - planeIndex * outPlane;
        const int outRow = pixel / p.outWidth, outColumn = pixel - outRow * p.outWidth;
        const float* plane = x + planeIndex * (p.inHeight * p.inWidth);
        const Window w = windowAt(p, outRow, outColumn);
        if constexpr (IsMax) {
            y[i] = __ldg(plane + windowArgmax(plane, p.inWidth, w));
        } else {
            float sum = 0.0f;
            for (int h = w.rowBegin; h < w.rowEnd; ++h)
                for (int c = w.columnBegin; c < w.columnEnd; ++c) sum += __ldg(plane + h * p.inWidth + c);
            y[i] = sum / float((w.rowEnd - w.rowBegin) * (w.columnEnd - w.columnBegin));
        }
    }
}

// Differentiates the forward lines above: each dx element collects from the windows that
// contain it.
template <bool IsMax>
__global__ void poolBackwardKernel(PoolParams p, const float* __restrict__ x,
                                   const float* __restrict__ dy, float* __restrict__ dx) {
    const int inPlane = p.inHeight * p.inWidth, outPlane = p.outHeight * p.outWidth;
    const int count = p.planes * inPlane;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int planeIndex = i / inPlane, position = i - planeIndex * inPlane;
        const int row = position / p.inWidth, column = position - row * p.inWidth;
        // Windows covering row: outRow * sh - ph <= row <= outRow * sh - ph + kh - 1.
        const int rowLow = row + p.padHeight - p.kernelHeight + 1;
        const int columnLow = column + p.padWidth - p.kernelWidth + 1;
        const int outRowBegin = rowLow <= 0 ? 0 : (rowLow + p.strideHeight - 1) / p.strideHeight;
        const int outRowEnd = min(p.outHeight, (row + p.padHeight) / p.strideHeight + 1);
        const int outColumnBegin =
            columnLow <= 0 ? 0 : (columnLow + p.strideWidth - 1) / p.strideWidth;
        const int outColumnEnd = min(p.outWidth, (column + p.padWidth) / p.strideWidth + 1);
        const float* plane = x + planeIndex * inPlane;
        const float* gradPlane = dy + planeIndex * outPlane;
        float sum = 0.0f;
        for (int outRow = outRowBegin; outRow < outRowEnd; ++outRow)
            for (int outColumn = outColumnBegin; outColumn < outColumnEnd; ++outColumn) {
                const Window w = windowAt(p, outRow, outColumn);
                const float grad = __ldg(gradPlane + outRow * p.outWidth + outColumn);
                if constexpr (IsMax) {
                    if (windowArgmax(plane, p.inWidth, w) == position) sum += grad;
                } else {
                    sum += grad / float((w.rowEnd - w.rowBegin) * (w.columnEnd - w.columnBegin));
                }
            }
        dx[i] = sum;
    }
}

}  // namespace

void CudaBackend::poolForward(const PoolGeometry& g, const float* x, float* y) {
    validatePool(g, "poolForward");
    requirePointer(x, "poolForward", "x");
    requirePointer(y, "poolForward", "y");
    activateDevice();
    const unsigned blocks =
        gridStrideBlocks(std::size_t(g.outputCount()), 256, deviceProperties().multiProcessorCount);
    if (g.kind == PoolKind::Max)
        launchKernel("max pool forward", poolForwardKernel<true>, blocks, 256, stream(),
                     poolParams(g), x, y);
    else
        launchKernel("average pool forward", poolForwardKernel<false>, blocks, 256, stream(),
                     poolParams(g), x, y);
}

void CudaBackend::poolBackward(const PoolGeometry& g, const float* x, const float* y,
                               const float* dy, float* dx) {
    validatePool(g, "poolBackward");
    requirePointer(x, "poolBackward", "x");
    requirePointer(dy, "poolBackward", "dy");
    requirePointer(dx, "poolBackward", "dx");
    activateDevice();
    const unsigned blocks =
        gridStrideBlocks(std::size_t(g.inputCount()), 256, deviceProperties().multiProcessorCount);
    if (g.kind == PoolKind::Max)
        launchKernel("max pool backward", poolBackwardKernel<true>, blocks, 256, stream(),
                     poolParams(g), x, dy, dx);
    else
        launchKernel("average pool backward", poolBackwardKernel<false>, blocks, 256, stream(),
                     poolParams(g), x, dy, dx);
}

}  // namespace cnnstudio::kernels
