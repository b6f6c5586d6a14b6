// Dropout mask over `count` floats: mask[i] = keep ? 1 / (1 - probability) : 0, where keep is
// dropoutKeeps(seed, step->step, i, probability) (ops/dropout_hash.h). The scale is computed in
// float exactly as written, so every backend produces the same bits.
#include "cnnstudio/ops/dropout_hash.h"
#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {

void CpuRefBackend::doDropoutMask(float probability, std::uint64_t seed, const StepScalars* step,
                                  float* mask, std::size_t count) {
    // probability == 1 keeps nothing, so the infinite scale is never written.
    const float keptScale = 1.0f / (1.0f - probability);
    for (std::size_t i = 0; i < count; ++i)
        mask[i] = dropoutKeeps(seed, step->step, i, probability) ? keptScale : 0.0f;
}

}  // namespace cnnstudio::cpu_ref
