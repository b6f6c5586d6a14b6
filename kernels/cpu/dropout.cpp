// Dropout mask over `count` elements: mask[i] = keep ? 1 / (1 - probability) : 0, the keep
// decision from dropoutKeeps(seed, step, i, probability), identical on every backend. The mask
// is an activation: fp32, or bf16 (1 / (1 - probability) rounded to nearest) in bf16
// precision, i indexing the stored (channels-last) order.
#include "cnnstudio/ops/dropout_hash.h"
#include "cpu/activation_storage.h"
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

template <class T>
void dropoutMaskLoop(float probability, std::uint64_t seed, std::uint32_t stepIndex, T* mask,
                     std::int64_t n) {
    // probability 1 keeps nothing, so the scale is never used.
    const T kept = fromFloat<T>(probability < 1.0f ? 1.0f / (1.0f - probability) : 0.0f);
    const T dropped = fromFloat<T>(0.0f);
#pragma omp parallel for schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i)
        mask[i] = dropoutKeeps(seed, stepIndex, std::uint64_t(i), probability) ? kept : dropped;
}

}  // namespace

void CpuBackend::doDropoutMask(float probability, std::uint64_t seed, const StepScalars* step,
                               float* mask, std::size_t count) {
    OmpThreadScope threads(threads_);
    withStorage(storesBf16(), [&]<class T>(T*) {
        dropoutMaskLoop(probability, seed, step->step, stored<T>(mask), std::int64_t(count));
    });
}

}  // namespace cnnstudio::cpu
