// Dropout mask over `count` floats: mask[i] = keep ? 1 / (1 - probability) : 0, the keep
// decision from dropoutKeeps(seed, step, i, probability), identical on every backend.
#include "cnnstudio/ops/dropout_hash.h"
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

void CpuBackend::doDropoutMask(float probability, std::uint64_t seed, const StepScalars* step,
                               float* mask, std::size_t count) {
    // probability 1 keeps nothing, so the scale is never used.
    const float keptScale = probability < 1.0f ? 1.0f / (1.0f - probability) : 0.0f;
    const std::uint32_t stepIndex = step->step;
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i)
        mask[i] = dropoutKeeps(seed, stepIndex, std::uint64_t(i), probability) ? keptScale : 0.0f;
}

}  // namespace cnnstudio::cpu
