// How kernels read and write activations stored as fp32 or bf16 (Backend::activationFormat):
// every kernel that touches activations is templated on the storage type T (float or
// __nv_bfloat16), loads with toFloat, computes in fp32 registers and stores with
// fromFloat<T>, which rounds to nearest even. Packed<T, N> moves N elements in one access of
// N * sizeof(T) bytes (16 bytes: 4 floats or 8 bf16), as llm.c's Packed128.
#pragma once

#include <cstdint>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace cnnstudio::kernels {

__device__ __forceinline__ float toFloat(float value) { return value; }
__device__ __forceinline__ float toFloat(__nv_bfloat16 value) { return __bfloat162float(value); }

template <class T>
__device__ __forceinline__ T fromFloat(float value);
template <>
__device__ __forceinline__ float fromFloat<float>(float value) {
    return value;
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float value) {
    return __float2bfloat16_rn(value);
}

// The integer type of one access of `Bytes` bytes, so that a pack is loaded and stored with one
// vector instruction (ld.global.v4.b32 for 16 bytes).
template <int Bytes> struct AccessBits;
template <> struct AccessBits<16> { using Type = int4; };
template <> struct AccessBits<8> { using Type = int2; };
template <> struct AccessBits<4> { using Type = int; };
template <> struct AccessBits<2> { using Type = unsigned short; };

// N consecutive elements of type T; load/store need a pointer aligned to N * sizeof(T).
template <class T, int N>
struct alignas(N * sizeof(T)) Packed {
    using Bits = typename AccessBits<int(N * sizeof(T))>::Type;
    T values[N];

    __device__ __forceinline__ static Packed load(const T* address) {
        const Bits bits = *reinterpret_cast<const Bits*>(address);
        Packed packed;
        memcpy(&packed, &bits, sizeof(bits));
        return packed;
    }
    __device__ __forceinline__ void store(T* address) const {
        Bits bits;
        memcpy(&bits, this, sizeof(bits));
        *reinterpret_cast<Bits*>(address) = bits;
    }
    __device__ __forceinline__ float get(int i) const { return toFloat(values[i]); }
    __device__ __forceinline__ void set(int i, float value) { values[i] = fromFloat<T>(value); }
};

// out[j] = source[j], j < N, 16 bytes at a time when N % 4 == 0 (then `source` must be 16-byte
// aligned): a run of weights from shared memory into registers.
template <int N>
__device__ __forceinline__ void loadFloats(const float* source, float (&out)[N]) {
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int j = 0; j < N; j += 4) {
            const float4 four = *reinterpret_cast<const float4*>(source + j);
            out[j] = four.x;
            out[j + 1] = four.y;
            out[j + 2] = four.z;
            out[j + 3] = four.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < N; ++j) out[j] = source[j];
    }
}

// Stores values[0..N) at out rounded to bf16, PerAccess elements an access (`out` aligned to
// 2 * PerAccess bytes).
template <int PerAccess, int N>
__device__ __forceinline__ void storeBf16(const float (&values)[N], __nv_bfloat16* out) {
    static_assert(N % PerAccess == 0, "whole accesses only");
#pragma unroll
    for (int j = 0; j < N; j += PerAccess) {
        Packed<__nv_bfloat16, PerAccess> pack;
#pragma unroll
        for (int e = 0; e < PerAccess; ++e) pack.set(e, values[j + e]);
        pack.store(out + j);
    }
}

// Elements of T in one 16-byte access.
template <class T>
constexpr int kPerAccess16 = int(16 / sizeof(T));

inline bool isAligned(const void* pointer, std::size_t bytes) {
    return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

}  // namespace cnnstudio::kernels
