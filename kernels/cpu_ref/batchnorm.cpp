// Batch normalisation as PyTorch's BatchNorm2d (and BatchNorm1d when spatial == 1).
//   x, y, dx, dy (batch, channels, spatial); gamma, beta, running and saved statistics (channels)
//   training:  mean_c, var_c = biased mean and variance of x[:, c, :] over batch x spatial
//              y = gamma_c (x - mean_c) invStd_c + beta_c,  invStd_c = 1 / sqrt(var_c + eps)
//              running = (1 - momentum) running + momentum batch, with the UNBIASED variance
//              var_c * M / (M - 1), M = batch * spatial
//   inference: y = gamma_c (x - runningMean_c) / sqrt(runningVar_c + eps) + beta_c
//   backward:  xhat = (x - savedMean) savedInvStd,  dbeta = sum dy,  dgamma = sum dy xhat,
//              dx = gamma invStd / M (M dy - dbeta - xhat dgamma)
// Statistics and the backward sums run over M values per channel, so they sum in double
// (two passes for the variance, which stays accurate when the mean is large).
#include <cmath>
#include <initializer_list>
#include <utility>

#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {
namespace {

// Calls visit(values) for every image's slice of channel c: `spatial` contiguous floats.
template <typename Visit>
void forEachSlice(const BatchNormGeometry& g, int c, Visit&& visit) {
    for (int n = 0; n < g.batch; ++n)
        visit((std::int64_t(n) * g.channels + c) * g.spatial);
}

}  // namespace

void CpuRefBackend::doBatchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                               const float* gamma, const float* beta, float* y,
                                               float* runningMean, float* runningVar,
                                               float* savedMean, float* savedInvStd) {

    const double valuesPerChannel = double(g.batch) * g.spatial;
    for (int c = 0; c < g.channels; ++c) {
        double sum = 0.0;
        forEachSlice(g, c, [&](std::int64_t offset) {
            for (int s = 0; s < g.spatial; ++s) sum += x[offset + s];
        });
        const double mean = sum / valuesPerChannel;
        double squares = 0.0;
        forEachSlice(g, c, [&](std::int64_t offset) {
            for (int s = 0; s < g.spatial; ++s) {
                const double centred = x[offset + s] - mean;
                squares += centred * centred;
            }
        });
        const double biasedVariance = squares / valuesPerChannel;
        const double unbiasedVariance = squares / (valuesPerChannel - 1.0);
        const double invStd = 1.0 / std::sqrt(biasedVariance + double(g.epsilon));

        const double scale = double(gamma[c]) * invStd;
        const double shift = double(beta[c]) - mean * scale;
        forEachSlice(g, c, [&](std::int64_t offset) {
            for (int s = 0; s < g.spatial; ++s) y[offset + s] = float(x[offset + s] * scale + shift);
        });

        const double momentum = g.momentum;
        runningMean[c] = float((1.0 - momentum) * runningMean[c] + momentum * mean);
        runningVar[c] = float((1.0 - momentum) * runningVar[c] + momentum * unbiasedVariance);
        savedMean[c] = float(mean);
        savedInvStd[c] = float(invStd);
    }
}

void CpuRefBackend::doBatchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                                const float* gamma, const float* beta,
                                                const float* runningMean, const float* runningVar,
                                                float* y) {

    for (int c = 0; c < g.channels; ++c) {
        const double invStd = 1.0 / std::sqrt(double(runningVar[c]) + double(g.epsilon));
        const double scale = double(gamma[c]) * invStd;
        const double shift = double(beta[c]) - double(runningMean[c]) * scale;
        forEachSlice(g, c, [&](std::int64_t offset) {
            for (int s = 0; s < g.spatial; ++s) y[offset + s] = float(x[offset + s] * scale + shift);
        });
    }
}

// Differentiates the training forward y = gamma (x - mean) invStd + beta, through mean and
// invStd as well (they are functions of the whole batch).
void CpuRefBackend::doBatchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                        const float* gamma, const float* savedMean,
                                        const float* savedInvStd, float* dx, float* dgamma,
                                        float* dbeta) {

    const double valuesPerChannel = double(g.batch) * g.spatial;
    for (int c = 0; c < g.channels; ++c) {
        const double mean = savedMean[c], invStd = savedInvStd[c];
        double sumDy = 0.0, sumDyXhat = 0.0;
        forEachSlice(g, c, [&](std::int64_t offset) {
            for (int s = 0; s < g.spatial; ++s) {
                const double xhat = (x[offset + s] - mean) * invStd;
                sumDy += dy[offset + s];
                sumDyXhat += dy[offset + s] * xhat;
            }
        });
        const double factor = double(gamma[c]) * invStd / valuesPerChannel;
        forEachSlice(g, c, [&](std::int64_t offset) {
            for (int s = 0; s < g.spatial; ++s) {
                const double xhat = (x[offset + s] - mean) * invStd;
                dx[offset + s] = float(factor * (valuesPerChannel * dy[offset + s] - sumDy - xhat * sumDyXhat));
            }
        });
        dgamma[c] = float(sumDyXhat);
        dbeta[c] = float(sumDy);
    }
}

}  // namespace cnnstudio::cpu_ref
