// Batch normalisation over x, y (N, C, S) with per-channel gamma, beta (C); M = N * S values
// per channel.
//   training forward   mean[c] = sum x / M,  var[c] = sum (x - mean)^2 / M  (biased)
//                      invStd[c] = 1 / sqrt(var + eps)
//                      y = (x - mean) * invStd * gamma + beta
//                      running = (1 - momentum) running + momentum * batch value, with the
//                      unbiased variance var * M / (M - 1) (PyTorch)
//   inference forward  y = (x - runningMean) / sqrt(runningVar + eps) * gamma + beta
//   backward           dbeta[c] = sum dy,   dgamma[c] = sum dy * xhat,  xhat = (x - mean) invStd
//                      dx = gamma invStd (dy - dbeta / M - xhat dgamma / M)
// The statistics are sums accumulated in double (channel_sums.cuh: a grid of blocks per
// channel, then a finalize kernel adding each channel's partials in order); the elementwise
// passes are grid-stride kernels over all N * C * S values, float4 when S % 4 == 0.
// This file computes them on fp32 NCHW activations; in bf16 precision (bf16 channels-last) the
// ops hand over to batchnorm_channels_last.h, which also fuses the ReLU of BatchNorm -> ReLU,
// and a network's input block (Conv2D -> BatchNorm -> ReLU) to small_input_conv.h.
#include <cstdint>

#include "cuda/activation_storage.cuh"
#include "cuda/batchnorm_channels_last.h"
#include "cuda/bf16_convert.h"
#include "cuda/channel_sums.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "cuda/small_input_conv.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

// From sum x and sum x^2: the batch statistics and the running-statistics update.
__global__ void finishStatisticsKernel(const double2* __restrict__ partials, int channels,
                                       int splits, double valuesPerChannel, float epsilon,
                                       float momentum, float* __restrict__ runningMean,
                                       float* __restrict__ runningVar,
                                       float* __restrict__ savedMean,
                                       float* __restrict__ savedInvStd) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    const double2 sums = channelTotal(partials, c, splits);
    const double mean = sums.x / valuesPerChannel;
    double variance = sums.y / valuesPerChannel - mean * mean;
    variance = variance > 0.0 ? variance : 0.0;  // rounding can leave a tiny negative
    savedMean[c] = float(mean);
    savedInvStd[c] = float(1.0 / sqrt(variance + double(epsilon)));
    const double unbiased = variance * valuesPerChannel / (valuesPerChannel - 1.0);
    runningMean[c] = float((1.0 - momentum) * runningMean[c] + momentum * mean);
    runningVar[c] = float((1.0 - momentum) * runningVar[c] + momentum * unbiased);
}

// y may be x and dx may be dy (in place): each element is read and written by one thread.
// y = (x - mean[c]) * scale[c] + beta[c] with scale = invStd * gamma: the training forward
// (mean, invStd = the batch statistics) and inference (the running ones, invStd computed
// here when `invStdFromVariance`).
template <bool Vectorised>
__global__ void normalizeKernel(const float* x, const float* __restrict__ gamma,
                                const float* __restrict__ beta, const float* __restrict__ mean,
                                const float* __restrict__ invStdOrVariance,
                                bool invStdFromVariance, float epsilon, int channels,
                                int spatial, int count, float* y) {
    const int stride = gridDim.x * blockDim.x;
    auto coefficients = [&](int c, float& shift, float& scale) {
        const float spread = __ldg(invStdOrVariance + c);
        const float invStd = invStdFromVariance ? rsqrtf(spread + epsilon) : spread;
        scale = invStd * __ldg(gamma + c);
        shift = __ldg(beta + c) - __ldg(mean + c) * scale;
    };
    if constexpr (Vectorised) {  // spatial % 4 == 0: a float4 never straddles two channels
        const int spatial4 = spatial / 4;
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* y4 = reinterpret_cast<float4*>(y);
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count / 4; i += stride) {
            float shift, scale;
            coefficients((i / spatial4) % channels, shift, scale);
            const float4 v = __ldg(x4 + i);
            y4[i] = float4{fmaf(v.x, scale, shift), fmaf(v.y, scale, shift),
                           fmaf(v.z, scale, shift), fmaf(v.w, scale, shift)};
        }
    } else {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
            float shift, scale;
            coefficients((i / spatial) % channels, shift, scale);
            y[i] = fmaf(__ldg(x + i), scale, shift);
        }
    }
}

