// Batch normalisation and its ReLU and ReLU + 2x2 max-pool chains on the bf16 channels-last
// activations of the cpu backend's bf16 precision: x (R = N*S rows, C channels), a row holding
// one pixel's C channels side by side. The maths are batchnorm.cpp's; the loops run along rows
// with each channel in its own vector lane, so every pass reads the tensor once, in order.
// Statistics and gradient sums are per-thread, added in thread order (the same for a thread
// count), in fp32 over tiles of 16 rows (or 2x2 windows) and in double across tiles; the
// variance comes from sums of x - x[row 0] (a sample of the channel, so a large mean costs no
// precision). Compiled for AVX-512 (CNNSTUDIO_BF16_LOOP): fer-cnn's batch norms and their
// chains took 80 ms of a step at batch 64 on one core of a Xeon with AMX, against 167 ms for
// the baseline x86-64 build and 155 ms for fp32 NCHW's loops (docs/logs/2026-12-05-cpu-bf16-nhwc).
// Backward recomputes the ReLU's output (as stored, rounded to bf16) from x for its gate and
// the pooling's first maximum, so that the chains' z, r, dr and dz never reach memory.
#pragma once

#include "cnnstudio/backend.h"
#include "cpu/activation_storage.h"

namespace cnnstudio::cpu {

// y = gamma (x - mean) invStd + beta (relu of it with Relu), with the batch's statistics.
void batchNormForwardTrainingChannelsLast(const BatchNormGeometry& g, const Bf16* x,
                                          const float* gamma, const float* beta, Bf16* y,
                                          float* runningMean, float* runningVar,
                                          float* savedMean, float* savedInvStd, bool relu);
// y = maxPool(relu(batch norm(x))) over 2x2 windows of stride 2 that tile the (H, W) image.
void batchNormReluMaxPoolForwardTrainingChannelsLast(const BatchNormGeometry& g,
                                                     const PoolGeometry& pool, const Bf16* x,
                                                     const float* gamma, const float* beta,
                                                     Bf16* y, float* runningMean,
                                                     float* runningVar, float* savedMean,
                                                     float* savedInvStd);
// With the running statistics; y may be x.
void batchNormForwardInferenceChannelsLast(const BatchNormGeometry& g, const Bf16* x,
                                           const float* gamma, const float* beta,
                                           const float* runningMean, const float* runningVar,
                                           Bf16* y);
// From dy, the gradient of the batch norm's output (of the ReLU's with relu).
void batchNormBackwardChannelsLast(const BatchNormGeometry& g, const Bf16* x, const Bf16* dy,
                                   const float* gamma, const float* beta, const float* savedMean,
                                   const float* savedInvStd, Bf16* dx, float* dgamma,
                                   float* dbeta, bool relu);
// From dy (N, H/2, W/2, C), the gradient of the pooled chain's output.
void batchNormReluMaxPoolBackwardChannelsLast(const BatchNormGeometry& g, const PoolGeometry& pool,
                                              const Bf16* x, const Bf16* dy, const float* gamma,
                                              const float* beta, const float* savedMean,
                                              const float* savedInvStd, Bf16* dx, float* dgamma,
                                              float* dbeta);

}  // namespace cnnstudio::cpu
