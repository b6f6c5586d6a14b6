// Convolutions on bf16 channels-last activations as implicit GEMMs on the bf16 tensor cores
// (mma.sync m16n8k16, fp32 accumulation), from the fp32 master weights:
//   x (N, H, W, C) bf16, w (K, C, R, S) fp32, bias (K) fp32, y (N, P, Q, K) bf16, groups 1
//   forward          y[n][p][q][k] = bias[k] + sum_{r,s,c} x[n][p*sh-ph+r][q*sw-pw+s][c] * w[k][c][r][s]
//   backward data    dx[n][h][w][c] = sum over p*sh-ph+r = h, q*sw-pw+s = w of dy[n][p][q][k] * w[k][c][r][s]
//   backward filter  dw[k][c][r][s] = sum_{n,p,q} dy[n][p][q][k] * x[n][p*sh-ph+r][q*sw-pw+s][c]
//                    dbias[k] = sum_{n,p,q} dy[n][p][q][k]
// The weights are rounded to bf16 (and reordered) into the workspace on every call; products
// are exact in fp32 and summed in fp32; y and dx are rounded to bf16 once, dw and dbias stay
// fp32. Everything is enqueued on `stream` and returns without waiting; results are
// deterministic (no atomics; split sums are added in a fixed order). Host-callable; the
// kernels are in tensor_core_conv.cu, the GEMM core in gemm_bf16.cuh.
#pragma once

#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cnnstudio/backend.h"

namespace cnnstudio::kernels {

enum class ConvPass { Forward, BackwardData, BackwardFilter };

// Whether these kernels take the geometry in that pass: groups == 1; C % 8 == 0 (forward),
// K % 8 == 0 (backward data; any C), both (backward filter); image sizes, kernel sizes and
// padding at most 8192.
bool tensorCoreConvSupports(const ConvGeometry& g, ConvPass pass);

// Bytes of device scratch the pass needs (staged bf16 weights, split-K partials, channel-sum
// scratch), for the same `multiprocessors` as the call. The calls below take g satisfying
// tensorCoreConvSupports and the 2^30-element indexing limit (index_limits.h), pointers from
// cudaMalloc, and a workspace of at least this size used until the enqueued work has run.
std::size_t tensorCoreConvWorkspaceBytes(const ConvGeometry& g, ConvPass pass, int multiprocessors);

// y = conv(x, w) + bias (bias may be null).
void tensorCoreConvForward(const ConvGeometry& g, const __nv_bfloat16* x, const float* w,
                           const float* bias, __nv_bfloat16* y, void* workspace,
                           int multiprocessors, cudaStream_t stream);

// dx = the gradient of the forward line with respect to x (overwritten).
void tensorCoreConvBackwardData(const ConvGeometry& g, const __nv_bfloat16* dy, const float* w,
                                __nv_bfloat16* dx, void* workspace, int multiprocessors,
                                cudaStream_t stream);

// dw (K, C, R, S) fp32 and, when dbias is not null, dbias (K) fp32, both overwritten.
void tensorCoreConvBackwardFilter(const ConvGeometry& g, const __nv_bfloat16* x,
                                  const __nv_bfloat16* dy, float* dw, float* dbias,
                                  void* workspace, int multiprocessors, cudaStream_t stream);

}  // namespace cnnstudio::kernels
