// Augmentation: the config's text form, determinism per sample seed, and the image operations.
#include "cnnstudio/datasets/augmentation.h"

#include "cnnstudio/error.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace cnnstudio::datasets {
namespace {

std::vector<float> randomImage(unsigned seed, std::size_t count) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(0.0f, 1.0f);
    std::vector<float> image(count);
    for (float& v : image) v = value(rng);
    return image;
}

TEST(AugmentationConfig, ParsesTheFullListAndPrintsItBack) {
    const AugmentationConfig config = parseAugmentation("crop=4,flip,rotate=10,scale=0.1,brightness=0.2,contrast=0.2");
    EXPECT_EQ(config.cropPadding, 4);
    EXPECT_TRUE(config.horizontalFlip);
    EXPECT_FLOAT_EQ(config.rotationDegrees, 10);
    EXPECT_FLOAT_EQ(config.scale, 0.1f);
    EXPECT_FLOAT_EQ(config.brightness, 0.2f);
    EXPECT_FLOAT_EQ(config.contrast, 0.2f);
    EXPECT_EQ(toString(config), "crop=4,flip,rotate=10,scale=0.1,brightness=0.2,contrast=0.2");
    EXPECT_EQ(parseAugmentation(toString(config)), config);
}

TEST(AugmentationConfig, NoneAndDefault) {
    EXPECT_FALSE(parseAugmentation("none").enabled());
    EXPECT_FALSE(parseAugmentation("").enabled());
    EXPECT_EQ(toString(parseAugmentation("none")), "none");
    EXPECT_EQ(toString(parseAugmentation("default")), "crop=4,flip,rotate=10,scale=0.1");
    EXPECT_EQ(parseAugmentation(" flip , crop=2 "), (AugmentationConfig{2, true, 0, 0, 0, 0}));
}

TEST(AugmentationConfig, BadItemsNameThemselves) {
    for (const char* text : {"crop=x", "crop=2.5", "crop=-1", "rotate=400", "mirror", "scale=", "flip,", "brightness=2"}) {
        SCOPED_TRACE(text);
        try {
            parseAugmentation(text);
            ADD_FAILURE() << "no error";
        } catch (const Error& error) {
            EXPECT_FALSE(error.hint().empty());
            EXPECT_NE(std::string(error.what()).find("augmentation"), std::string::npos) << error.what();
        }
    }
}

TEST(Augmentation, FlipTwiceIsIdentity) {
    const unsigned seed = 41;
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::vector<float> original = randomImage(seed, 3 * 5 * 7);
    std::vector<float> image = original;
    flipHorizontal(image, 3, 5, 7);
    EXPECT_NE(image, original);
    EXPECT_EQ(image[0], original[6]);  // first pixel of row 0 is the old last
    flipHorizontal(image, 3, 5, 7);
    EXPECT_EQ(image, original);
}

TEST(Augmentation, CropAtTheCentreIsIdentityAndOffCentreShiftsInZeros) {
    const std::vector<float> original = randomImage(42, 2 * 6 * 6);
    std::vector<float> image = original;
    padAndCrop(image, 2, 6, 6, 3, 3, 3);
    EXPECT_EQ(image, original);
    padAndCrop(image, 2, 6, 6, 3, 1, 5);  // content moves down 2, left 2
    ASSERT_EQ(image.size(), original.size());  // the shape is kept
    for (int c = 0; c < 2; ++c)
        for (int y = 0; y < 6; ++y)
            for (int x = 0; x < 6; ++x) {
                const int sy = y - 2, sx = x + 2;
                const float expected = sy >= 0 && sx < 6 ? original[std::size_t((c * 6 + sy) * 6 + sx)] : 0.0f;
                EXPECT_EQ(image[std::size_t((c * 6 + y) * 6 + x)], expected) << c << "," << y << "," << x;
            }
    EXPECT_THROW(padAndCrop(image, 2, 6, 6, 3, 7, 0), Error);
}

