// Elementwise ops over flat arrays of `count` floats:
//   fill      y = value
//   axpy      y += alpha x
//   add       y = a + b
//   multiply  y = a * b
//   scale     y *= alpha
// Outputs may alias inputs (y == a, say): each element is read before it is written.
#include "cpu_ref/cpu_ref_ops.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu_ref {

void fill(float* y, float value, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(y, "y", "cpu-ref fill");
    for (std::size_t i = 0; i < count; ++i) y[i] = value;
}

void axpy(float alpha, const float* x, float* y, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(x, "x", "cpu-ref axpy");
    ops::requirePointer(y, "y", "cpu-ref axpy");
    for (std::size_t i = 0; i < count; ++i) y[i] += alpha * x[i];
}

void add(const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(a, "a", "cpu-ref add");
    ops::requirePointer(b, "b", "cpu-ref add");
    ops::requirePointer(y, "y", "cpu-ref add");
    for (std::size_t i = 0; i < count; ++i) y[i] = a[i] + b[i];
}

void multiply(const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(a, "a", "cpu-ref multiply");
    ops::requirePointer(b, "b", "cpu-ref multiply");
    ops::requirePointer(y, "y", "cpu-ref multiply");
    for (std::size_t i = 0; i < count; ++i) y[i] = a[i] * b[i];
}

void scale(float* y, float alpha, std::size_t count) {
    if (count == 0) return;
    ops::requirePointer(y, "y", "cpu-ref scale");
    for (std::size_t i = 0; i < count; ++i) y[i] *= alpha;
}

}  // namespace cnnstudio::cpu_ref