// From sum dy and sum dy * x: dbeta = sum dy, dgamma = invStd (sum dy x - mean sum dy).
__global__ void finishGradientsKernel(const double2* __restrict__ partials, int channels,
                                      int splits, const float* __restrict__ savedMean,
                                      const float* __restrict__ savedInvStd,
                                      float* __restrict__ dgamma, float* __restrict__ dbeta) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    const double2 sums = channelTotal(partials, c, splits);
    dbeta[c] = float(sums.x);
    dgamma[c] = float(double(savedInvStd[c]) * (sums.y - double(savedMean[c]) * sums.x));
}

// dx = gamma invStd (dy - dbeta / M - xhat dgamma / M); differentiates the normalisation
// line of the training forward through mean and variance.
template <bool Vectorised>
__global__ void inputGradientKernel(const float* x, const float* dy,
                                    const float* __restrict__ gamma,
                                    const float* __restrict__ savedMean,
                                    const float* __restrict__ savedInvStd,
                                    const float* __restrict__ dgamma,
                                    const float* __restrict__ dbeta, float valuesPerChannel,
                                    int channels, int spatial, int count, float* dx) {
    const int stride = gridDim.x * blockDim.x;
    // dx = a * dy + b * x + d, per channel.
    auto coefficients = [&](int c, float& a, float& b, float& d) {
        const float invStd = __ldg(savedInvStd + c), mean = __ldg(savedMean + c);
        const float gain = __ldg(gamma + c) * invStd;
        const float gammaTerm = __ldg(dgamma + c) / valuesPerChannel;
        const float betaTerm = __ldg(dbeta + c) / valuesPerChannel;
        a = gain;
        b = -gain * gammaTerm * invStd;
        d = gain * (gammaTerm * invStd * mean - betaTerm);
    };
    if constexpr (Vectorised) {
        const int spatial4 = spatial / 4;
        const float4* x4 = reinterpret_cast<const float4*>(x);
        const float4* dy4 = reinterpret_cast<const float4*>(dy);
        float4* dx4 = reinterpret_cast<float4*>(dx);
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count / 4; i += stride) {
            float a, b, d;
            coefficients((i / spatial4) % channels, a, b, d);
            const float4 v = __ldg(x4 + i), g = __ldg(dy4 + i);
            dx4[i] = float4{fmaf(a, g.x, fmaf(b, v.x, d)), fmaf(a, g.y, fmaf(b, v.y, d)),
                            fmaf(a, g.z, fmaf(b, v.z, d)), fmaf(a, g.w, fmaf(b, v.w, d))};
        }
    } else {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
            float a, b, d;
            coefficients((i / spatial) % channels, a, b, d);
            dx[i] = fmaf(a, __ldg(dy + i), fmaf(b, __ldg(x + i), d));
        }
    }
}

// The pooling the channels-last chain kernels run: 2x2 windows of stride 2 tiling the image.
bool poolsWholeTwoByTwoWindows(const PoolGeometry& pool) {
    return pool.kernelHeight == 2 && pool.kernelWidth == 2 && pool.strideHeight == 2 &&
           pool.strideWidth == 2 && pool.padHeight == 0 && pool.padWidth == 0 &&
           pool.inHeight == 2 * pool.outHeight && pool.inWidth == 2 * pool.outWidth;
}

}  // namespace

