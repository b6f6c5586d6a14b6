// The one random generator of libcnndatasets: SplitMix64, chosen because its output is
// fixed by its definition (unlike std::uniform_int_distribution, whose algorithm differs
// between standard libraries), so a seed gives the same shuffles and augmentations everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace cnnstudio::datasets {

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, bound) without modulo bias (rejection on the top of the range).
    std::uint64_t below(std::uint64_t bound) {
        const std::uint64_t limit = ~0ull - (~0ull % bound);
        std::uint64_t value;
        do value = next(); while (value >= limit);
        return value % bound;
    }
    // Uniform in [0, 1) with 24 bits, exactly representable as float.
    float unit() { return float(next() >> 40) * (1.0f / 16777216.0f); }
    // Uniform in [-1, 1).
    float symmetric() { return 2.0f * unit() - 1.0f; }

private:
    std::uint64_t state_;
};

// Folds several values into one seed, so (seed, epoch, index) pick independent streams.
inline std::uint64_t mixSeed(std::uint64_t a, std::uint64_t b, std::uint64_t c = 0) {
    SplitMix64 mixer(a ^ 0x6A09E667F3BCC909ull);
    std::uint64_t h = mixer.next() ^ b;
    h = SplitMix64(h).next() ^ c;
    return SplitMix64(h).next();
}

// Fisher-Yates permutation of 0..count-1 driven by SplitMix64(seed).
inline std::vector<std::size_t> seededPermutation(std::size_t count, std::uint64_t seed) {
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), std::size_t{0});
    SplitMix64 rng(seed);
    for (std::size_t i = count; i > 1; --i) {
        std::size_t j = std::size_t(rng.below(i));
        std::swap(order[i - 1], order[j]);
    }
    return order;
}

}  // namespace cnnstudio::datasets
