// fp32 <-> bf16 conversion, elementwise, for the cudnn backend's bf16 precision: weights (fp32
// masters) staged as bf16 for dense layers and the fused inference bias, and activations crossing
// to and from fp32 where the layouts coincide (uploads and downloads).
#pragma once

#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace cnnstudio::kernels {

// out[i] = bf16(in[i]), rounded to nearest even; enqueued on `stream`.
void narrowToBf16(const float* in, __nv_bfloat16* out, std::size_t count, cudaStream_t stream);

// out[i] = float(in[i]) (exact); enqueued on `stream`.
void widenFromBf16(const __nv_bfloat16* in, float* out, std::size_t count, cudaStream_t stream);

}  // namespace cnnstudio::kernels