void CudaBackend::doBatchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                             const float* gamma, const float* beta, float* y,
                                             float* runningMean, float* runningVar,
                                             float* savedMean, float* savedInvStd) {
    requireIndexable(g, opLabel("batchNormForwardTraining"));
    const std::int64_t perChannel = std::int64_t(g.batch) * g.spatial;
    activateDevice();
    const int multiprocessors = deviceProperties().multiProcessorCount;
    if (storesBf16()) {
        batchNormForwardTrainingChannelsLast(g, asBf16(x), gamma, beta, false, asBf16(y), runningMean,
                                             runningVar, savedMean, savedInvStd,
                                             workspace(batchNormChannelsLastWorkspaceBytes(g)),
                                             multiprocessors, stream());
        return;
    }
    const int splits = channelSumSplits(g.channels, perChannel, multiprocessors);
    auto* partials = static_cast<double2*>(
        workspace(std::size_t(g.channels) * splits * sizeof(double2)));
    const bool sumsVectorised = g.spatial % 4 == 0 && isAligned(x, 16);
    launchKernel("batch norm forward: partial sums", channelPartialSumsKernel<true>,
                 dim3(unsigned(g.channels), unsigned(splits)), kChannelSumThreads, stream(), x, x,
                 g.batch, g.channels, g.spatial, splits, sumsVectorised, partials);
    launchKernel("batch norm forward: statistics", finishStatisticsKernel,
                 unsigned((g.channels + 255) / 256), 256, stream(),
                 static_cast<const double2*>(partials), g.channels, splits, double(perChannel),
                 g.epsilon, g.momentum, runningMean, runningVar, savedMean, savedInvStd);
    const int count = int(g.count());
    const bool vectorised = g.spatial % 4 == 0 && isAligned(x, 16) && isAligned(y, 16);
    const unsigned blocks =
        gridStrideBlocks(std::size_t(vectorised ? count / 4 : count), 256, multiprocessors);
    launchKernel("batch norm forward: normalize",
                 vectorised ? normalizeKernel<true> : normalizeKernel<false>, blocks, 256,
                 stream(), x, gamma, beta, static_cast<const float*>(savedMean),
                 static_cast<const float*>(savedInvStd), false, g.epsilon, g.channels, g.spatial,
                 count, y);
}

void CudaBackend::doBatchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                              const float* gamma, const float* beta,
                                              const float* runningMean, const float* runningVar,
                                              float* y) {
    requireIndexable(g, opLabel("batchNormForwardInference"));
    activateDevice();
    if (storesBf16()) {
        batchNormForwardInferenceChannelsLast(g, asBf16(x), gamma, beta, runningMean, runningVar,
                                              false, asBf16(y),
                                              deviceProperties().multiProcessorCount, stream());
        return;
    }
    const int count = int(g.count());
    const bool vectorised = g.spatial % 4 == 0 && isAligned(x, 16) && isAligned(y, 16);
    const unsigned blocks = gridStrideBlocks(std::size_t(vectorised ? count / 4 : count), 256,
                                             deviceProperties().multiProcessorCount);
    launchKernel("batch norm inference", vectorised ? normalizeKernel<true> : normalizeKernel<false>,
                 blocks, 256, stream(), x, gamma, beta, runningMean, runningVar, true, g.epsilon,
                 g.channels, g.spatial, count, y);
}

