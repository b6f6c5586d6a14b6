// The dropout keep decision, shared by every backend so that masks agree bit for bit.
// Counter-based (a SplitMix64 finaliser over seed, step and index): no RNG state to carry,
// and each element is independent, so GPU threads compute it in any order.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CNNSTUDIO_HOST_DEVICE __host__ __device__
#else
#define CNNSTUDIO_HOST_DEVICE
#endif

namespace cnnstudio {

CNNSTUDIO_HOST_DEVICE inline std::uint64_t mixBits(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// True when element `index` survives dropout with drop probability `probability`.
CNNSTUDIO_HOST_DEVICE inline bool dropoutKeeps(std::uint64_t seed, std::uint32_t step,
                                               std::uint64_t index, float probability) {
    std::uint64_t bits = mixBits(seed ^ mixBits((std::uint64_t(step) << 40) ^ index));
    float uniform = float(bits >> 40) * (1.0f / 16777216.0f);  // 24 bits -> [0, 1)
    return uniform >= probability;
}

}  // namespace cnnstudio
