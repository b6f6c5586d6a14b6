// Dropout mask over `count` elements: mask[i] = keep ? 1 / (1 - p) : 0 with
// keep = dropoutKeeps(seed, step->step, i, p) (ops/dropout_hash.h), bit-identical to every
// other backend. The mask is an activation: fp32, or bf16 (1 / (1 - p) rounded to nearest)
// when Backend::activationFormat says so. The step number is read on the device, so a captured
// step draws a fresh mask at each replay.
#include <string>

#include "cnnstudio/ops/dropout_hash.h"
#include "cuda/activation_storage.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

template <class T>
__global__ void dropoutMaskKernel(float probability, std::uint64_t seed,
                                  const StepScalars* __restrict__ step, T* __restrict__ mask,
                                  std::size_t count) {
    const std::uint32_t stepNumber = step->step;
    // p = 1 drops everything; the kept value is then never used.
    const T kept = fromFloat<T>(probability < 1.0f ? 1.0f / (1.0f - probability) : 0.0f);
    const T dropped = fromFloat<T>(0.0f);
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        mask[i] = dropoutKeeps(seed, stepNumber, i, probability) ? kept : dropped;
}

}  // namespace

void CudaBackend::doDropoutMask(float probability, std::uint64_t seed, const StepScalars* step,
                                float* mask, std::size_t count) {
    activateDevice();
    const unsigned blocks = gridStrideBlocks(count, 256, deviceProperties().multiProcessorCount);
    if (activationFormat().bf16)
        launchKernel("dropout mask", dropoutMaskKernel<__nv_bfloat16>, blocks, 256, stream(),
                     probability, seed, step, reinterpret_cast<__nv_bfloat16*>(mask), count);
    else
        launchKernel("dropout mask", dropoutMaskKernel<float>, blocks, 256, stream(), probability,
                     seed, step, mask, count);
}

}  // namespace cnnstudio::kernels
