// Elementwise ops over `count` floats: fill, axpy (y += alpha x), add, multiply, scale.
// Memory-bound loops, vectorised by the compiler and split across threads when large enough
// that the fork costs less than it saves.
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

void CpuBackend::doFill(float* y, float value, std::size_t count) {
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = value;
}

void CpuBackend::doAxpy(float alpha, const float* x, float* y, std::size_t count) {
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void CpuBackend::doAdd(const float* a, const float* b, float* y, std::size_t count) {
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void CpuBackend::doMultiply(const float* a, const float* b, float* y, std::size_t count) {
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void CpuBackend::doScale(float* y, float alpha, std::size_t count) {
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] *= alpha;
}

}  // namespace cnnstudio::cpu
