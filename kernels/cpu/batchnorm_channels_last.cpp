// Batch normalisation on bf16 channels-last activations: see batchnorm_channels_last.h.
#include "cpu/batchnorm_channels_last.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

// Rows (or 2x2 windows) summed in fp32 before the sums join a thread's double totals.
constexpr int kTileRows = 16;

// This thread's share [begin, end) of `count` items inside a parallel region.
struct Share {
    std::int64_t begin, end;
};
Share threadShare(std::int64_t count) {
    const std::int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    return {count * thread / threads, count * (thread + 1) / threads};
}

// Per-thread pairs of channel sums in double, added in thread order.
class ChannelSumPairs {
public:
    explicit ChannelSumPairs(int channels)
        : channels_(channels), sums_(std::size_t(2 * channels) * omp_get_max_threads(), 0.0) {}
    double* first(int thread) { return sums_.data() + std::size_t(2 * channels_) * thread; }
    double* second(int thread) { return first(thread) + channels_; }
    // Totals over the threads, into the first pair.
    void addUp() {
        for (int thread = 1; thread < omp_get_max_threads(); ++thread)
            for (int c = 0; c < 2 * channels_; ++c) sums_[std::size_t(c)] += first(thread)[c];
    }

private:
    int channels_;
    std::vector<double> sums_;
};

// Tile sums in fp32, flushed into a thread's double sums every kTileRows rows (or windows).
struct TileSums {
    std::vector<float> first, second;
    double *totalFirst, *totalSecond;
    int rows = 0;

    TileSums(int channels, double* totalFirst, double* totalSecond)
        : first(std::size_t(channels), 0.0f), second(std::size_t(channels), 0.0f),
          totalFirst(totalFirst), totalSecond(totalSecond) {}
    void rowDone() {
        if (++rows == kTileRows) flush();
    }
    void flush() {
        for (std::size_t c = 0; c < first.size(); ++c) {
            totalFirst[c] += first[c];
            totalSecond[c] += second[c];
            first[c] = second[c] = 0.0f;
        }
        rows = 0;
    }
};

// The per-channel affine map of the normalisation: z = (x - mean) scale + shift.
struct Affine {
    std::vector<float> mean, scale, shift;
};

// The ReLU's output as stored (rounded to bf16), from x.
inline float storedRelu(float x, float mean, float scale, float shift) {
    const float z = (x - mean) * scale + shift;
    return toFloat(fromFloat<Bf16>(z < 0.0f ? 0.0f : z));
}

// The batch's statistics of every channel: saved, folded into the running statistics, and
// returned as the normalisation's affine map.
CNNSTUDIO_BF16_LOOP Affine trainingStatistics(const BatchNormGeometry& g, const Bf16* x, const float* gamma,
                          const float* beta, float* runningMean, float* runningVar,
                          float* savedMean, float* savedInvStd) {
    const int channels = g.channels;
    const std::int64_t rows = std::int64_t(g.batch) * g.spatial;
    std::vector<float> origin(static_cast<std::size_t>(channels));
    for (int c = 0; c < channels; ++c) origin[std::size_t(c)] = toFloat(x[c]);
    ChannelSumPairs sums(channels);
#pragma omp parallel
    {
        const int thread = omp_get_thread_num();
        TileSums tile(channels, sums.first(thread), sums.second(thread));
        float* s1 = tile.first.data();
        float* s2 = tile.second.data();
        const float* o = origin.data();
        const Share share = threadShare(rows);
        for (std::int64_t row = share.begin; row < share.end; ++row) {
            const Bf16* xRow = x + row * channels;
#pragma omp simd
            for (int c = 0; c < channels; ++c) {
                const float d = toFloat(xRow[c]) - o[c];
                s1[c] += d;
                s2[c] += d * d;
            }
            tile.rowDone();
        }
        tile.flush();
    }
    sums.addUp();
    const double values = double(rows);
    Affine affine{std::vector<float>(std::size_t(channels)), std::vector<float>(std::size_t(channels)),
                  std::vector<float>(beta, beta + channels)};
    for (int c = 0; c < channels; ++c) {
        const double meanOffset = sums.first(0)[c] / values;
        const double squares = std::max(sums.second(0)[c] - meanOffset * sums.first(0)[c], 0.0);
        const float mean = float(origin[std::size_t(c)] + meanOffset);
        const float invStd = float(1.0 / std::sqrt(squares / values + double(g.epsilon)));
        savedMean[c] = mean;
        savedInvStd[c] = invStd;
        const float unbiasedVariance = float(squares / (values - 1.0));
        runningMean[c] = (1.0f - g.momentum) * runningMean[c] + g.momentum * mean;
        runningVar[c] = (1.0f - g.momentum) * runningVar[c] + g.momentum * unbiasedVariance;
        affine.mean[std::size_t(c)] = mean;
        affine.scale[std::size_t(c)] = gamma[c] * invStd;
    }
    return affine;
}

