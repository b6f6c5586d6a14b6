// Convolutions over inputs of fewer than 8 channels (a network's image input: 1 grey or 3 colour
// channels) on bf16 channels-last activations, computed directly on the CUDA cores in fp32 from
// the fp32 master weights:
//   x (N, H, W, C) bf16, w (K, C, R, S) fp32, bias (K) fp32, y (N, P, Q, K) bf16, C < 8
//   forward          y[n][p][q][k] = bias[k] + sum_{c,r,s} x[n][p*sh-ph+r][q*sw-pw+s][c] * w[k][c][r][s]
//   backward filter  dw[k][c][r][s] = sum_{n,p,q} dy[n][p][q][k] * x[n][p*sh-ph+r][q*sw-pw+s][c]
//                    dbias[k] = sum_{n,p,q} dy[n][p][q][k]
// Why not the tensor cores: fewer than 8 channels do not fill one 16-byte vector, so a
// tensor-core convolution needs zero-padded copies of x and w (and of dx, dw) and multiplies
// mostly zeros, while the work is small (C*R*S multiply-adds per output) and the output large:
// these kernels are bound by writing y (reading dy) once. The filter gradient's sums do run on the
// tensor cores where K % 8 == 0: their operands are dy (K channels a pixel) and the pixels' tap
// values, which the kernel builds in registers from x. The backward data pass, which a network
// needs only to explain a prediction (its input layer's dx), is left to cuDNN on padded copies.
//
// The input block: a network's input layer followed by a batch norm and a ReLU, in training
// (Backend::convBatchNormReluForwardTraining and ...Backward). c = conv(x) + bias is linear in
// the patch v of an output pixel (its T = C*R*S tap values, zero in the padding): c_k = w_k.v +
// b_k. So its batch statistics follow from the patches' mean s and covariance Cov over the M
// output pixels, which a pass over x (C < 8 channels) gives, and never from c itself:
//   mean_k = w_k.s + b_k,  var_k = w_k^T Cov w_k  (biased; the running variance unbiased)
//   y = relu(w'_k.v + b'_k), w'_k = gamma_k invStd_k w_k, b'_k = beta_k + gamma_k invStd_k (b_k - mean_k)
// and its gradients too, from one pass over dy: with g = dy where y > 0 (else 0),
// A_k = sum g v, dbeta_k = sum g and Ac_k = A_k - dbeta_k s,
//   dgamma_k = invStd_k w_k.Ac_k,  dw_k = gamma_k invStd_k (Ac_k - dgamma_k invStd_k Cov w_k),
//   dbias_k = 0 (the batch norm subtracts the mean, and the bias with it).
// So c, the batch norm's output and their gradients never reach memory (c's room keeps the
// moments, 720 bytes, for the backward): the forward reads x and writes y once, the backward
// reads dy and y once, where the three ops moved c, z and y
// forward and dy, y, c, dz, dc backward (each the size of y). Moments are summed in double
// (a product of two bf16 values is exact in fp32), statistics and gradients finished in
// double.
//
// The cudnn backend's bf16 precision runs its input layers here (cudnn/conv_channels_last.cpp).
// Everything is enqueued on `stream` and returns without waiting; results are deterministic
// (no atomics). Host-callable; the kernels are in small_input_conv.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cnnstudio/backend.h"

namespace cnnstudio::kernels {

// The convolutions these kernels take: ungrouped, fewer than 8 input channels, and weights
// that fit in shared memory (K*C*R*S <= 12288: a 7x7 stem of 64 filters over RGB does).
bool isSmallInputConv(const ConvGeometry& g);

// y = conv(x, w) + bias (bias may be null). g must satisfy isSmallInputConv and the 2^30-element
// indexing limit (index_limits.h), as every op below.
void smallInputConvForward(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                           const float* bias, __nv_bfloat16* y, int multiprocessors,
                           cudaStream_t stream);

// dw (K, C, R, S) fp32 and, when dbias is not null, dbias (K), both overwritten. workspace:
// device memory of smallInputConvBackwardFilterWorkspaceBytes(g) bytes, used until the work
// enqueued on `stream` has run.
std::size_t smallInputConvBackwardFilterWorkspaceBytes(const ConvGeometry& g);
void smallInputConvBackwardFilter(const ConvGeometry& g, const __nv_bfloat16* x,
                                  const __nv_bfloat16* dy, float* dw, float* dbias,
                                  void* workspace, cudaStream_t stream);

// The input blocks these kernels take: small-input convolutions of at most 9 taps (C*R*S: a 3x3
// kernel over one grey channel), whose patch moments a thread holds in registers, and whose
// output c (bf16, the op's inner tensor, which these kernels never write otherwise) has room,
// 8-byte aligned, for the moments the forward keeps there for the backward (720 bytes).
bool isSmallInputConvBatchNormRelu(const ConvGeometry& g, const void* c);

// Device memory the input block's forward and backward need, used until their work has run.
std::size_t smallInputConvBatchNormReluWorkspaceBytes(const ConvGeometry& g);

// y = relu(batchNorm(conv(x, w) + bias)) with the batch's statistics: x (N, H, W, C) and
// y (N, P, Q, K) bf16; w (K, C, R, S), bias (K, nullable), gamma, beta (K) fp32; bn's epsilon and
// momentum; runningMean, runningVar (K) updated, savedMean, savedInvStd (K) written, as
// batchNormForwardTrainingChannelsLast does; c keeps the patch moments. g and c must satisfy
// isSmallInputConvBatchNormRelu.
void smallInputConvBatchNormReluForwardTraining(
        const ConvGeometry& g, const BatchNormGeometry& bn, const __nv_bfloat16* x, const float* w,
        const float* bias, const float* gamma, const float* beta, void* c, __nv_bfloat16* y,
        float* runningMean, float* runningVar, float* savedMean, float* savedInvStd,
        void* workspace, int multiprocessors, cudaStream_t stream);

// Its backward from dy (N, P, Q, K) bf16, given x, w, c and y as the forward left them and its
// saved inverse standard deviations: dw (K, C, R, S), dbias (K, nullable), dgamma, dbeta (K)
// fp32, overwritten. No gradient for x.
void smallInputConvBatchNormReluBackward(const ConvGeometry& g, const __nv_bfloat16* x,
                                         const float* w, const void* c,
                                         const __nv_bfloat16* y, const __nv_bfloat16* dy,
                                         const float* gamma, const float* savedInvStd, float* dw,
                                         float* dbias, float* dgamma, float* dbeta,
                                         void* workspace, cudaStream_t stream);

}  // namespace cnnstudio::kernels
