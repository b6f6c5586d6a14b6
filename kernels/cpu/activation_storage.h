// How the cpu backend's own loops read and write activations (Backend::activationFormat): fp32
// NCHW in fp32 precision, bf16 channels-last (N, H, W, C) in bf16 precision. Loops that touch
// activations are templated on the storage type T (float or Bf16), load with toFloat, compute
// in fp32 and store with fromFloat<T>, which rounds to nearest even as oneDNN's reorders do
// (a NaN stays a quiet NaN), so our loops and oneDNN's primitives store the same bits.
#pragma once

#include <bit>
#include <cstdint>

// For loops that run only in bf16 precision, which the backend allows only on CPUs with
// AVX512-BF16 or AMX (cpuPrecisionUnavailableReason), so always with AVX-512: compiled for it
// (OpenMP's outlined regions inherit the target), they take 16 fp32 lanes where the baseline
// x86-64 build takes 4. Helpers they call are inlined into them.
#define CNNSTUDIO_BF16_LOOP [[gnu::target("avx512f,avx512bw,avx512vl,avx512dq,fma")]]

namespace cnnstudio::cpu {

// One bf16 value: the upper 16 bits of an fp32.
struct Bf16 {
    std::uint16_t bits;
};

inline float toFloat(float value) { return value; }
inline float toFloat(Bf16 value) { return std::bit_cast<float>(std::uint32_t(value.bits) << 16); }

template <class T>
T fromFloat(float value);
template <>
inline float fromFloat<float>(float value) {
    return value;
}
template <>
inline Bf16 fromFloat<Bf16>(float value) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
    const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    return {std::uint16_t(nan ? (bits >> 16) | 0x40u : rounded)};
}

// Calls body(tag) with a null pointer of the storage type: float, or Bf16 when bf16 is set.
// Ops written once as templates pick their instance with it.
template <class Body>
decltype(auto) withStorage(bool bf16, Body&& body) {
    if (bf16) return body(static_cast<Bf16*>(nullptr));
    return body(static_cast<float*>(nullptr));
}

template <class T>
T* stored(float* pointer) {
    return reinterpret_cast<T*>(pointer);
}
template <class T>
const T* stored(const float* pointer) {
    return reinterpret_cast<const T*>(pointer);
}

}  // namespace cnnstudio::cpu
