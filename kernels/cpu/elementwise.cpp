// Elementwise ops over `count` elements:
//   fill      y = value          fp32 buffers (parameters, gradients, state)
//   axpy      y = alpha x + y    activations: fp32, or bf16 in bf16 precision
//   add       y = a + b          activations
//   multiply  y = a * b          activations
//   scale     y = alpha y        fp32 buffers
// bf16 operands are widened to fp32, combined, and the result rounded to bf16 (nearest even).
// Memory-bound loops, vectorised by the compiler and split across threads when large enough
// that the fork costs less than it saves.
#include "cpu/activation_storage.h"
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

template <class T>
void axpyLoop(float alpha, const T* x, T* y, std::int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = fromFloat<T>(toFloat(y[i]) + alpha * toFloat(x[i]));
}

template <class T>
void addLoop(const T* a, const T* b, T* y, std::int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = fromFloat<T>(toFloat(a[i]) + toFloat(b[i]));
}

template <class T>
void multiplyLoop(const T* a, const T* b, T* y, std::int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = fromFloat<T>(toFloat(a[i]) * toFloat(b[i]));
}

}  // namespace

void CpuBackend::doFill(float* y, float value, std::size_t count) {
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] = value;
}

void CpuBackend::doAxpy(float alpha, const float* x, float* y, std::size_t count) {
    OmpThreadScope threads(threads_);
    withStorage(storesBf16(), [&]<class T>(T*) {
        axpyLoop(alpha, stored<T>(x), stored<T>(y), std::int64_t(count));
    });
}

void CpuBackend::doAdd(const float* a, const float* b, float* y, std::size_t count) {
    OmpThreadScope threads(threads_);
    withStorage(storesBf16(), [&]<class T>(T*) {
        addLoop(stored<T>(a), stored<T>(b), stored<T>(y), std::int64_t(count));
    });
}

void CpuBackend::doMultiply(const float* a, const float* b, float* y, std::size_t count) {
    OmpThreadScope threads(threads_);
    withStorage(storesBf16(), [&]<class T>(T*) {
        multiplyLoop(stored<T>(a), stored<T>(b), stored<T>(y), std::int64_t(count));
    });
}

void CpuBackend::doScale(float* y, float alpha, std::size_t count) {
    OmpThreadScope threads(threads_);
    const std::int64_t n = std::int64_t(count);
#pragma omp parallel for simd schedule(static) if (n >= parallelThreshold)
    for (std::int64_t i = 0; i < n; ++i) y[i] *= alpha;
}

}  // namespace cnnstudio::cpu
