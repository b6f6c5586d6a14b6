// Normalisation: statistics against a direct computation, and the conversion itself.
#include "cnnstudio/datasets/normalization.h"

#include "cnnstudio/error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace cnnstudio::datasets {
namespace {

TEST(Normalization, StatisticsMatchADirectComputationPerChannel) {
    const unsigned seed = 51;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    Dataset data{3, 4, 5, {}, {}};
    std::uniform_int_distribution<int> value(0, 255);
    for (int n = 0; n < 20; ++n) {
        std::vector<std::uint8_t> pixels(60);
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < 20; ++i) pixels[std::size_t(c * 20 + i)] = std::uint8_t(value(rng) / (c + 1));
        data.append(pixels, 0);
    }
    const Normalization norm = computeNormalization(data);
    for (int c = 0; c < 3; ++c) {
        double sum = 0, squares = 0;
        for (std::size_t n = 0; n < data.size(); ++n)
            for (int i = 0; i < 20; ++i) {
                const double x = data.image(n)[std::size_t(c * 20 + i)] / 255.0;
                sum += x;
                squares += x * x;
            }
        const double mean = sum / 400, stddev = std::sqrt(squares / 400 - mean * mean);
        EXPECT_NEAR(norm.mean[std::size_t(c)], mean, 1e-6) << "channel " << c;
        EXPECT_NEAR(norm.stddev[std::size_t(c)], stddev, 1e-6) << "channel " << c;
    }
}

TEST(Normalization, ConstantChannelGetsUnitStddev) {
    Dataset data{1, 2, 2, {}, {}};
    data.append(std::vector<std::uint8_t>(4, 51), 0);
    const Normalization norm = computeNormalization(data);
    EXPECT_NEAR(norm.mean[0], 0.2f, 1e-6);
    EXPECT_EQ(norm.stddev[0], 1.0f);
}

TEST(Normalization, Uint8AndFloatPathsGiveTheSameValues) {
    const Normalization norm{{0.5f, 0.25f}, {0.2f, 0.4f}};
    const std::vector<std::uint8_t> image = {0, 255, 51, 102, 204, 7};  // 2 channels x 3 pixels
    std::vector<float> fromBytes(6), fromFloats(6);
    normalizeImage(image, 2, norm, fromBytes);
    for (std::size_t i = 0; i < 6; ++i) fromFloats[i] = image[i] / 255.0f;
    normalizeImage(fromFloats, 2, norm);
    for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(fromBytes[i], fromFloats[i], 1e-5) << i;
    EXPECT_NEAR(fromBytes[0], (0.0f - 0.5f) / 0.2f, 1e-6);
    EXPECT_NEAR(fromBytes[3], (102 / 255.0f - 0.25f) / 0.4f, 1e-6);
}

TEST(Normalization, ChannelMismatchIsAnError) {
    std::vector<float> image(6);
    EXPECT_THROW(normalizeImage(image, 3, Normalization::unit(1)), Error);
    Dataset empty{1, 2, 2, {}, {}};
    EXPECT_THROW(computeNormalization(empty), Error);
}

}  // namespace
}  // namespace cnnstudio::datasets
