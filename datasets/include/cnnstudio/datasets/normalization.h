// Normalisation to float: (x / 255 - mean[c]) / stddev[c], with per-channel mean and standard
// deviation (of x / 255) measured on the training split.
#pragma once

#include "cnnstudio/datasets/dataset.h"

#include <span>
#include <string>
#include <vector>

namespace cnnstudio::datasets {

struct Normalization {
    std::vector<float> mean, stddev;  // one per channel, in units of x / 255

    // mean 0, stddev 1: plain x / 255.
    static Normalization unit(int channels);
    std::string toString() const;  // "mean 0.5077 stddev 0.2550" (per channel)
};

// Exact per-channel statistics of the split (from pixel histograms). A channel that is
// constant gets stddev 1, so normalising never divides by zero.
Normalization computeNormalization(const Dataset& train);

// uint8 CHW -> normalised float CHW.
void normalizeImage(std::span<const std::uint8_t> image, int channels, const Normalization& norm,
                    std::span<float> out);
// float CHW in [0, 1] -> normalised, in place.
void normalizeImage(std::span<float> image, int channels, const Normalization& norm);

}  // namespace cnnstudio::datasets
