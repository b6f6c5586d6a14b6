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
// these kernels are bound by writing y (reading dy) once. The backward data pass, which a network
// needs only to explain a prediction (its input layer's dx), is left to cuDNN on padded copies.
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

}  // namespace cnnstudio::kernels
