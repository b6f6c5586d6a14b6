// fp32 <-> bf16 conversion, elementwise, for the bf16 precisions of the cuda and cudnn backends:
// weights (fp32 masters) staged as bf16, and activations crossing to and from fp32 where the
// layouts coincide (uploads and downloads).
#pragma once

#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace cnnstudio::kernels {

// bf16 activations travel through the Backend interface as float pointers (the interface is
// typed for fp32); these name what they hold.
inline const __nv_bfloat16* asBf16(const float* stored) {
    return reinterpret_cast<const __nv_bfloat16*>(stored);
}
inline __nv_bfloat16* asBf16(float* stored) { return reinterpret_cast<__nv_bfloat16*>(stored); }

// out[i] = bf16(in[i]), rounded to nearest even; enqueued on `stream`.
void narrowToBf16(const float* in, __nv_bfloat16* out, std::size_t count, cudaStream_t stream);

// out[i] = float(in[i]) (exact); enqueued on `stream`.
void widenFromBf16(const __nv_bfloat16* in, float* out, std::size_t count, cudaStream_t stream);

}  // namespace cnnstudio::kernels
