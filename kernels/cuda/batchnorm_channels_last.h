// Batch normalisation, optionally fused with the ReLU that follows it (and a 2x2 max pooling
// after that), on bf16 channels-last activations, for the cuda backend in bf16 precision:
//   x, y, dy, dx (P, C) bf16, P = batch * spatial pixels (NHWC), channel fastest; M = P values
//   gamma, beta, running and saved statistics, dgamma, dbeta (C) fp32
// The maths of batchnorm.cu's fp32 NCHW kernels (Backend::batchNormForwardTraining,
// batchNormReluForwardTraining, batchNormReluBackward): values are read into fp32 registers,
// statistics summed in double, results rounded to bf16 (nearest even).
//   training forward   mean = sum x / M,  var = sum (x - mean)^2 / M (biased)
//                      y = (x - mean) / sqrt(var + eps) * gamma + beta,  then max(y, 0) with relu
//                      running = (1 - momentum) running + momentum * batch value, the variance
//                      unbiased (var * M / (M - 1)); savedMean, savedInvStd kept for backward
//   inference forward  y = (x - runningMean) / sqrt(runningVar + eps) * gamma + beta (+ relu)
//   backward           dz = relu ? (y > 0 ? dy : 0) : dy   (y: the fused forward's output,
//                      recomputed from x, gamma, beta and the saved statistics, never read)
//                      dbeta = sum dz,  dgamma = sum dz xhat,  xhat = (x - mean) savedInvStd
//                      dx = gamma savedInvStd (dz - dbeta / M - xhat dgamma / M)
// Why separate kernels from batchnorm.cu's: with channels fastest, a thread keeps one 16-byte pack
// of 8 channels (their statistics and coefficients in registers) for a whole pass over pixels,
// so the statistics need no shuffles and each pass reads its tensors once, bound by memory
// (batchnorm_channels_last.cu has the thread layout and the measured figures).
//
// In place: y may be x (forward) and dx may be dy (backward). Deterministic: no float atomics;
// per-block partial sums go to `workspace` and are added in a fixed order. The order depends on
// the geometry, `multiprocessors` and whether C % 8 == 0 with 16-byte aligned activations, so
// the same call on the same device gives the same bits. Everything is enqueued on `stream` and
// returns without waiting. g must satisfy the 2^30-element indexing limit (index_limits.h).
// Host-callable; the kernels are in batchnorm_channels_last.cu.
#pragma once

#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cnnstudio/backend.h"

namespace cnnstudio::kernels {

// Workspace bytes the training forward and the backward need (partial sums); 0 allowed when
// nothing needed. workspace must stay untouched until the work enqueued on `stream` has run.
std::size_t batchNormChannelsLastWorkspaceBytes(const BatchNormGeometry& g);

// x, y (P, C) bf16; gamma, beta, runningMean, runningVar (updated), savedMean, savedInvStd
// (written) (C) fp32.
void batchNormForwardTrainingChannelsLast(const BatchNormGeometry& g, const __nv_bfloat16* x,
        const float* gamma, const float* beta, bool relu, __nv_bfloat16* y,
        float* runningMean, float* runningVar, float* savedMean, float* savedInvStd,
        void* workspace, int multiprocessors, cudaStream_t stream);

// x, y (P, C) bf16; gamma, beta, runningMean, runningVar (C) fp32. Needs no workspace.
void batchNormForwardInferenceChannelsLast(const BatchNormGeometry& g, const __nv_bfloat16* x,
        const float* gamma, const float* beta, const float* runningMean, const float* runningVar,
        bool relu, __nv_bfloat16* y, int multiprocessors, cudaStream_t stream);

// x, dy, dx (P, C) bf16; gamma, beta, savedMean, savedInvStd (the training forward's) and
// dgamma, dbeta (overwritten) (C) fp32. With relu, the gate y > 0 is recomputed from x as the
// forward computed y (bit for bit), so the pass reads x and dy twice and writes dx: five tensor
// passes where reading y made seven. beta is read only when relu (may be null otherwise).
void batchNormBackwardChannelsLast(const BatchNormGeometry& g, const __nv_bfloat16* x,
        const __nv_bfloat16* dy, const float* gamma, const float* beta, const float* savedMean,
        const float* savedInvStd, bool relu, __nv_bfloat16* dx, float* dgamma, float* dbeta,
        void* workspace, int multiprocessors, cudaStream_t stream);

// The chain y = maxPool(relu(batchNorm(x))) over 2x2 windows of stride 2
// (Backend::batchNormReluMaxPoolForwardTraining and ...Backward) on an image of even height and
// width: x, dx (batch, 2 outHeight, 2 outWidth, C) and y, dy (batch, outHeight, outWidth, C)
// bf16 channels-last; the rest as above. The forward computes the statistics as
// batchNormForwardTrainingChannelsLast does and normalises, rectifies and pools in one pass, so
// the ReLU's output r is never written. The backward recomputes r (rounded to bf16, as the
// unfused chain stores it) from x and the saved statistics, sends dy to each window's first
// maximum (pool.cu's rule) where it is positive (the ReLU's rule), and differentiates the batch
// norm as batchNormBackwardChannelsLast does, in two passes over x and dy. Counted in tensors
// the size of x, the forward moves 2.25 (x twice, y) where the unfused chain moves 4.25, the
// backward 3.5 (x and dy twice, dx) where it moves 9.5.
// workspace: batchNormChannelsLastWorkspaceBytes(g).
void batchNormReluMaxPoolForwardTrainingChannelsLast(const BatchNormGeometry& g, int outHeight,
        int outWidth, const __nv_bfloat16* x, const float* gamma, const float* beta,
        __nv_bfloat16* y, float* runningMean, float* runningVar, float* savedMean,
        float* savedInvStd, void* workspace, int multiprocessors, cudaStream_t stream);
void batchNormReluMaxPoolBackwardChannelsLast(const BatchNormGeometry& g, int outHeight,
        int outWidth, const __nv_bfloat16* x, const __nv_bfloat16* dy, const float* gamma,
        const float* beta, const float* savedMean, const float* savedInvStd, __nv_bfloat16* dx,
        float* dgamma, float* dbeta, void* workspace, int multiprocessors, cudaStream_t stream);

}  // namespace cnnstudio::kernels
