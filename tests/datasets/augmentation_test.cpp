// Augmentation: the config's text form, the per-sample draws and the sampling matrices they
// become, the batch's mixing, and the host's photometric share. What the device then does with
// the matrices is tested on every backend in tests/engine (augment_semantics_test.cpp and the
// conformance suite).
#include "cnnstudio/datasets/augmentation.h"

#include "cnnstudio/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

namespace cnnstudio::datasets {
namespace {

std::vector<float> matrixOf(const AffineDraw& affine, int height, int width) {
    std::vector<float> matrix(6);
    sourceFromOutput(affine, height, width, matrix.data());
    return matrix;
}

void expectMatrixNear(const std::vector<float>& matrix, const std::vector<float>& expected) {
    for (std::size_t k = 0; k < 6; ++k) EXPECT_NEAR(matrix[k], expected[k], 1e-5) << "entry " << k;
}

TEST(AugmentationConfig, ParsesTheFullListAndPrintsItBack) {
    const AugmentationConfig config = parseAugmentation(
        "crop=4,flip,rotate=10,scale=0.8-1.2,shift=0.1,erase=0.25,erase-fill=noise,border=replicate,"
        "mixup=0.2,cutmix=1,brightness=0.2,contrast=0.3");
    EXPECT_EQ(config.cropPadding, 4);
    EXPECT_TRUE(config.horizontalFlip);
    EXPECT_FLOAT_EQ(config.rotationDegrees, 10);
    EXPECT_FLOAT_EQ(config.scaleLow, 0.8f);
    EXPECT_FLOAT_EQ(config.scaleHigh, 1.2f);
    EXPECT_FLOAT_EQ(config.shift, 0.1f);
    EXPECT_FLOAT_EQ(config.eraseProbability, 0.25f);
    EXPECT_EQ(config.eraseFill, EraseFill::Noise);
    EXPECT_EQ(config.border, AugmentBorder::Replicate);
    EXPECT_FLOAT_EQ(config.mixupAlpha, 0.2f);
    EXPECT_FLOAT_EQ(config.cutmixAlpha, 1.0f);
    EXPECT_FLOAT_EQ(config.brightness, 0.2f);
    EXPECT_FLOAT_EQ(config.contrast, 0.3f);
    EXPECT_TRUE(config.onHost());
    EXPECT_TRUE(config.onDevice());
    EXPECT_TRUE(config.mixes());
    EXPECT_EQ(toString(config),
              "crop=4,flip,rotate=10,scale=0.8-1.2,shift=0.1,erase=0.25,erase-fill=noise,border=replicate,"
              "mixup=0.2,cutmix=1,brightness=0.2,contrast=0.3");
    EXPECT_EQ(parseAugmentation(toString(config)), config);
}

TEST(AugmentationConfig, NoneDefaultAndTheOlderScaleForm) {
    EXPECT_FALSE(parseAugmentation("none").enabled());
    EXPECT_FALSE(parseAugmentation("").enabled());
    EXPECT_EQ(toString(parseAugmentation("none")), "none");
    EXPECT_EQ(toString(parseAugmentation("default")), "crop=4,flip,rotate=10,scale=0.9-1.1");
    // Runs written before the range form said scale=S: a zoom in 1-S..1+S.
    EXPECT_EQ(parseAugmentation("scale=0.1"), parseAugmentation("scale=0.9-1.1"));
    const AugmentationConfig flipAndCrop = parseAugmentation(" flip , crop=2 ");
    EXPECT_TRUE(flipAndCrop.horizontalFlip);
    EXPECT_EQ(flipAndCrop.cropPadding, 2);
    EXPECT_TRUE(flipAndCrop.onDevice());
    EXPECT_FALSE(flipAndCrop.onHost());
    EXPECT_FALSE(flipAndCrop.mixes());
    EXPECT_FALSE(parseAugmentation("brightness=0.1").onDevice());
}

TEST(AugmentationConfig, BadItemsNameThemselves) {
    for (const char* text : {"crop=x", "crop=2.5", "crop=-1", "rotate=400", "mirror", "scale=", "flip,",
                             "brightness=2", "scale=1.2-0.8", "scale=0-1", "shift=0.9", "erase=1.5",
                             "erase-fill=blue", "border=wrap", "mixup=-1", "cutmix=x"}) {
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

TEST(AugmentationMatrix, NoTransformIsTheExactIdentity) {
    EXPECT_EQ(matrixOf({}, 48, 48), (std::vector<float>{1, 0, 0, 0, 1, 0}));
    EXPECT_EQ(matrixOf({}, 7, 12), (std::vector<float>{1, 0, 0, 0, 1, 0}));
}

TEST(AugmentationMatrix, FlipReadsTheMirroredColumnExactly) {
    AffineDraw flip;
    flip.flip = true;
    EXPECT_EQ(matrixOf(flip, 5, 8), (std::vector<float>{-1, 0, 7, 0, 1, 0}));
}

TEST(AugmentationMatrix, QuarterTurnIsCounterClockwiseOnScreen) {
    // Output (x, y) reads source (W-1-y, x): the output's top-left pixel is the source's
    // top-right one, as OpenCV's getRotationMatrix2D with +90 degrees.
    AffineDraw turn;
    turn.angleDegrees = 90;
    expectMatrixNear(matrixOf(turn, 6, 6), {0, -1, 5, 1, 0, 0});
}

TEST(AugmentationMatrix, ZoomKeepsTheCentreAndShiftMovesRightAndDown) {
    AffineDraw zoom;
    zoom.zoom = 2;
    // Centre (3.5, 2.5) of an 8 x 6 image stays; (x, y) reads (3.5 + (x - 3.5) / 2, ...).
    expectMatrixNear(matrixOf(zoom, 6, 8), {0.5f, 0, 1.75f, 0, 0.5f, 1.25f});
    AffineDraw shift;
    shift.shiftX = 3;
    shift.shiftY = -2;
    expectMatrixNear(matrixOf(shift, 6, 8), {1, 0, -3, 0, 1, 2});
}

TEST(AugmentationDraws, CropIsAWholePixelShiftWithinThePadding) {
    const AugmentationConfig config = parseAugmentation("crop=3");
    std::set<float> shifts;
    for (std::uint64_t i = 0; i < 500; ++i) {
        const ImageAugmentation a = imageAugmentation(config, augmentationSeed(1, 0, i), 48, 48);
        EXPECT_EQ(a.sourceFromOutput[0], 1.0f);
        EXPECT_EQ(a.sourceFromOutput[4], 1.0f);
        for (float offset : {a.sourceFromOutput[2], a.sourceFromOutput[5]}) {
            ASSERT_EQ(offset, std::round(offset));
            ASSERT_LE(std::abs(offset), 3.0f);
            shifts.insert(offset);
        }
        EXPECT_EQ(a.eraseHeight, 0);
        EXPECT_EQ(a.partner, -1);
    }
    EXPECT_EQ(shifts.size(), 7u);  // -3..3, every one drawn
}

TEST(AugmentationDraws, SameSeedSameDrawsAndOneItemDoesNotMoveTheOthers) {
    const std::uint64_t seed = augmentationSeed(3, 1, 9);
    const AugmentationConfig crop = parseAugmentation("crop=4");
    const AugmentationConfig more = parseAugmentation("crop=4,flip,erase=0.5,brightness=0.1");
    const ImageAugmentation a = imageAugmentation(crop, seed, 32, 32), b = imageAugmentation(crop, seed, 32, 32);
    EXPECT_TRUE(std::equal(a.sourceFromOutput, a.sourceFromOutput + 6, b.sourceFromOutput));
    // Adding flip mirrors (or not) but keeps the same shift.
    const ImageAugmentation c = imageAugmentation(more, seed, 32, 32);
    EXPECT_EQ(std::abs(c.sourceFromOutput[0]), 1.0f);
    EXPECT_EQ(c.sourceFromOutput[5], a.sourceFromOutput[5]);
    EXPECT_NE(augmentationSeed(1, 0, 5), augmentationSeed(1, 1, 5));
    EXPECT_NE(augmentationSeed(1, 0, 5), augmentationSeed(1, 0, 6));
    EXPECT_NE(mixingSeed(1, 0, 5), augmentationSeed(1, 0, 5));
}

TEST(AugmentationDraws, DrawsStayInTheirRanges) {
    const AugmentationConfig config = parseAugmentation("flip,rotate=10,scale=0.8-1.2,erase=0.3");
    int flips = 0, erased = 0;
    const int samples = 3000, side = 40;
    for (std::uint64_t i = 0; i < std::uint64_t(samples); ++i) {
        const ImageAugmentation a = imageAugmentation(config, augmentationSeed(0, 0, i), side, side);
        const float* m = a.sourceFromOutput;
        // |det| = 1 / zoom^2 and the angle from the matrix.
        const double determinant = double(m[0]) * m[4] - double(m[1]) * m[3];
        const double zoom = 1.0 / std::sqrt(std::abs(determinant));
        ASSERT_GE(zoom, 0.8 - 1e-4);
        ASSERT_LE(zoom, 1.2 + 1e-4);
        const double angle = std::atan2(double(m[3]) * (determinant < 0 ? -1 : 1), m[4]) * 180.0 / 3.141592653589793;
        ASSERT_LE(std::abs(angle), 10.0 + 1e-3);
        flips += determinant < 0;
        if (a.eraseHeight > 0) {
            ++erased;
            ASSERT_GE(a.eraseTop, 0);
            ASSERT_GE(a.eraseLeft, 0);
            ASSERT_LE(a.eraseTop + a.eraseHeight, side);
            ASSERT_LE(a.eraseLeft + a.eraseWidth, side);
            const double area = double(a.eraseHeight) * a.eraseWidth / (side * side);
            ASSERT_GT(area, 0.0);
            ASSERT_LT(area, 0.45);  // 2%..33% before rounding and clipping
        }
    }
    EXPECT_NEAR(flips, samples / 2, 150);
    EXPECT_NEAR(erased, samples * 0.3, 120);
}

TEST(AugmentationMixing, NoMixingLeavesPlainLabels) {
    std::vector<ImageAugmentation> augmentations(4);
    const std::vector<std::int32_t> labels{0, 1, 2, 3};
    const MixedLabels mixed = mixBatch(parseAugmentation("flip"), 5, labels, augmentations, 8, 8);
    EXPECT_EQ(mixed.secondLabels, labels);
    EXPECT_EQ(mixed.labelWeights, std::vector<float>(4, 1.0f));
    for (const ImageAugmentation& a : augmentations) EXPECT_EQ(a.partner, -1);
}

TEST(AugmentationMixing, MixupWeightsAreTheBlendAndPartnersArePermuted) {
    const int batch = 64;
    std::vector<ImageAugmentation> augmentations(batch);
    std::vector<std::int32_t> labels(batch);
    for (int i = 0; i < batch; ++i) labels[std::size_t(i)] = i % 7;
    const MixedLabels mixed = mixBatch(parseAugmentation("mixup=1"), 99, labels, augmentations, 48, 48);
    std::set<int> partners;
    double sum = 0;
    for (int i = 0; i < batch; ++i) {
        const ImageAugmentation& a = augmentations[std::size_t(i)];
        partners.insert(a.partner);
        EXPECT_EQ(mixed.secondLabels[std::size_t(i)], labels[std::size_t(a.partner)]);
        EXPECT_EQ(mixed.labelWeights[std::size_t(i)], a.mixKeep);
        EXPECT_GE(a.mixKeep, 0.0f);
        EXPECT_LE(a.mixKeep, 1.0f);
        EXPECT_EQ(a.pasteHeight * a.pasteWidth, 0);
        sum += a.mixKeep;
    }
    EXPECT_EQ(partners.size(), std::size_t(batch));  // a permutation of the batch
    EXPECT_NEAR(sum / batch, 0.5, 0.12);             // Beta(1, 1) is uniform
}

TEST(AugmentationMixing, CutmixWeightIsTheShareOfTheImageLeftOutsideTheBox) {
    const int batch = 200, height = 48, width = 40;
    std::vector<ImageAugmentation> augmentations(batch);
    const std::vector<std::int32_t> labels(batch, 3);
    const MixedLabels mixed = mixBatch(parseAugmentation("cutmix=1"), 7, labels, augmentations, height, width);
    int boxes = 0;
    for (int i = 0; i < batch; ++i) {
        const ImageAugmentation& a = augmentations[std::size_t(i)];
        EXPECT_EQ(a.mixKeep, 1.0f);
        EXPECT_GE(a.pasteTop, 0);
        EXPECT_GE(a.pasteLeft, 0);
        EXPECT_LE(a.pasteTop + a.pasteHeight, height);
        EXPECT_LE(a.pasteLeft + a.pasteWidth, width);
        EXPECT_FLOAT_EQ(mixed.labelWeights[std::size_t(i)],
                        float(1.0 - double(a.pasteHeight) * a.pasteWidth / (height * width)));
        boxes += a.pasteHeight * a.pasteWidth > 0;
    }
    EXPECT_GT(boxes, batch / 2);
}

TEST(AugmentationMixing, BothKindsTogetherPickOnePerImageAndTheSameSeedRepeats) {
    const int batch = 100;
    std::vector<ImageAugmentation> first(batch), second(batch);
    const std::vector<std::int32_t> labels(batch, 1);
    const AugmentationConfig config = parseAugmentation("mixup=0.4,cutmix=1");
    const MixedLabels a = mixBatch(config, 11, labels, first, 32, 32);
    const MixedLabels b = mixBatch(config, 11, labels, second, 32, 32);
    EXPECT_EQ(a.labelWeights, b.labelWeights);
    int cutmixed = 0;
    for (const ImageAugmentation& image : first) cutmixed += image.mixKeep == 1.0f;
    EXPECT_GT(cutmixed, 25);
    EXPECT_LT(cutmixed, 75);
}

TEST(AugmentationMixing, LabelCountMismatchIsAnError) {
    std::vector<ImageAugmentation> augmentations(3);
    const std::vector<std::int32_t> labels{0, 1};
    EXPECT_THROW(mixBatch(parseAugmentation("mixup=1"), 1, labels, augmentations, 8, 8), Error);
}

TEST(AugmentationHost, BrightnessAndContrastAreSeededAndStayInRange) {
    std::mt19937 rng(45);
    std::vector<float> original(3 * 16 * 16);
    for (float& value : original) value = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
    const AugmentationConfig config = parseAugmentation("brightness=0.3,contrast=0.3");
    std::vector<float> a = original, b = original, c = original;
    adjustImage(a, config, augmentationSeed(7, 2, 100));
    adjustImage(b, config, augmentationSeed(7, 2, 100));
    adjustImage(c, config, augmentationSeed(7, 2, 101));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(a, original);
    for (float value : a) {
        EXPECT_GE(value, 0.0f);
        EXPECT_LE(value, 1.0f);
    }
    std::vector<float> untouched = original;
    adjustImage(untouched, parseAugmentation("flip,rotate=10"), 1);
    EXPECT_EQ(untouched, original);
}

}  // namespace
}  // namespace cnnstudio::datasets
