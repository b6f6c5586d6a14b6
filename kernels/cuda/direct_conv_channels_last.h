// Convolutions of any geometry (any groups, depthwise included; any channel counts, stride,
// padding and kernel size) on bf16 channels-last activations, computed directly on the CUDA
// cores in fp32 from the fp32 master weights. G = groups; the group of output channel k is
// g = k / (K/G), and it reads input channels g*C/G .. (g+1)*C/G - 1:
//   x (N, H, W, C) bf16, w (K, C/G, R, S) fp32 (PyTorch's layout, read as it is), bias (K) fp32,
//   y (N, P, Q, K) bf16
//   forward          y[n][p][q][k] = bias[k]
//                      + sum_{c<C/G,r,s} x[n][p*sh-ph+r][q*sw-pw+s][g*C/G+c] * w[k][c][r][s]
//   backward data    dx[n][h][w][g*C/G+c] = sum over (k of group g, r, s, p, q) with
//                      p*sh-ph+r == h and q*sw-pw+s == w of dy[n][p][q][k] * w[k][c][r][s]
//   backward filter  dw[k][c][r][s] = sum_{n,p,q} dy[n][p][q][k]
//                                       * x[n][p*sh-ph+r][q*sw-pw+s][g*C/G+c]
//                    dbias[k] = sum_{n,p,q} dy[n][p][q][k]
// Taps outside the image read zero. Sums are formed in fp32; bf16 results are rounded to
// nearest even, dw and dbias stay fp32.
// Why not the tensor cores: these are the convolutions the bf16 implicit GEMM does not take.
// A depthwise convolution (C = K = G) is a GEMM of one row per group and only R*S multiply-adds
// per output, bound by reading x and writing y once; a grouped one with few channels per group
// or a channel count that is not a multiple of 8 does not fill the 16-byte vectors the tensor
// cores load. Depthwise 3x3 with stride 1 along the width (mini-Xception's separable
// convolutions) has kernels of its own; every other geometry takes a general direct kernel.
//
// The cuda backend's bf16 precision runs these (cuda/conv_channels_last.cpp). Everything is
// enqueued on `stream` and returns without waiting; results are deterministic (no atomics: the
// filter gradient's partial sums go to `workspace` and are added in a fixed order).
// Host-callable; the kernels are in direct_conv_channels_last.cu.
#pragma once

#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cnnstudio/backend.h"

namespace cnnstudio::kernels {

// y = conv(x, w) + bias (bias may be null). g must satisfy the 2^30-element indexing limit
// (index_limits.h), as every op below.
void directConvForwardChannelsLast(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                                   const float* bias, __nv_bfloat16* y, int multiprocessors,
                                   cudaStream_t stream);

// dx (N, H, W, C) bf16, overwritten.
void directConvBackwardDataChannelsLast(const ConvGeometry& g, const __nv_bfloat16* dy,
                                        const float* w, __nv_bfloat16* dx, int multiprocessors,
                                        cudaStream_t stream);

// dw (K, C/G, R, S) fp32 and, when dbias is not null, dbias (K), both overwritten. workspace:
// device memory of directConvBackwardFilterWorkspaceBytes(g) bytes (it depends on g alone),
// used until the work enqueued on `stream` has run.
std::size_t directConvBackwardFilterWorkspaceBytes(const ConvGeometry& g);
void directConvBackwardFilterChannelsLast(const ConvGeometry& g, const __nv_bfloat16* x,
                                          const __nv_bfloat16* dy, float* dw, float* dbias,
                                          void* workspace, int multiprocessors,
                                          cudaStream_t stream);

// The last step of a filter gradient summed in splits (here and in small_input_conv.cu):
// dw[k * taps + t] = sum over the splits of partials[split][t][k] for t < taps and, when
// rows = taps + 1, dbias[k] = the same sum of row taps; added in split order, so deterministic.
// partials [splits][rows][outChannels] fp32 in device memory.
void finishSplitFilterGradient(const float* partials, int rows, int outChannels, int taps,
                               int splits, float* dw, float* dbias, cudaStream_t stream);

}  // namespace cnnstudio::kernels
