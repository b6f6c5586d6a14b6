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

#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {
namespace {

// The output positions [begin, end) whose input position out*stride + tap - pad lies in [0, in).
struct OutputRange {
    int begin, end;
};

OutputRange validOutputs(int tap, int in, int out, int stride, int pad) {
    const int firstOffset = pad - tap;          // out*stride >= pad - tap
    const int lastOffset = in - 1 + pad - tap;  // out*stride <= in - 1 + pad - tap
    int begin = firstOffset <= 0 ? 0 : (firstOffset + stride - 1) / stride;
    int end = lastOffset < 0 ? 0 : std::min(out, lastOffset / stride + 1);
    return {begin, std::max(begin, end)};
}

// What every loop below needs about a geometry: sizes, and for each kernel row and column the
// range of outputs that tap reaches inside the input (padding is where it does not).
struct ConvLayout {
    explicit ConvLayout(const ConvGeometry& g)
        : g(g), inPerGroup(g.inChannels / g.groups), outPerGroup(g.outChannels / g.groups),
          inPlane(std::int64_t(g.inHeight) * g.inWidth),
          outPlane(std::int64_t(g.outHeight) * g.outWidth),
          taps(g.kernelHeight * g.kernelWidth) {
        for (int kh = 0; kh < g.kernelHeight; ++kh)
            rows.push_back(validOutputs(kh, g.inHeight, g.outHeight, g.strideHeight, g.padHeight));
        for (int kw = 0; kw < g.kernelWidth; ++kw)
            cols.push_back(validOutputs(kw, g.inWidth, g.outWidth, g.strideWidth, g.padWidth));
    }

    // Input channel c of output channel outChannel's group, image n.
    std::int64_t inputPlaneOffset(int n, int outChannel, int c) const {
        const int inChannel = (outChannel / outPerGroup) * inPerGroup + c;
        return (std::int64_t(n) * g.inChannels + inChannel) * inPlane;
    }
    std::int64_t outputPlaneOffset(int n, int outChannel) const {
        return (std::int64_t(n) * g.outChannels + outChannel) * outPlane;
    }
    std::int64_t kernelOffset(int outChannel, int c) const {
        return (std::int64_t(outChannel) * inPerGroup + c) * taps;
    }
    // Offset in the input plane of the row tap kh reads for output row oh, and of the column
    // tap kw reads for output column ow.
    std::int64_t inputRow(int oh, int kh) const {
        return std::int64_t(oh * g.strideHeight + kh - g.padHeight) * g.inWidth;
    }
    std::int64_t inputColumn(int ow, int kw) const {
        return std::int64_t(ow) * g.strideWidth + kw - g.padWidth;
    }

    const ConvGeometry& g;
    int inPerGroup, outPerGroup;
    std::int64_t inPlane, outPlane;
    int taps;
    std::vector<OutputRange> rows, cols;
};

}  // namespace

void CpuRefBackend::doConvForward(const ConvGeometry& g, const float* x, const float* w,
                                  const float* bias, float* y) {
    const ConvLayout layout(g);

    for (int n = 0; n < g.batch; ++n) {
        for (int o = 0; o < g.outChannels; ++o) {
            float* yPlane = y + layout.outputPlaneOffset(n, o);
            std::fill(yPlane, yPlane + layout.outPlane, bias ? bias[o] : 0.0f);
            for (int c = 0; c < layout.inPerGroup; ++c) {
                const float* xPlane = x + layout.inputPlaneOffset(n, o, c);
                const float* kernel = w + layout.kernelOffset(o, c);
                for (int kh = 0; kh < g.kernelHeight; ++kh) {
                    for (int kw = 0; kw < g.kernelWidth; ++kw) {
                        const float weight = kernel[kh * g.kernelWidth + kw];
                        const OutputRange rows = layout.rows[std::size_t(kh)];
                        const OutputRange cols = layout.cols[std::size_t(kw)];
                        for (int oh = rows.begin; oh < rows.end; ++oh) {
                            const float* xRow = xPlane + layout.inputRow(oh, kh);
                            float* yRow = yPlane + std::int64_t(oh) * g.outWidth;
                            for (int ow = cols.begin; ow < cols.end; ++ow)
                                yRow[ow] += weight * xRow[layout.inputColumn(ow, kw)];
                        }
                    }
                }
            }
        }
    }
}

