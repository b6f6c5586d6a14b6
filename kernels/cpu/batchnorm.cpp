// Batch normalisation over x (N, C, S): per channel c, over the M = N*S values of that channel,
// which lie in N contiguous slices of S floats at x + (n C + c) S.
//   training:  mean, var (biased) of the batch; invStd = 1 / sqrt(var + eps);
//              y = gamma (x - mean) invStd + beta; savedMean = mean, savedInvStd = invStd;
//              running = (1 - momentum) running + momentum batch, with the UNBIASED variance
//              var M / (M - 1) (PyTorch's rule)
//   inference: the same y with the running statistics
//   backward:  xhat = (x - mean) invStd; dbeta = sum dy, dgamma = sum dy xhat,
//              dx = gamma invStd (dy - dbeta / M - xhat dgamma / M)
// Our own loops, one thread per channel: a channel's slices (590 KB for fer-cnn's first
// layers) stay in the core's L2 cache across the passes (mean, variance, normalise; or the two
// sums, then dx), so x is read from memory about once. oneDNN 2.6 runs NCHW batch norm in its
// generic ncsp kernel, 2.6x slower on one thread (23 ms against 8.7 ms forward, 27 against
// 9.5 backward, (64, 64, 48x48), 2-core EPYC, 2026) and far worse when threads contend.
// Forward sums run in float within a slice (vectorised) and in double across slices; the
// variance takes two passes, as cpu-ref, so a large mean costs no precision. The backward runs
// in double throughout: dx is a difference of O(1) terms that nearly cancel when a channel has
// few values (exactly, up to eps, when M = 2), and double costs it only ~18% on one core.
// That is fp32 precision's NCHW; bf16 precision's activations are bf16 channels-last, whose
// loops are batchnorm_channels_last.h.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

#include "cpu/batchnorm_channels_last.h"
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

std::int64_t sliceOffset(const BatchNormGeometry& g, int image, int c) {
    return (std::int64_t(image) * g.channels + c) * g.spatial;
}

float sliceSum(const float* x, int count) {
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < count; ++i) sum += x[i];
    return sum;
}

float sliceSquaredDeviation(const float* x, float mean, int count) {
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int i = 0; i < count; ++i) {
        const float centred = x[i] - mean;
        sum += centred * centred;
    }
    return sum;
}

// y = (x - mean) scale + shift over one slice; with Rectify, max(that, 0) (the ReLU after it).
template <bool Rectify = false>
void normaliseSlice(const float* x, float mean, float scale, float shift, float* y, int count) {
#pragma omp simd
    for (int i = 0; i < count; ++i) {
        const float z = (x[i] - mean) * scale + shift;
        y[i] = Rectify ? (z < 0.0f ? 0.0f : z) : z;
    }
}

// The ReLU's output at one value, as normaliseSlice<true> computes it (NaN stays NaN). Written
// as a select: through std::max's references GCC 12 does not vectorise the pooled backward.
inline float rectified(float x, float mean, float scale, float shift) {
    const float z = (x - mean) * scale + shift;
    return z < 0.0f ? 0.0f : z;
}

// dz = dy where the ReLU passed its input (y > 0), else 0, over one slice.
void gatedSlice(const float* y, const float* dy, float* dz, int count) {
#pragma omp simd
    for (int i = 0; i < count; ++i) {
        const float gradient = dy[i];  // loaded unconditionally, as in pooledReluGradientSlice
        dz[i] = y[i] > 0.0f ? gradient : 0.0f;
    }
}

// Whether `pool` takes 2x2 windows of stride 2 that tile its input: every value lies in one window.
bool poolsWholeTwoByTwoWindows(const PoolGeometry& pool) {
    return pool.kernelHeight == 2 && pool.kernelWidth == 2 && pool.strideHeight == 2 &&
           pool.strideWidth == 2 && pool.padHeight == 0 && pool.padWidth == 0 &&
           pool.inHeight == 2 * pool.outHeight && pool.inWidth == 2 * pool.outWidth;
}

// y (H/2, W/2) = the maxima of the 2x2 windows of relu((x - mean) scale + shift) over one
// (H, W) slice of x.
void normaliseReluPoolSlice(const float* x, float mean, float scale, float shift, int height,
                            int width, float* y) {
    const int outWidth = width / 2;
    for (int p = 0; p < height / 2; ++p) {
        const float* top = x + std::int64_t(2 * p) * width;
        const float* bottom = top + width;
        float* out = y + std::int64_t(p) * outWidth;
#pragma omp simd
        for (int q = 0; q < outWidth; ++q) {
            const float a = rectified(top[2 * q], mean, scale, shift);
            const float b = rectified(top[2 * q + 1], mean, scale, shift);
            const float c = rectified(bottom[2 * q], mean, scale, shift);
            const float d = rectified(bottom[2 * q + 1], mean, scale, shift);
            out[q] = std::max(std::max(a, b), std::max(c, d));
        }
    }
}

