// fp32 <-> bf16 conversion for the cudnn backend's bf16 precision: the Backend interface and the
// master weights stay fp32; convolutions and dense layers convert their inputs to bf16 in scratch
// memory, run on the tensor cores with fp32 accumulation, and convert results back.
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