// y = (x - mean) scale + shift per row (relu of it with Rectify); y may be x.
template <bool Rectify>
CNNSTUDIO_BF16_LOOP void normaliseRows(const BatchNormGeometry& g, const Affine& affine, const Bf16* x, Bf16* y) {
    const int channels = g.channels;
    const std::int64_t rows = std::int64_t(g.batch) * g.spatial;
    const float *mean = affine.mean.data(), *scale = affine.scale.data(), *shift = affine.shift.data();
#pragma omp parallel for schedule(static) if (rows * channels >= parallelThreshold)
    for (std::int64_t row = 0; row < rows; ++row) {
        const Bf16* xRow = x + row * channels;
        Bf16* yRow = y + row * channels;
#pragma omp simd
        for (int c = 0; c < channels; ++c) {
            const float z = (toFloat(xRow[c]) - mean[c]) * scale[c] + shift[c];
            yRow[c] = fromFloat<Bf16>(Rectify ? (z < 0.0f ? 0.0f : z) : z);
        }
    }
}

// Adds one row's dz and dz (x - mean) to the channels' sums. Not inlined: inlined into
// backwardUnits<4>'s parallel region GCC 12 does not vectorise it ("no vectype" for the row of
// x), and the pooled chain's backward ran it one channel at a time.
[[gnu::noinline]] CNNSTUDIO_BF16_LOOP void addGradientSums(const float* dz, const Bf16* xRow, const float* mean,
                                                         int channels, float* sumDz, float* sumDzCentred) {
#pragma omp simd
    for (int c = 0; c < channels; ++c) {
        sumDz[c] += dz[c];
        sumDzCentred[c] += dz[c] * (toFloat(xRow[c]) - mean[c]);
    }
}

// The rows of x under one unit of the backward pass and the gradient of z there: a unit is one
// row (batch norm, batch norm -> ReLU) or one 2x2 window (the pooled chain).
struct UnitRows {
    std::int64_t row[4];
};

// The backward pass from the gradient of z, which gradient(unit, dz, rows) gives for unit
// `unit` of `units` (RowsPerUnit rows of C floats into dz, their rows of x into rows).
// Two passes, each asking for it again: the sums, then dx.
template <int RowsPerUnit, class UnitGradient>
CNNSTUDIO_BF16_LOOP void backwardUnits(const BatchNormGeometry& g, const Bf16* x, const float* gamma,
                   const float* savedMean, const float* savedInvStd, Bf16* dx, float* dgamma,
                   float* dbeta, std::int64_t units, UnitGradient gradient) {
    const int channels = g.channels;
    ChannelSumPairs sums(channels);
#pragma omp parallel
    {
        const int thread = omp_get_thread_num();
        TileSums tile(channels, sums.first(thread), sums.second(thread));
        float* sumDz = tile.first.data();
        float* sumDzCentred = tile.second.data();
        std::vector<float> room(static_cast<std::size_t>(RowsPerUnit * channels));
        UnitRows rows;
        const Share share = threadShare(units);
        for (std::int64_t unit = share.begin; unit < share.end; ++unit) {
            gradient(unit, room.data(), rows);
            for (int k = 0; k < RowsPerUnit; ++k)
                addGradientSums(room.data() + std::size_t(k) * channels, x + rows.row[k] * channels, savedMean,
                                channels, sumDz, sumDzCentred);
            tile.rowDone();
        }
        tile.flush();
    }
    sums.addUp();
    // dx = gamma invStd (dz - dbeta / M - (x - mean) invStd dgamma / M)
    const double values = double(g.batch) * g.spatial;
    const auto perChannel = static_cast<std::size_t>(channels);
    std::vector<float> outer(perChannel), meanDz(perChannel), centredScale(perChannel);
    for (int c = 0; c < channels; ++c) {
        const double invStd = savedInvStd[c], sumDy = sums.first(0)[c],
                     sumDyCentred = sums.second(0)[c];
        dgamma[c] = float(sumDyCentred * invStd);
        dbeta[c] = float(sumDy);
        outer[std::size_t(c)] = float(gamma[c] * invStd);
        meanDz[std::size_t(c)] = float(sumDy / values);
        centredScale[std::size_t(c)] = float(sumDyCentred * invStd * invStd / values);
    }
    const float *o = outer.data(), *m = meanDz.data(), *s = centredScale.data();
#pragma omp parallel
    {
        std::vector<float> room(static_cast<std::size_t>(RowsPerUnit * channels));
        UnitRows rows;
#pragma omp for schedule(static)
        for (std::int64_t unit = 0; unit < units; ++unit) {
            gradient(unit, room.data(), rows);
            for (int k = 0; k < RowsPerUnit; ++k) {
                const Bf16* xRow = x + rows.row[k] * channels;
                Bf16* dxRow = dx + rows.row[k] * channels;
                const float* dz = room.data() + std::size_t(k) * channels;
#pragma omp simd
                for (int c = 0; c < channels; ++c)
                    dxRow[c] = fromFloat<Bf16>(
                        o[c] * (dz[c] - m[c] - (toFloat(xRow[c]) - savedMean[c]) * s[c]));
            }
        }
    }
}

