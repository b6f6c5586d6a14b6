// 2-D pooling as PyTorch's MaxPool2d / AvgPool2d(count_include_pad=False), floor output size.
//   x (batch, channels, inHeight, inWidth) -> y (batch, channels, outHeight, outWidth)
//   window of y[n,c,oh,ow]: rows oh*strideHeight - padHeight + [0, kernelHeight),
//                           cols ow*strideWidth - padWidth + [0, kernelWidth), clipped to x.
//   Max:     y = the largest x in the window; padding never takes part.
//   Average: y = the sum of x in the window / the number of non-padding elements in it.
// Backward recomputes each window from x: max sends dy to the FIRST maximum in row-major order
// (the element PyTorch's argmax keeps), average spreads dy / count over the window.
#include <algorithm>
#include <cmath>

#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {
namespace {

// The part of one window that lies inside the image: rows [rowBegin, rowEnd), cols [colBegin, colEnd).
struct Window {
    int rowBegin, rowEnd, colBegin, colEnd;
    int count() const { return (rowEnd - rowBegin) * (colEnd - colBegin); }
};

Window windowOf(const PoolGeometry& g, int oh, int ow) {
    const int top = oh * g.strideHeight - g.padHeight, left = ow * g.strideWidth - g.padWidth;
    return {std::max(top, 0), std::min(top + g.kernelHeight, g.inHeight),
            std::max(left, 0), std::min(left + g.kernelWidth, g.inWidth)};
}

// Index within the plane of the first maximum of the window (checkPoolGeometry guarantees the
// window is not empty). A NaN wins, as in PyTorch, so a diverged network stays visibly NaN.
std::int64_t firstMaximum(const PoolGeometry& g, const float* xPlane, const Window& window) {
    std::int64_t best = std::int64_t(window.rowBegin) * g.inWidth + window.colBegin;
    for (int ih = window.rowBegin; ih < window.rowEnd; ++ih)
        for (int iw = window.colBegin; iw < window.colEnd; ++iw) {
            const std::int64_t index = std::int64_t(ih) * g.inWidth + iw;
            if (std::isnan(xPlane[index])) return index;
            if (xPlane[index] > xPlane[best]) best = index;
        }
    return best;
}

}  // namespace

void CpuRefBackend::doPoolForward(const PoolGeometry& g, const float* x, float* y) {

    const std::int64_t inPlane = std::int64_t(g.inHeight) * g.inWidth;
    const std::int64_t outPlane = std::int64_t(g.outHeight) * g.outWidth;
    for (std::int64_t plane = 0; plane < std::int64_t(g.batch) * g.channels; ++plane) {
        const float* xPlane = x + plane * inPlane;
        float* yPlane = y + plane * outPlane;
        for (int oh = 0; oh < g.outHeight; ++oh)
            for (int ow = 0; ow < g.outWidth; ++ow) {
                const Window window = windowOf(g, oh, ow);
                float result;
                if (g.kind == PoolKind::Max) {
                    result = xPlane[firstMaximum(g, xPlane, window)];
                } else {
                    float sum = 0.0f;
                    for (int ih = window.rowBegin; ih < window.rowEnd; ++ih)
                        for (int iw = window.colBegin; iw < window.colEnd; ++iw)
                            sum += xPlane[std::int64_t(ih) * g.inWidth + iw];
                    result = sum / float(window.count());
                }
                yPlane[std::int64_t(oh) * g.outWidth + ow] = result;
            }
    }
}

// Differentiates result = xPlane[firstMaximum(...)] (max) and result = sum / count (average).
void CpuRefBackend::doPoolBackward(const PoolGeometry& g, const float* x, const float* y,
                                   const float* dy, float* dx) {

    const std::int64_t inPlane = std::int64_t(g.inHeight) * g.inWidth;
    const std::int64_t outPlane = std::int64_t(g.outHeight) * g.outWidth;
    std::fill(dx, dx + g.inputCount(), 0.0f);
    for (std::int64_t plane = 0; plane < std::int64_t(g.batch) * g.channels; ++plane) {
        const float* xPlane = x + plane * inPlane;
        const float* dyPlane = dy + plane * outPlane;
        float* dxPlane = dx + plane * inPlane;
        for (int oh = 0; oh < g.outHeight; ++oh)
            for (int ow = 0; ow < g.outWidth; ++ow) {
                const Window window = windowOf(g, oh, ow);
                const float gradient = dyPlane[std::int64_t(oh) * g.outWidth + ow];
                if (g.kind == PoolKind::Max) {
                    dxPlane[firstMaximum(g, xPlane, window)] += gradient;
                } else {
                    const float share = gradient / float(window.count());
                    for (int ih = window.rowBegin; ih < window.rowEnd; ++ih)
                        for (int iw = window.colBegin; iw < window.colEnd; ++iw)
                            dxPlane[std::int64_t(ih) * g.inWidth + iw] += share;
                }
            }
    }
}

}  // namespace cnnstudio::cpu_ref
