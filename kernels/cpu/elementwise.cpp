// Elementwise ops over `count` floats: fill, axpy (y += alpha x), add, multiply, scale.
// Memory-bound loops, vectorised by the compiler and split across threads when large enough
// that the fork costs less than it saves.
#include "cpu/cpu_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu {

void CpuBackend::fill(float* y, float value, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(y, "y", "cpu fill");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = value;
}

void CpuBackend::axpy(float alpha, const float* x, float* y, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(x, "x", "cpu axpy");
    ops::requirePointer(y, "y", "cpu axpy");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void CpuBackend::add(const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(a, "a", "cpu add");
    ops::requirePointer(b, "b", "cpu add");
    ops::requirePointer(y, "y", "cpu add");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void CpuBackend::multiply(const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(a, "a", "cpu multiply");
    ops::requirePointer(b, "b", "cpu multiply");
    ops::requirePointer(y, "y", "cpu multiply");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void CpuBackend::scale(float* y, float alpha, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(y, "y", "cpu scale");
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] *= alpha;
}

}  // namespace cnnstudio::cpu