// dz for the four values of a 2x2 window (rows xa xb / xc xd of x, dz their four rows of C
// floats) from the window's dy: the unpooled rules, each window's dy to its first maximum of the
// ReLU's output (order a b / c d, as the 2x2 max-pool backward) where that maximum is positive,
// 0 elsewhere. Not inlined: inlined into backwardUnits' parallel region GCC 12 no longer
// vectorises its loop.
[[gnu::noinline]] CNNSTUDIO_BF16_LOOP void pooledReluGradient(const Bf16* xa, const Bf16* xb, const Bf16* xc,
                                          const Bf16* xd, const Bf16* gradient, const float* mean,
                                          const float* scale, const float* shift, int channels,
                                          float* dz) {
    float *dza = dz, *dzb = dz + channels, *dzc = dz + 2 * channels, *dzd = dz + 3 * channels;
#pragma omp simd
    for (int c = 0; c < channels; ++c) {
        const float a = storedRelu(toFloat(xa[c]), mean[c], scale[c], shift[c]);
        const float b = storedRelu(toFloat(xb[c]), mean[c], scale[c], shift[c]);
        const float cc = storedRelu(toFloat(xc[c]), mean[c], scale[c], shift[c]);
        const float d = storedRelu(toFloat(xd[c]), mean[c], scale[c], shift[c]);
        // Selects in maxPoolBackward2x2Loop's form (pool.cpp), which GCC 12 vectorises. The
        // ReLU's output is never negative, so only a, which wins ties, needs the gate.
        const bool bWins = b > a;
        const float abMax = bWins ? b : a;
        const bool cWins = cc > abMax;
        const float abcMax = cWins ? cc : abMax;
        const bool dWins = d > abcMax;
        const float value = toFloat(gradient[c]);
        const float aGradient = a > 0.0f ? value : 0.0f;
        dzd[c] = dWins ? value : 0.0f;
        dzc[c] = (!dWins && cWins) ? value : 0.0f;
        dzb[c] = (!dWins && !cWins && bWins) ? value : 0.0f;
        dza[c] = (!dWins && !cWins && !bWins) ? aGradient : 0.0f;
    }
}

}  // namespace

CNNSTUDIO_BF16_LOOP void batchNormForwardTrainingChannelsLast(const BatchNormGeometry& g, const Bf16* x,
                                          const float* gamma, const float* beta, Bf16* y,
                                          float* runningMean, float* runningVar,
                                          float* savedMean, float* savedInvStd, bool relu) {
    const Affine affine =
        trainingStatistics(g, x, gamma, beta, runningMean, runningVar, savedMean, savedInvStd);
    if (relu)
        normaliseRows<true>(g, affine, x, y);
    else
        normaliseRows<false>(g, affine, x, y);
}

CNNSTUDIO_BF16_LOOP void batchNormReluMaxPoolForwardTrainingChannelsLast(const BatchNormGeometry& g,
                                                     const PoolGeometry& pool, const Bf16* x,
                                                     const float* gamma, const float* beta,
                                                     Bf16* y, float* runningMean,
                                                     float* runningVar, float* savedMean,
                                                     float* savedInvStd) {
    const Affine affine =
        trainingStatistics(g, x, gamma, beta, runningMean, runningVar, savedMean, savedInvStd);
    const int channels = g.channels, width = pool.inWidth, outWidth = pool.outWidth;
    const std::int64_t outRows = std::int64_t(pool.batch) * pool.outHeight;
    const float *mean = affine.mean.data(), *scale = affine.scale.data(), *shift = affine.shift.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t outRow = 0; outRow < outRows; ++outRow) {
        const std::int64_t topRow = (outRow / pool.outHeight) * pool.inHeight + 2 * (outRow % pool.outHeight);
        const Bf16* top = x + topRow * width * channels;
        const Bf16* bottom = top + std::int64_t(width) * channels;
        for (int q = 0; q < outWidth; ++q) {
            const std::int64_t left = std::int64_t(2 * q) * channels, right = left + channels;
            Bf16* out = y + (outRow * outWidth + q) * channels;
#pragma omp simd
            for (int c = 0; c < channels; ++c) {
                const float a = storedRelu(toFloat(top[left + c]), mean[c], scale[c], shift[c]);
                const float b = storedRelu(toFloat(top[right + c]), mean[c], scale[c], shift[c]);
                const float d = storedRelu(toFloat(bottom[left + c]), mean[c], scale[c], shift[c]);
                const float e = storedRelu(toFloat(bottom[right + c]), mean[c], scale[c], shift[c]);
                out[c] = fromFloat<Bf16>(std::max(std::max(a, b), std::max(d, e)));
            }
        }
    }
}

