// Dropout mask over `count` floats: mask[i] = keep ? 1 / (1 - probability) : 0, the keep
// decision from dropoutKeeps(seed, step, i, probability), identical on every backend.
#include "cnnstudio/ops/dropout_hash.h"
#include "cpu/cpu_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu {

void CpuBackend::dropoutMask(float probability, std::uint64_t seed, const StepScalars* step,
                             float* mask, std::size_t count) {
    const char* op = "cpu dropoutMask";
    ops::checkDropoutProbability(probability, op);
    ops::requirePointer(step, "step", op);
    if (count == 0) return;
    ops::requirePointer(mask, "mask", op);
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