// The gradient of z (the batch norm's output) over one (H, W) slice of a batch norm -> ReLU ->
// 2x2 max pool chain, from dy (H/2, W/2): each window's dy goes to its first maximum of the
// ReLU's output (order a b / c d, as maxPoolBackward2x2Loop) where that maximum is positive,
// 0 elsewhere: the unfused ops' rules. The ReLU's output is formed again from x, bit for bit as
// the forward pass formed it. Not inlined: inlined into batchNormBackwardChannels' parallel
// region, GCC 12 no longer vectorises its loop (and the slice is long enough for a call).
[[gnu::noinline]] void pooledReluGradientSlice(const float* x, const float* dy, float mean, float scale, float shift,
                             int height, int width, float* dz) {
    const int outWidth = width / 2;
    for (int p = 0; p < height / 2; ++p) {
        const float* top = x + std::int64_t(2 * p) * width;
        const float* bottom = top + width;
        float* dzTop = dz + std::int64_t(2 * p) * width;
        float* dzBottom = dzTop + width;
        const float* gradient = dy + std::int64_t(p) * outWidth;
#pragma omp simd
        for (int q = 0; q < outWidth; ++q) {
            const float a = rectified(top[2 * q], mean, scale, shift);
            const float b = rectified(top[2 * q + 1], mean, scale, shift);
            const float c = rectified(bottom[2 * q], mean, scale, shift);
            const float d = rectified(bottom[2 * q + 1], mean, scale, shift);
            // Selects, not branches, in maxPoolBackward2x2Loop's form (pool.cpp), which GCC 12
            // vectorises; written out here again because it does not when they are shared
            // through an inline function returning the window. The ReLU's output is never
            // negative, so b, c or d wins only when positive and only a, which wins ties (a
            // window of zeros too), needs the gate.
            const bool bWins = b > a;
            const float abMax = bWins ? b : a;
            const bool cWins = c > abMax;
            const float abcMax = cWins ? c : abMax;
            const bool dWins = d > abcMax;
            const float dyValue = gradient[q];
            const float aGradient = a > 0.0f ? dyValue : 0.0f;
            dzBottom[2 * q + 1] = dWins ? dyValue : 0.0f;
            dzBottom[2 * q] = (!dWins && cWins) ? dyValue : 0.0f;
            dzTop[2 * q + 1] = (!dWins && !cWins && bWins) ? dyValue : 0.0f;
            dzTop[2 * q] = (!dWins && !cWins && !bWins) ? aGradient : 0.0f;
        }
    }
}

struct ChannelStatistics {
    float mean, invStd;
};

// The batch's mean and 1/sqrt(var + eps) of channel c, saved for backward and folded into the
// running statistics.
ChannelStatistics channelStatistics(const BatchNormGeometry& g, const float* x, int c,
                                    float* runningMean, float* runningVar, float* savedMean,
                                    float* savedInvStd) {
    const double valuesPerChannel = double(g.batch) * g.spatial;
    double sum = 0.0;
    for (int n = 0; n < g.batch; ++n) sum += sliceSum(x + sliceOffset(g, n, c), g.spatial);
    const float mean = float(sum / valuesPerChannel);
    double squares = 0.0;
    for (int n = 0; n < g.batch; ++n)
        squares += sliceSquaredDeviation(x + sliceOffset(g, n, c), mean, g.spatial);
    const double biasedVariance = squares / valuesPerChannel;
    const float invStd = float(1.0 / std::sqrt(biasedVariance + double(g.epsilon)));
    savedMean[c] = mean;
    savedInvStd[c] = invStd;
    const float unbiasedVariance = float(squares / (valuesPerChannel - 1.0));
    runningMean[c] = (1.0f - g.momentum) * runningMean[c] + g.momentum * mean;
    runningVar[c] = (1.0f - g.momentum) * runningVar[c] + g.momentum * unbiasedVariance;
    return {mean, invStd};
}