CNNSTUDIO_BF16_LOOP void batchNormForwardInferenceChannelsLast(const BatchNormGeometry& g, const Bf16* x,
                                           const float* gamma, const float* beta,
                                           const float* runningMean, const float* runningVar,
                                           Bf16* y) {
    Affine affine{std::vector<float>(runningMean, runningMean + g.channels),
                  std::vector<float>(std::size_t(g.channels)),
                  std::vector<float>(beta, beta + g.channels)};
    for (int c = 0; c < g.channels; ++c)
        affine.scale[std::size_t(c)] = gamma[c] / std::sqrt(runningVar[c] + g.epsilon);
    normaliseRows<false>(g, affine, x, y);
}

CNNSTUDIO_BF16_LOOP void batchNormBackwardChannelsLast(const BatchNormGeometry& g, const Bf16* x, const Bf16* dy,
                                   const float* gamma, const float* beta, const float* savedMean,
                                   const float* savedInvStd, Bf16* dx, float* dgamma,
                                   float* dbeta, bool relu) {
    const int channels = g.channels;
    std::vector<float> scale(static_cast<std::size_t>(channels));
    for (int c = 0; c < channels; ++c) scale[std::size_t(c)] = gamma[c] * savedInvStd[c];
    const float* s = scale.data();
    const std::int64_t rows = std::int64_t(g.batch) * g.spatial;
    backwardUnits<1>(g, x, gamma, savedMean, savedInvStd, dx, dgamma, dbeta, rows,
                     [&](std::int64_t row, float* dz, UnitRows& at) {
                         at.row[0] = row;
                         const Bf16* xRow = x + row * channels;
                         const Bf16* dyRow = dy + row * channels;
                         if (!relu) {
#pragma omp simd
                             for (int c = 0; c < channels; ++c) dz[c] = toFloat(dyRow[c]);
                             return;
                         }
#pragma omp simd
                         for (int c = 0; c < channels; ++c) {
                             const float gradient = toFloat(dyRow[c]);
                             const float r = storedRelu(toFloat(xRow[c]), savedMean[c], s[c], beta[c]);
                             dz[c] = r > 0.0f ? gradient : 0.0f;
                         }
                     });
}

CNNSTUDIO_BF16_LOOP void batchNormReluMaxPoolBackwardChannelsLast(const BatchNormGeometry& g, const PoolGeometry& pool,
                                              const Bf16* x, const Bf16* dy, const float* gamma,
                                              const float* beta, const float* savedMean,
                                              const float* savedInvStd, Bf16* dx, float* dgamma,
                                              float* dbeta) {
    const int channels = g.channels, width = pool.inWidth, outWidth = pool.outWidth;
    std::vector<float> scale(static_cast<std::size_t>(channels));
    for (int c = 0; c < channels; ++c) scale[std::size_t(c)] = gamma[c] * savedInvStd[c];
    const float* s = scale.data();
    const std::int64_t windows = std::int64_t(pool.batch) * pool.outHeight * outWidth;
    backwardUnits<4>(
        g, x, gamma, savedMean, savedInvStd, dx, dgamma, dbeta, windows,
        [&](std::int64_t window, float* dz, UnitRows& at) {
            const std::int64_t outRow = window / outWidth, q = window % outWidth;
            const std::int64_t topRow =
                (outRow / pool.outHeight) * pool.inHeight + 2 * (outRow % pool.outHeight);
            at.row[0] = topRow * width + 2 * q;
            at.row[1] = at.row[0] + 1;
            at.row[2] = at.row[0] + width;
            at.row[3] = at.row[2] + 1;
            pooledReluGradient(x + at.row[0] * channels, x + at.row[1] * channels,
                               x + at.row[2] * channels, x + at.row[3] * channels,
                               dy + window * channels, savedMean, s, beta, channels, dz);
        });
}

}  // namespace cnnstudio::cpu
