// Activation layout and precision helpers for backends that keep activations bf16 and
// channels-last (Backend::activationFormat): converting tensors between fp32 NCHW and bf16
// NHWC, and the per-channel bias add and bias gradient on channels-last bf16 tensors.
// Everything is enqueued on `stream` and returns without waiting. Host-callable (no device
// code in this header); the kernels are in layout.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace cnnstudio::kernels {

// out[n][c][r] = convert(in[n][r][c]) for n < images, r < rows, c < cols: each image's
// (rows, cols) matrix transposed. NCHW -> NHWC is (rows = C, cols = H*W); NHWC -> NCHW is
// (rows = H*W, cols = C). Enqueued on `stream`. in and out must not overlap. Converting to
// bf16 rounds to nearest even; bf16 to float is exact.
template <typename In, typename Out>
void transposeImages(const In* in, Out* out, int images, int rows, int cols, cudaStream_t stream);

extern template void transposeImages<float, __nv_bfloat16>(const float*, __nv_bfloat16*, int, int,
                                                           int, cudaStream_t);
extern template void transposeImages<__nv_bfloat16, float>(const __nv_bfloat16*, float*, int, int,
                                                           int, cudaStream_t);
extern template void transposeImages<__nv_bfloat16, __nv_bfloat16>(const __nv_bfloat16*,
                                                                   __nv_bfloat16*, int, int, int,
                                                                   cudaStream_t);

// y[p * channels + c] += bias[c] for p < pixels (channels-last bf16 activations; dense outputs
// too). The sum is formed in fp32 and rounded to bf16.
void addChannelBiasChannelsLast(__nv_bfloat16* y, const float* bias, std::int64_t pixels,
                                int channels, cudaStream_t stream);

// sums[c] = sum over p of dy[p * channels + c], accumulated in fp32, deterministic (no float
// atomics: per-block partial sums in `workspace`, then a second kernel adds them in a fixed
// order). workspace: device memory of channelSumsChannelsLastWorkspaceBytes(pixels, channels)
// bytes (0, and workspace may be null, when pixels is 0: the sums are then zeros), used until
// the work enqueued on `stream` has run.
std::size_t channelSumsChannelsLastWorkspaceBytes(std::int64_t pixels, int channels);
void channelSumsChannelsLast(const __nv_bfloat16* dy, float* sums, std::int64_t pixels,
                             int channels, void* workspace, cudaStream_t stream);

}  // namespace cnnstudio::kernels