void CudaBackend::doBatchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                      const float* gamma, const float* savedMean,
                                      const float* savedInvStd, float* dx, float* dgamma,
                                      float* dbeta) {
    requireIndexable(g, opLabel("batchNormBackward"));
    activateDevice();
    const int multiprocessors = deviceProperties().multiProcessorCount;
    if (storesBf16()) {
        batchNormBackwardChannelsLast(g, asBf16(x), asBf16(dy), gamma, nullptr, savedMean,
                                      savedInvStd, false, asBf16(dx), dgamma, dbeta,
                                      workspace(batchNormChannelsLastWorkspaceBytes(g)),
                                      multiprocessors, stream());
        return;
    }
    const std::int64_t perChannel = std::int64_t(g.batch) * g.spatial;
    const int splits = channelSumSplits(g.channels, perChannel, multiprocessors);
    auto* partials = static_cast<double2*>(
        workspace(std::size_t(g.channels) * splits * sizeof(double2)));
    launchKernel("batch norm backward: partial sums", channelPartialSumsKernel<true>,
                 dim3(unsigned(g.channels), unsigned(splits)), kChannelSumThreads, stream(), dy, x,
                 g.batch, g.channels, g.spatial, splits,
                 g.spatial % 4 == 0 && isAligned(x, 16) && isAligned(dy, 16), partials);
    launchKernel("batch norm backward: dgamma and dbeta", finishGradientsKernel,
                 unsigned((g.channels + 255) / 256), 256, stream(),
                 static_cast<const double2*>(partials), g.channels, splits, savedMean,
                 savedInvStd, dgamma, dbeta);
    const int count = int(g.count());
    const bool vectorised =
        g.spatial % 4 == 0 && isAligned(x, 16) && isAligned(dy, 16) && isAligned(dx, 16);
    const unsigned blocks =
        gridStrideBlocks(std::size_t(vectorised ? count / 4 : count), 256, multiprocessors);
    launchKernel("batch norm backward: dx",
                 vectorised ? inputGradientKernel<true> : inputGradientKernel<false>, blocks, 256,
                 stream(), x, dy, gamma, savedMean, savedInvStd,
                 static_cast<const float*>(dgamma), static_cast<const float*>(dbeta),
                 float(perChannel), g.channels, g.spatial, count, dx);
}

void CudaBackend::doBatchNormReluForwardTraining(const BatchNormGeometry& g, const float* x,
                                                 const float* gamma, const float* beta, float* z,
                                                 float* y, float* runningMean, float* runningVar,
                                                 float* savedMean, float* savedInvStd) {
    if (!storesBf16()) {
        Backend::doBatchNormReluForwardTraining(g, x, gamma, beta, z, y, runningMean, runningVar,
                                                savedMean, savedInvStd);
        return;
    }
    requireIndexable(g, opLabel("batchNormReluForwardTraining"));
    activateDevice();
    batchNormForwardTrainingChannelsLast(g, asBf16(x), gamma, beta, true, asBf16(y), runningMean,
                                         runningVar, savedMean, savedInvStd,
                                         workspace(batchNormChannelsLastWorkspaceBytes(g)),
                                         deviceProperties().multiProcessorCount, stream());
}

void CudaBackend::doBatchNormReluBackward(const BatchNormGeometry& g, const float* x,
                                          const float* y, const float* dy, const float* gamma,
                                          const float* beta, const float* savedMean,
                                          const float* savedInvStd, float* dz, float* dx,
                                          float* dgamma, float* dbeta) {
    if (!storesBf16()) {
        Backend::doBatchNormReluBackward(g, x, y, dy, gamma, beta, savedMean, savedInvStd, dz, dx,
                                         dgamma, dbeta);
        return;
    }
    requireIndexable(g, opLabel("batchNormReluBackward"));
    activateDevice();
    batchNormBackwardChannelsLast(g, asBf16(x), asBf16(dy), gamma, beta, savedMean,
                                  savedInvStd, true, asBf16(dx), dgamma, dbeta,
                                  workspace(batchNormChannelsLastWorkspaceBytes(g)),
                                  deviceProperties().multiProcessorCount, stream());
}

void CudaBackend::doBatchNormReluMaxPoolForwardTraining(const BatchNormGeometry& g,
                                                        const PoolGeometry& pool, const float* x,
                                                        const float* gamma, const float* beta,
                                                        float* z, float* r, float* y,
                                                        float* runningMean, float* runningVar,
                                                        float* savedMean, float* savedInvStd) {
    if (!storesBf16() || !poolsWholeTwoByTwoWindows(pool)) {
        Backend::doBatchNormReluMaxPoolForwardTraining(g, pool, x, gamma, beta, z, r, y,
                                                       runningMean, runningVar, savedMean,
                                                       savedInvStd);
        return;
    }
    requireIndexable(g, opLabel("batchNormReluMaxPoolForwardTraining"));
    activateDevice();
    batchNormReluMaxPoolForwardTrainingChannelsLast(
        g, pool.outHeight, pool.outWidth, asBf16(x), gamma, beta, asBf16(y), runningMean,
        runningVar, savedMean, savedInvStd, workspace(batchNormChannelsLastWorkspaceBytes(g)),
        deviceProperties().multiProcessorCount, stream());
}