// The backward pass of every channel from the gradient of z (the batch norm's output), which
// sliceGradient(n, c, room) gives for the slice (n, c): a pointer to it, dy itself or `room`
// (g.spatial floats, L1-sized) filled with it. Each of the two passes asks for it again, so a
// chain's gradient of z never reaches memory.
template <class SliceGradient>
void batchNormBackwardChannels(const BatchNormGeometry& g, const float* x, const float* gamma,
                               const float* savedMean, const float* savedInvStd, float* dx,
                               float* dgamma, float* dbeta, SliceGradient sliceGradient) {
    const double valuesPerChannel = double(g.batch) * g.spatial;
#pragma omp parallel
    {
        std::vector<float> room(std::size_t(g.spatial));
#pragma omp for schedule(static)
        for (int c = 0; c < g.channels; ++c) {
            const double mean = savedMean[c], invStd = savedInvStd[c];
            double sumDy = 0.0, sumDyCentred = 0.0;  // sum dz, sum dz (x - mean)
            for (int n = 0; n < g.batch; ++n) {
                const float* xSlice = x + sliceOffset(g, n, c);
                const float* dzSlice = sliceGradient(n, c, room.data());
#pragma omp simd reduction(+ : sumDy, sumDyCentred)
                for (int i = 0; i < g.spatial; ++i) {
                    sumDy += dzSlice[i];
                    sumDyCentred += dzSlice[i] * (xSlice[i] - mean);
                }
            }
            dgamma[c] = float(sumDyCentred * invStd);
            dbeta[c] = float(sumDy);
            // dx = gamma invStd (dz - dbeta / M - (x - mean) invStd dgamma / M)
            const double outerScale = gamma[c] * invStd;
            const double meanDy = sumDy / valuesPerChannel;
            const double centredScale = sumDyCentred * invStd * invStd / valuesPerChannel;
            for (int n = 0; n < g.batch; ++n) {
                const float* xSlice = x + sliceOffset(g, n, c);
                const float* dzSlice = sliceGradient(n, c, room.data());
                float* dxSlice = dx + sliceOffset(g, n, c);
#pragma omp simd
                for (int i = 0; i < g.spatial; ++i)
                    dxSlice[i] = float(outerScale *
                                       (dzSlice[i] - meanDy - (xSlice[i] - mean) * centredScale));
            }
        }
    }
}

// fp32 NCHW training forward: each channel's batch statistics, then its slices normalised
// (and rectified with Relu). Threads split the channels.
template <bool Relu>
void forwardTrainingSlices(const BatchNormGeometry& g, const float* x, const float* gamma,
                           const float* beta, float* y, float* runningMean, float* runningVar,
                           float* savedMean, float* savedInvStd) {
#pragma omp parallel for schedule(static)
    for (int c = 0; c < g.channels; ++c) {
        const auto [mean, invStd] =
            channelStatistics(g, x, c, runningMean, runningVar, savedMean, savedInvStd);
        for (int n = 0; n < g.batch; ++n)
            normaliseSlice<Relu>(x + sliceOffset(g, n, c), mean, gamma[c] * invStd, beta[c],
                                 y + sliceOffset(g, n, c), g.spatial);
    }
}

}  // namespace

void CpuBackend::doBatchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                            const float* gamma, const float* beta, float* y,
                                            float* runningMean, float* runningVar, float* savedMean,
                                            float* savedInvStd) {
    OmpThreadScope threads(threads_);
    if (storesBf16())
        batchNormForwardTrainingChannelsLast(g, stored<Bf16>(x), gamma, beta, stored<Bf16>(y),
                                             runningMean, runningVar, savedMean, savedInvStd,
                                             false);
    else
        forwardTrainingSlices<false>(g, x, gamma, beta, y, runningMean, runningVar, savedMean,
                                     savedInvStd);
}

void CpuBackend::doBatchNormReluForwardTraining(const BatchNormGeometry& g, const float* x,
                                                const float* gamma, const float* beta, float*,
                                                float* y, float* runningMean, float* runningVar,
                                                float* savedMean, float* savedInvStd) {
    OmpThreadScope threads(threads_);
    if (storesBf16())
        batchNormForwardTrainingChannelsLast(g, stored<Bf16>(x), gamma, beta, stored<Bf16>(y),
                                             runningMean, runningVar, savedMean, savedInvStd,
                                             true);
    else
        forwardTrainingSlices<true>(g, x, gamma, beta, y, runningMean, runningVar, savedMean,
                                    savedInvStd);
}

void CpuBackend::doBatchNormReluMaxPoolForwardTraining(const BatchNormGeometry& g,
                                                       const PoolGeometry& pool, const float* x,
                                                       const float* gamma, const float* beta,
                                                       float* z, float* r, float* y,
                                                       float* runningMean, float* runningVar,
                                                       float* savedMean, float* savedInvStd) {
    if (!poolsWholeTwoByTwoWindows(pool)) {
        Backend::doBatchNormReluMaxPoolForwardTraining(g, pool, x, gamma, beta, z, r, y, runningMean,
                                                       runningVar, savedMean, savedInvStd);
        return;
    }
    OmpThreadScope threads(threads_);
    if (storesBf16()) {
        batchNormReluMaxPoolForwardTrainingChannelsLast(g, pool, stored<Bf16>(x), gamma, beta,
                                                        stored<Bf16>(y), runningMean, runningVar,
                                                        savedMean, savedInvStd);
        return;
    }
    const std::int64_t pooledSlice = std::int64_t(pool.outHeight) * pool.outWidth;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < g.channels; ++c) {
        const auto [mean, invStd] =
            channelStatistics(g, x, c, runningMean, runningVar, savedMean, savedInvStd);
        for (int n = 0; n < g.batch; ++n)
            normaliseReluPoolSlice(x + sliceOffset(g, n, c), mean, gamma[c] * invStd, beta[c],
                                   pool.inHeight, pool.inWidth,
                                   y + (std::int64_t(n) * g.channels + c) * pooledSlice);
    }
}

