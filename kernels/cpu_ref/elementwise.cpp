// Elementwise ops over flat arrays of `count` floats:
//   fill      y = value
//   axpy      y += alpha x
//   add       y = a + b
//   multiply  y = a * b
//   scale     y *= alpha
// Outputs may alias inputs (y == a, say): each element is read before it is written.
#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {

void CpuRefBackend::doFill(float* y, float value, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) y[i] = value;
}

void CpuRefBackend::doAxpy(float alpha, const float* x, float* y, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) y[i] += alpha * x[i];
}

void CpuRefBackend::doAdd(const float* a, const float* b, float* y, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) y[i] = a[i] + b[i];
}

void CpuRefBackend::doMultiply(const float* a, const float* b, float* y, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) y[i] = a[i] * b[i];
}

void CpuRefBackend::doScale(float* y, float alpha, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) y[i] *= alpha;
}

}  // namespace cnnstudio::cpu_ref