void CudaBackend::doBatchNormReluMaxPoolBackward(const BatchNormGeometry& g,
                                                 const PoolGeometry& pool, const float* x,
                                                 const float* r, const float* y, const float* dy,
                                                 const float* gamma, const float* beta,
                                                 const float* savedMean,
                                                 const float* savedInvStd, float* dr, float* dz,
                                                 float* dx, float* dgamma, float* dbeta) {
    if (!storesBf16() || !poolsWholeTwoByTwoWindows(pool)) {
        Backend::doBatchNormReluMaxPoolBackward(g, pool, x, r, y, dy, gamma, beta, savedMean,
                                                savedInvStd, dr, dz, dx, dgamma, dbeta);
        return;
    }
    requireIndexable(g, opLabel("batchNormReluMaxPoolBackward"));
    activateDevice();
    batchNormReluMaxPoolBackwardChannelsLast(
        g, pool.outHeight, pool.outWidth, asBf16(x), asBf16(dy), gamma, beta, savedMean,
        savedInvStd, asBf16(dx), dgamma, dbeta, workspace(batchNormChannelsLastWorkspaceBytes(g)),
        deviceProperties().multiProcessorCount, stream());
}

void CudaBackend::doConvBatchNormReluForwardTraining(
        const ConvGeometry& g, const float* x, const float* w, const float* bias,
        const BatchNormGeometry& bn, const float* gamma, const float* beta, float* c, float* z,
        float* y, float* runningMean, float* runningVar, float* savedMean, float* savedInvStd) {
    if (!storesBf16() || !isSmallInputConvBatchNormRelu(g, c)) {
        Backend::doConvBatchNormReluForwardTraining(g, x, w, bias, bn, gamma, beta, c, z, y,
                                                    runningMean, runningVar, savedMean,
                                                    savedInvStd);
        return;
    }
    requireIndexable(g, opLabel("convBatchNormReluForwardTraining"));
    activateDevice();
    smallInputConvBatchNormReluForwardTraining(
        g, bn, asBf16(x), w, bias, gamma, beta, c, asBf16(y), runningMean, runningVar, savedMean,
        savedInvStd, workspace(smallInputConvBatchNormReluWorkspaceBytes(g)),
        deviceProperties().multiProcessorCount, stream());
}

void CudaBackend::doConvBatchNormReluBackward(
        const ConvGeometry& g, const float* x, const float* w, const float* bias,
        const BatchNormGeometry& bn, const float* c, const float* y, const float* dy,
        const float* gamma, const float* beta, const float* savedMean, const float* savedInvStd,
        float* dz, float* dc, float* dw, float* dbias, float* dgamma, float* dbeta) {
    if (!storesBf16() || !isSmallInputConvBatchNormRelu(g, c)) {
        Backend::doConvBatchNormReluBackward(g, x, w, bias, bn, c, y, dy, gamma, beta, savedMean,
                                             savedInvStd, dz, dc, dw, dbias, dgamma, dbeta);
        return;
    }
    requireIndexable(g, opLabel("convBatchNormReluBackward"));
    activateDevice();
    smallInputConvBatchNormReluBackward(g, asBf16(x), w, c, asBf16(y), asBf16(dy), gamma,
                                        savedInvStd, dw, dbias, dgamma, dbeta,
                                        workspace(smallInputConvBatchNormReluWorkspaceBytes(g)),
                                        stream());
}

}  // namespace cnnstudio::kernels