// Differentiates the forward's yRow[ow] += weight * xRow[...] with respect to x: every tap
// scatters weight * dy back to the input pixel it read.
void CpuRefBackend::doConvBackwardData(const ConvGeometry& g, const float* dy, const float* w,
                                       float* dx) {
    const ConvLayout layout(g);

    std::fill(dx, dx + g.inputCount(), 0.0f);
    for (int n = 0; n < g.batch; ++n) {
        for (int o = 0; o < g.outChannels; ++o) {
            const float* dyPlane = dy + layout.outputPlaneOffset(n, o);
            for (int c = 0; c < layout.inPerGroup; ++c) {
                float* dxPlane = dx + layout.inputPlaneOffset(n, o, c);
                const float* kernel = w + layout.kernelOffset(o, c);
                for (int kh = 0; kh < g.kernelHeight; ++kh) {
                    for (int kw = 0; kw < g.kernelWidth; ++kw) {
                        const float weight = kernel[kh * g.kernelWidth + kw];
                        const OutputRange rows = layout.rows[std::size_t(kh)];
                        const OutputRange cols = layout.cols[std::size_t(kw)];
                        for (int oh = rows.begin; oh < rows.end; ++oh) {
                            float* dxRow = dxPlane + layout.inputRow(oh, kh);
                            const float* dyRow = dyPlane + std::int64_t(oh) * g.outWidth;
                            for (int ow = cols.begin; ow < cols.end; ++ow)
                                dxRow[layout.inputColumn(ow, kw)] += weight * dyRow[ow];
                        }
                    }
                }
            }
        }
    }
}

// Differentiates the forward's yRow[ow] += weight * xRow[...] with respect to weight (a sum of
// dy * x over batch and output pixels) and y = bias + ... with respect to bias (a sum of dy).
void CpuRefBackend::doConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                                         float* dw, float* dbias) {
    const ConvLayout layout(g);

    std::vector<double> tapSums(static_cast<std::size_t>(layout.taps));
    for (int o = 0; o < g.outChannels; ++o) {
        for (int c = 0; c < layout.inPerGroup; ++c) {
            std::fill(tapSums.begin(), tapSums.end(), 0.0);
            for (int n = 0; n < g.batch; ++n) {
                const float* xPlane = x + layout.inputPlaneOffset(n, o, c);
                const float* dyPlane = dy + layout.outputPlaneOffset(n, o);
                for (int kh = 0; kh < g.kernelHeight; ++kh) {
                    for (int kw = 0; kw < g.kernelWidth; ++kw) {
                        const OutputRange rows = layout.rows[std::size_t(kh)];
                        const OutputRange cols = layout.cols[std::size_t(kw)];
                        double sum = 0.0;
                        for (int oh = rows.begin; oh < rows.end; ++oh) {
                            const float* xRow = xPlane + layout.inputRow(oh, kh);
                            const float* dyRow = dyPlane + std::int64_t(oh) * g.outWidth;
                            for (int ow = cols.begin; ow < cols.end; ++ow)
                                sum += double(dyRow[ow]) * double(xRow[layout.inputColumn(ow, kw)]);
                        }
                        tapSums[std::size_t(kh * g.kernelWidth + kw)] += sum;
                    }
                }
            }
            float* kernel = dw + layout.kernelOffset(o, c);
            for (int t = 0; t < layout.taps; ++t) kernel[t] = float(tapSums[std::size_t(t)]);
        }
    }

    if (dbias) {
        for (int o = 0; o < g.outChannels; ++o) {
            double sum = 0.0;
            for (int n = 0; n < g.batch; ++n) {
                const float* dyPlane = dy + layout.outputPlaneOffset(n, o);
                for (std::int64_t i = 0; i < layout.outPlane; ++i) sum += dyPlane[i];
            }
            dbias[o] = float(sum);
        }
    }
}

}  // namespace cnnstudio::cpu_ref