void CpuBackend::doBatchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                             const float* gamma, const float* beta,
                                             const float* runningMean, const float* runningVar,
                                             float* y) {
    OmpThreadScope threads(threads_);
    if (storesBf16()) {
        batchNormForwardInferenceChannelsLast(g, stored<Bf16>(x), gamma, beta, runningMean,
                                              runningVar, stored<Bf16>(y));
        return;
    }
    const std::int64_t slices = std::int64_t(g.batch) * g.channels;
    const bool parallel = slices * g.spatial >= parallelThreshold;
    // No statistics to gather: every (image, channel) slice is independent.
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t slice = 0; slice < slices; ++slice) {
        const int c = int(slice % g.channels);
        const float scale = gamma[c] / std::sqrt(runningVar[c] + g.epsilon);
        normaliseSlice(x + slice * g.spatial, runningMean[c], scale, beta[c], y + slice * g.spatial,
                       g.spatial);
    }
}

void CpuBackend::doBatchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                     const float* gamma, const float* savedMean,
                                     const float* savedInvStd, float* dx, float* dgamma,
                                     float* dbeta) {
    OmpThreadScope threads(threads_);
    if (storesBf16()) {
        batchNormBackwardChannelsLast(g, stored<Bf16>(x), stored<Bf16>(dy), gamma, nullptr,
                                      savedMean, savedInvStd, stored<Bf16>(dx), dgamma, dbeta,
                                      false);
        return;
    }
    batchNormBackwardChannels(g, x, gamma, savedMean, savedInvStd, dx, dgamma, dbeta,
                              [&](int n, int c, float*) { return dy + sliceOffset(g, n, c); });
}

void CpuBackend::doBatchNormReluBackward(const BatchNormGeometry& g, const float* x, const float* y,
                                         const float* dy, const float* gamma, const float* beta,
                                         const float* savedMean, const float* savedInvStd, float*,
                                         float* dx, float* dgamma, float* dbeta) {
    OmpThreadScope threads(threads_);
    if (storesBf16()) {
        batchNormBackwardChannelsLast(g, stored<Bf16>(x), stored<Bf16>(dy), gamma, beta,
                                      savedMean, savedInvStd, stored<Bf16>(dx), dgamma, dbeta,
                                      true);
        return;
    }
    batchNormBackwardChannels(g, x, gamma, savedMean, savedInvStd, dx, dgamma, dbeta,
                              [&](int n, int c, float* room) {
                                  gatedSlice(y + sliceOffset(g, n, c), dy + sliceOffset(g, n, c),
                                             room, g.spatial);
                                  return static_cast<const float*>(room);
                              });
}

void CpuBackend::doBatchNormReluMaxPoolBackward(const BatchNormGeometry& g, const PoolGeometry& pool,
                                                const float* x, const float* r, const float* y,
                                                const float* dy, const float* gamma,
                                                const float* beta, const float* savedMean,
                                                const float* savedInvStd, float* dr, float* dz,
                                                float* dx, float* dgamma, float* dbeta) {
    if (!poolsWholeTwoByTwoWindows(pool)) {
        Backend::doBatchNormReluMaxPoolBackward(g, pool, x, r, y, dy, gamma, beta, savedMean,
                                                savedInvStd, dr, dz, dx, dgamma, dbeta);
        return;
    }
    OmpThreadScope threads(threads_);
    if (storesBf16()) {
        batchNormReluMaxPoolBackwardChannelsLast(g, pool, stored<Bf16>(x), stored<Bf16>(dy), gamma,
                                                 beta, savedMean, savedInvStd, stored<Bf16>(dx),
                                                 dgamma, dbeta);
        return;
    }
    const std::int64_t pooledSlice = std::int64_t(pool.outHeight) * pool.outWidth;
    batchNormBackwardChannels(g, x, gamma, savedMean, savedInvStd, dx, dgamma, dbeta,
                              [&](int n, int c, float* room) {
                                  pooledReluGradientSlice(
                                      x + sliceOffset(g, n, c),
                                      dy + (std::int64_t(n) * g.channels + c) * pooledSlice,
                                      savedMean[c], gamma[c] * savedInvStd[c], beta[c],
                                      pool.inHeight, pool.inWidth, room);
                                  return static_cast<const float*>(room);
                              });
}

}  // namespace cnnstudio::cpu