TEST(Augmentation, SameSeedSameImageDifferentSeedDifferentImage) {
    const AugmentationConfig config = parseAugmentation("crop=4,flip,rotate=10,scale=0.1,brightness=0.2,contrast=0.2");
    const std::vector<float> original = randomImage(43, 3 * 16 * 16);
    std::vector<float> a = original, b = original, c = original;
    augmentImage(a, 3, 16, 16, config, augmentationSeed(7, 2, 100));
    augmentImage(b, 3, 16, 16, config, augmentationSeed(7, 2, 100));
    augmentImage(c, 3, 16, 16, config, augmentationSeed(7, 2, 101));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(a, original);
    for (float v : a) {
        EXPECT_GE(v, 0.0f);
        EXPECT_LE(v, 1.0f);
    }
}

TEST(Augmentation, SeedsDifferAcrossEpochsAndSamples) {
    EXPECT_NE(augmentationSeed(1, 0, 5), augmentationSeed(1, 1, 5));
    EXPECT_NE(augmentationSeed(1, 0, 5), augmentationSeed(1, 0, 6));
    EXPECT_NE(augmentationSeed(1, 0, 5), augmentationSeed(2, 0, 5));
}

TEST(Augmentation, DrawsOfOneItemDoNotDependOnTheOthers) {
    const std::uint64_t seed = augmentationSeed(3, 1, 9);
    const AugmentationDraw cropOnly = drawAugmentation(parseAugmentation("crop=4"), seed);
    const AugmentationDraw everything = drawAugmentation(parseAugmentation("crop=4,flip,rotate=5,brightness=0.1"), seed);
    EXPECT_EQ(cropOnly.cropOffsetY, everything.cropOffsetY);
    EXPECT_EQ(cropOnly.cropOffsetX, everything.cropOffsetX);
    EXPECT_FALSE(cropOnly.flip);
    EXPECT_EQ(cropOnly.angleDegrees, 0.0f);
}

TEST(Augmentation, DrawsStayInTheirRanges) {
    const AugmentationConfig config = parseAugmentation("crop=2,flip,rotate=10,scale=0.1,brightness=0.2,contrast=0.3");
    int flips = 0;
    for (std::uint64_t i = 0; i < 2000; ++i) {
        const AugmentationDraw draw = drawAugmentation(config, augmentationSeed(0, 0, i));
        ASSERT_GE(draw.cropOffsetY, 0);
        ASSERT_LE(draw.cropOffsetY, 4);
        ASSERT_LE(std::abs(draw.angleDegrees), 10.0f);
        ASSERT_LE(std::abs(draw.zoom - 1.0f), 0.1f);
        ASSERT_LE(std::abs(draw.brightnessShift), 0.2f);
        ASSERT_LE(std::abs(draw.contrastFactor - 1.0f), 0.3f);
        flips += draw.flip;
    }
    EXPECT_NEAR(flips, 1000, 120);  // about half
}

TEST(Augmentation, Uint8AndFloatAgreeForGeometricOps) {
    // Flip and crop move pixels without arithmetic, so both pixel types give the same result.
    const AugmentationConfig config = parseAugmentation("crop=3,flip");
    std::mt19937 rng(44);
    std::vector<std::uint8_t> bytes(1 * 9 * 9);
    for (auto& b : bytes) b = std::uint8_t(rng() & 0xFF);
    std::vector<float> floats(bytes.begin(), bytes.end());
    for (std::uint64_t sample = 0; sample < 20; ++sample) {
        std::vector<std::uint8_t> b = bytes;
        std::vector<float> f = floats;
        augmentImage(b, 1, 9, 9, config, sample);
        augmentImage(f, 1, 9, 9, config, sample, 255.0f);
        EXPECT_EQ(std::vector<float>(b.begin(), b.end()), f) << "sample seed " << sample;
    }
}

TEST(Augmentation, RotationWithoutAngleOrZoomLeavesTheImage) {
    const std::vector<float> original = randomImage(45, 1 * 8 * 8);
    std::vector<float> image = original;
    augmentImage(image, 1, 8, 8, AugmentationConfig{}, 123);
    EXPECT_EQ(image, original);
}

TEST(Augmentation, WrongSpanSizeIsAnError) {
    std::vector<float> image(10);
    EXPECT_THROW(flipHorizontal(image, 1, 3, 3), Error);
}

}  // namespace
}  // namespace cnnstudio::datasets
