// Host-side bf16 values for the tests of kernels that store activations as bf16: rounding as the
// kernels round (to nearest even) and vectors of bf16 made from floats.
#pragma once

#include <vector>

#include <cuda_bf16.h>

namespace cnnstudio::test {

inline float roundToBf16(float value) { return __bfloat162float(__float2bfloat16(value)); }

inline std::vector<__nv_bfloat16> toBf16(const std::vector<float>& values) {
    std::vector<__nv_bfloat16> result;
    result.reserve(values.size());
    for (float value : values) result.push_back(__float2bfloat16(value));
    return result;
}

}  // namespace cnnstudio::test
