// Normalisation: statistics from per-channel histograms (exact, one pass over the bytes), and
// uint8 -> float through a 256-entry table per channel.
#include "cnnstudio/datasets/normalization.h"

#include "cnnstudio/error.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace cnnstudio::datasets {

namespace {
void checkChannels(const Normalization& norm, int channels) {
    if (channels < 1 || norm.mean.size() != std::size_t(channels) || norm.stddev.size() != std::size_t(channels))
        throw Error("normalisation has " + std::to_string(norm.mean.size()) + " channels, images have " +
                        std::to_string(channels),
                    "normalisation", "compute it on the training split of the same data set");
}
}  // namespace

Normalization Normalization::unit(int channels) {
    return {std::vector<float>(std::size_t(channels), 0.0f), std::vector<float>(std::size_t(channels), 1.0f)};
}

std::string Normalization::toString() const {
    std::string text = "mean";
    char number[32];
    for (float m : mean) {
        std::snprintf(number, sizeof number, " %.4f", double(m));
        text += number;
    }
    text += " stddev";
    for (float s : stddev) {
        std::snprintf(number, sizeof number, " %.4f", double(s));
        text += number;
    }
    return text;
}

Normalization computeNormalization(const Dataset& train) {
    if (train.empty() || train.channels < 1)
        throw Error("cannot compute normalisation of an empty split", "normalisation",
                    "load a data set with training samples");
    const std::size_t planeSize = std::size_t(train.height) * train.width;
    std::vector<std::array<std::uint64_t, 256>> histograms(std::size_t(train.channels));
    for (auto& histogram : histograms) histogram.fill(0);
    for (std::size_t sample = 0; sample < train.size(); ++sample) {
        const std::uint8_t* image = train.images.data() + sample * train.sampleBytes();
        for (int c = 0; c < train.channels; ++c) {
            auto& histogram = histograms[std::size_t(c)];
            const std::uint8_t* plane = image + std::size_t(c) * planeSize;
            for (std::size_t i = 0; i < planeSize; ++i) ++histogram[plane[i]];
        }
    }
    Normalization norm;
    const double count = double(train.size()) * double(planeSize);
    for (const auto& histogram : histograms) {
        double sum = 0, sumSquares = 0;
        for (int v = 0; v < 256; ++v) {
            const double x = v / 255.0;
            sum += x * double(histogram[std::size_t(v)]);
            sumSquares += x * x * double(histogram[std::size_t(v)]);
        }
        const double mean = sum / count;
        const double variance = std::max(0.0, sumSquares / count - mean * mean);
        const double stddev = std::sqrt(variance);
        norm.mean.push_back(float(mean));
        norm.stddev.push_back(stddev > 1e-6 ? float(stddev) : 1.0f);
    }
    return norm;
}

void normalizeImage(std::span<const std::uint8_t> image, int channels, const Normalization& norm,
                    std::span<float> out) {
    checkChannels(norm, channels);
    if (out.size() != image.size() || image.size() % std::size_t(channels) != 0)
        throw Error("image of " + std::to_string(image.size()) + " bytes into " + std::to_string(out.size()) +
                        " floats",
                    "normalisation");
    const std::size_t planeSize = image.size() / std::size_t(channels);
    for (int c = 0; c < channels; ++c) {
        std::array<float, 256> table;
        for (int v = 0; v < 256; ++v)
            table[std::size_t(v)] = (float(v) / 255.0f - norm.mean[std::size_t(c)]) / norm.stddev[std::size_t(c)];
        const std::uint8_t* plane = image.data() + std::size_t(c) * planeSize;
        float* target = out.data() + std::size_t(c) * planeSize;
        for (std::size_t i = 0; i < planeSize; ++i) target[i] = table[plane[i]];
    }
}

void normalizeImage(std::span<float> image, int channels, const Normalization& norm) {
    checkChannels(norm, channels);
    const std::size_t planeSize = image.size() / std::size_t(channels);
    for (int c = 0; c < channels; ++c) {
        const float mean = norm.mean[std::size_t(c)], inverse = 1.0f / norm.stddev[std::size_t(c)];
        float* plane = image.data() + std::size_t(c) * planeSize;
        for (std::size_t i = 0; i < planeSize; ++i) plane[i] = (plane[i] - mean) * inverse;
    }
}

}  // namespace cnnstudio::datasets
