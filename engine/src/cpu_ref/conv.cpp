// 2-D convolution as PyTorch's Conv2d: cross-correlation with groups and zero padding, the same
// on both sides.
//   x (batch, inChannels, inHeight, inWidth)
//   w (outChannels, inChannels/groups, kernelHeight, kernelWidth)
//   bias (outChannels), nullable
//   y (batch, outChannels, outHeight, outWidth)
//   y[n,o,oh,ow] = bias[o] + sum_{c,kh,kw} w[o,c,kh,kw] x[n, group(o)*inPerGroup + c,
//                                                        oh*stride + kh - pad, ow*stride + kw - pad]
// Loops run kernel tap outermost and output pixel innermost, so the inner loop walks a row of y
// and a (strided) row of x; padding is handled by clipping the output range per tap instead of
// testing every pixel. Forward and backward-data sum in float (a sum over channels x taps);
// backward-filter sums over batch x output pixels, which can be long, so it sums in double.
#include <algorithm>
#include <vector>

#include "cpu_ref/cpu_ref_ops.h"
#include "ops/op_checks.h"

namespace cnnstudio::cpu_ref {
namespace {

// The output positions [begin, end) whose input position out*stride + tap - pad lies in [0, in).
struct OutputRange {
    int begin, end;
};

OutputRange validOutputs(int tap, int in, int out, int stride, int pad) {
    const int firstOffset = pad - tap;        // out*stride >= pad - tap
    const int lastOffset = in - 1 + pad - tap;  // out*stride <= in - 1 + pad - tap
    int begin = firstOffset <= 0 ? 0 : (firstOffset + stride - 1) / stride;
    int end = lastOffset < 0 ? 0 : std::min(out, lastOffset / stride + 1);
    return {begin, std::max(begin, end)};
}

}  // namespace

void convForward(const ConvGeometry& g, const float* x, const float* w, const float* bias, float* y) {
    const char* op = "cpu-ref convForward";
    ops::checkConvGeometry(g, op);
    ops::requirePointer(x, "x", op);
    ops::requirePointer(w, "w", op);
    ops::requirePointer(y, "y", op);

    const int inPerGroup = g.inChannels / g.groups, outPerGroup = g.outChannels / g.groups;
    const std::int64_t inPlane = std::int64_t(g.inHeight) * g.inWidth;
    const std::int64_t outPlane = std::int64_t(g.outHeight) * g.outWidth;
    const int taps = g.kernelHeight * g.kernelWidth;

    for (int n = 0; n < g.batch; ++n) {
        for (int o = 0; o < g.outChannels; ++o) {
            const int group = o / outPerGroup;
            float* yPlane = y + (std::int64_t(n) * g.outChannels + o) * outPlane;
            std::fill(yPlane, yPlane + outPlane, bias ? bias[o] : 0.0f);
            for (int c = 0; c < inPerGroup; ++c) {
                const int inChannel = group * inPerGroup + c;
                const float* xPlane = x + (std::int64_t(n) * g.inChannels + inChannel) * inPlane;
                const float* kernel = w + (std::int64_t(o) * inPerGroup + c) * taps;
                for (int kh = 0; kh < g.kernelHeight; ++kh) {
                    const OutputRange rows = validOutputs(kh, g.inHeight, g.outHeight, g.strideHeight, g.padHeight);
                    for (int kw = 0; kw < g.kernelWidth; ++kw) {
                        const OutputRange cols = validOutputs(kw, g.inWidth, g.outWidth, g.strideWidth, g.padWidth);
                        const float weight = kernel[kh * g.kernelWidth + kw];
                        for (int oh = rows.begin; oh < rows.end; ++oh) {
                            const float* xRow = xPlane + std::int64_t(oh * g.strideHeight + kh - g.padHeight) * g.inWidth;
                            float* yRow = yPlane + std::int64_t(oh) * g.outWidth;
                            for (int ow = cols.begin; ow < cols.end; ++ow)
                                yRow[ow] += weight * xRow[std::int64_t(ow) * g.strideWidth + kw - g.padWidth];
                        }
                    }
                }
            }
        }
    }
}

// Differentiates the forward's yRow[ow] += weight * xRow[...] with respect to x: every tap
// scatters weight * dy back to the input pixel it read.
void convBackwardData(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
    const char* op = "cpu-ref convBackwardData";
    ops::checkConvGeometry(g, op);
    ops::requirePointer(dy, "dy", op);
    ops::requirePointer(w, "w", op);
    ops::requirePointer(dx, "dx", op);

    const int inPerGroup = g.inChannels / g.groups, outPerGroup = g.outChannels / g.groups;
    const std::int64_t inPlane = std::int64_t(g.inHeight) * g.inWidth;
    const std::int64_t outPlane = std::int64_t(g.outHeight) * g.outWidth;
    const int taps = g.kernelHeight * g.kernelWidth;

    std::fill(dx, dx + g.inputCount(), 0.0f);
    for (int n = 0; n < g.batch; ++n) {
        for (int o = 0; o < g.outChannels; ++o) {
            const int group = o / outPerGroup;
            const float* dyPlane = dy + (std::int64_t(n) * g.outChannels + o) * outPlane;
            for (int c = 0; c < inPerGroup; ++c) {
                const int inChannel = group * inPerGroup + c;
                float* dxPlane = dx + (std::int64_t(n) * g.inChannels + inChannel) * inPlane;
                const float* kernel = w + (std::int64_t(o) * inPerGroup + c) * taps;
                for (int kh = 0; kh < g.kernelHeight; ++kh) {
                    const OutputRange rows = validOutputs(kh, g.inHeight, g.outHeight, g.strideHeight, g.padHeight);
                    for (int kw = 0; kw < g.kernelWidth; ++kw) {
                        const OutputRange cols = validOutputs(kw, g.inWidth, g.outWidth, g.strideWidth, g.padWidth);
                        const float weight = kernel[kh * g.kernelWidth + kw];
                        for (int oh = rows.begin; oh < rows.end; ++oh) {
                            float* dxRow = dxPlane + std::int64_t(oh * g.strideHeight + kh - g.padHeight) * g.inWidth;
                            const float* dyRow = dyPlane + std::int64_t(oh) * g.outWidth;
                            for (int ow = cols.begin; ow < cols.end; ++ow)
                                dxRow[std::int64_t(ow) * g.strideWidth + kw - g.padWidth] += weight * dyRow[ow];
                        }
                    }
                }
            }
        }
    }
}

// Differentiates the forward's yRow[ow] += weight * xRow[...] with respect to weight (a sum of
// dy * x over batch and output pixels) and y = bias + ... with respect to bias (a sum of dy).
void convBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw, float* dbias) {
    const char* op = "cpu-ref convBackwardFilter";
    ops::checkConvGeometry(g, op);
    ops::requirePointer(x, "x", op);
    ops::requirePointer(dy, "dy", op);
    ops::requirePointer(dw, "dw", op);

    const int inPerGroup = g.inChannels / g.groups, outPerGroup = g.outChannels / g.groups;
    const std::int64_t inPlane = std::int64_t(g.inHeight) * g.inWidth;
    const std::int64_t outPlane = std::int64_t(g.outHeight) * g.outWidth;
    const int taps = g.kernelHeight * g.kernelWidth;

    std::vector<double> tapSums(static_cast<std::size_t>(taps));
    for (int o = 0; o < g.outChannels; ++o) {
        const int group = o / outPerGroup;
        for (int c = 0; c < inPerGroup; ++c) {
            const int inChannel = group * inPerGroup + c;
            std::fill(tapSums.begin(), tapSums.end(), 0.0);
            for (int n = 0; n < g.batch; ++n) {
                const float* xPlane = x + (std::int64_t(n) * g.inChannels + inChannel) * inPlane;
                const float* dyPlane = dy + (std::int64_t(n) * g.outChannels + o) * outPlane;
                for (int kh = 0; kh < g.kernelHeight; ++kh) {
                    const OutputRange rows = validOutputs(kh, g.inHeight, g.outHeight, g.strideHeight, g.padHeight);
                    for (int kw = 0; kw < g.kernelWidth; ++kw) {
                        const OutputRange cols = validOutputs(kw, g.inWidth, g.outWidth, g.strideWidth, g.padWidth);
                        double sum = 0.0;
                        for (int oh = rows.begin; oh < rows.end; ++oh) {
                            const float* xRow = xPlane + std::int64_t(oh * g.strideHeight + kh - g.padHeight) * g.inWidth;
                            const float* dyRow = dyPlane + std::int64_t(oh) * g.outWidth;
                            for (int ow = cols.begin; ow < cols.end; ++ow)
                                sum += double(dyRow[ow]) * double(xRow[std::int64_t(ow) * g.strideWidth + kw - g.padWidth]);
                        }
                        tapSums[std::size_t(kh * g.kernelWidth + kw)] += sum;
                    }
                }
            }
            float* kernel = dw + (std::int64_t(o) * inPerGroup + c) * taps;
            for (int t = 0; t < taps; ++t) kernel[t] = float(tapSums[std::size_t(t)]);
        }
    }

    if (dbias) {
        for (int o = 0; o < g.outChannels; ++o) {
            double sum = 0.0;
            for (int n = 0; n < g.batch; ++n) {
                const float* dyPlane = dy + (std::int64_t(n) * g.outChannels + o) * outPlane;
                for (std::int64_t i = 0; i < outPlane; ++i) sum += dyPlane[i];
            }
            dbias[o] = float(sum);
        }
    }
}

}  // namespace cnnstudio::cpu_ref
