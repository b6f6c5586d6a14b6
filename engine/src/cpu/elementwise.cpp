// Elementwise ops over `count` floats: fill, axpy (y += alpha x), add, multiply, scale.
// Memory-bound loops, vectorised by the compiler and split across threads when large enough
// that the fork costs less than it saves.
#include "cpu/cpu_backend.h"
#include "cpu/geometry_checks.h"

namespace cnnstudio::cpu {

void CpuBackend::fill(float* y, float value, std::size_t count) {
    if (count == 0) return;
    requirePointer(y, "y", "fill");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = value;
}

void CpuBackend::axpy(float alpha, const float* x, float* y, std::size_t count) {
    if (count == 0) return;
    requirePointer(x, "x", "axpy");
    requirePointer(y, "y", "axpy");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void CpuBackend::add(const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    requirePointer(a, "a", "add");
    requirePointer(b, "b", "add");
    requirePointer(y, "y", "add");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void CpuBackend::multiply(const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    requirePointer(a, "a", "multiply");
    requirePointer(b, "b", "multiply");
    requirePointer(y, "y", "multiply");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void CpuBackend::scale(float* y, float alpha, std::size_t count) {
    if (count == 0) return;
    requirePointer(y, "y", "scale");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] *= alpha;
}

}  // namespace cnnstudio::cpu
