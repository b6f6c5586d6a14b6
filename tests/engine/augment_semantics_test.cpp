// What Backend::augmentImages means (backend.h, ImageAugmentation), on every available backend
// at fp32, cpu-ref included: known transforms of known images. The conformance suite then holds
// every backend and precision to cpu-ref on random augmentations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backend_test_support.h"
#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/ops/augment_sampling.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio::test {
namespace {

class AugmentSemantics : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        try {
            backend_ = createBackend(GetParam());
        } catch (const Error& error) {
            GTEST_SKIP() << GetParam() << " cannot be created here: " << error.what();
        }
    }

    // Augments `images` (g's shape) with one augmentation per image and returns the result.
    std::vector<float> augment(const AugmentGeometry& g, const std::vector<float>& images,
                               const std::vector<ImageAugmentation>& augmentations) {
        Tensor tensor = activationsFromHost(*backend_, {g.batch, g.channels, g.height, g.width}, images);
        BackendBuffer<ImageAugmentation> onBackend =
            bufferFromHost(*backend_, std::span<const ImageAugmentation>(augmentations));
        backend_->augmentImages(g, onBackend.data(), tensor.data());
        backend_->synchronize();
        return tensor.toHost();
    }

    std::unique_ptr<Backend> backend_;
};

// Pixel (c, y, x) of image i holds a distinct small integer (exact in every format).
std::vector<float> numberedImages(const AugmentGeometry& g) {
    std::vector<float> images(std::size_t(g.count()));
    for (std::size_t i = 0; i < images.size(); ++i) images[i] = float(i % 251) - 125.0f;
    return images;
}

ImageAugmentation withMatrix(float m0, float m1, float m2, float m3, float m4, float m5) {
    ImageAugmentation a;
    const float matrix[6] = {m0, m1, m2, m3, m4, m5};
    std::copy(matrix, matrix + 6, a.sourceFromOutput);
    return a;
}

std::size_t at(const AugmentGeometry& g, int i, int c, int y, int x) {
    return std::size_t(((std::int64_t(i) * g.channels + c) * g.height + y) * g.width + x);
}

TEST_P(AugmentSemantics, IdentityGivesTheInputBack) {
    const AugmentGeometry g{3, 2, 9, 14};
    const std::vector<float> images = numberedImages(g);
    EXPECT_EQ(augment(g, images, std::vector<ImageAugmentation>(3)), images);
}

TEST_P(AugmentSemantics, FlipMirrorsAndFlipTwiceIsIdentity) {
    const AugmentGeometry g{2, 3, 5, 8};
    const std::vector<float> images = numberedImages(g);
    const std::vector<ImageAugmentation> flip(2, withMatrix(-1, 0, float(g.width - 1), 0, 1, 0));
    const std::vector<float> once = augment(g, images, flip);
    for (int i = 0; i < g.batch; ++i)
        for (int c = 0; c < g.channels; ++c)
            for (int y = 0; y < g.height; ++y)
                for (int x = 0; x < g.width; ++x)
                    ASSERT_EQ(once[at(g, i, c, y, x)], images[at(g, i, c, y, g.width - 1 - x)])
                        << "image " << i << " channel " << c << " at (" << y << ", " << x << ")";
    EXPECT_EQ(augment(g, once, flip), images);
}

TEST_P(AugmentSemantics, QuarterTurnMovesEveryPixelWhereTheMatrixSays) {
    // (sx, sy) = (y, W-1-x): the output's column x is the source's row W-1-x read along y, a
    // quarter turn counter-clockwise on screen.
    const AugmentGeometry g{1, 1, 6, 6};
    const std::vector<float> images = numberedImages(g);
    const std::vector<float> turned =
        augment(g, images, {withMatrix(0, 1, 0, -1, 0, float(g.width - 1))});
    for (int y = 0; y < g.height; ++y)
        for (int x = 0; x < g.width; ++x)
            EXPECT_EQ(turned[at(g, 0, 0, y, x)], images[at(g, 0, 0, g.width - 1 - x, y)])
                << "at (" << y << ", " << x << ")";
    // The output's top-left pixel is the source's bottom-left one.
    EXPECT_EQ(turned[at(g, 0, 0, 0, 0)], images[at(g, 0, 0, 5, 0)]);
}

TEST_P(AugmentSemantics, HalfPixelShiftAveragesNeighboursAndBordersDiffer) {
    const AugmentGeometry g{1, 1, 4, 4};
    const std::vector<float> images = numberedImages(g);
    // sx = x - 0.5: each pixel is the mean of itself and its left neighbour; column 0 reads
    // half of the outside (0 for Constant, the pixel itself for Replicate).
    ImageAugmentation constant = withMatrix(1, 0, -0.5f, 0, 1, 0), replicate = constant;
    replicate.border = AugmentBorder::Replicate;
    const std::vector<float> withZeros = augment(g, images, {constant});
    const std::vector<float> withEdges = augment(g, images, {replicate});
    for (int y = 0; y < g.height; ++y) {
        EXPECT_FLOAT_EQ(withZeros[at(g, 0, 0, y, 0)], 0.5f * images[at(g, 0, 0, y, 0)]);
        EXPECT_FLOAT_EQ(withEdges[at(g, 0, 0, y, 0)], images[at(g, 0, 0, y, 0)]);
        for (int x = 1; x < g.width; ++x) {
            const float mean = 0.5f * (images[at(g, 0, 0, y, x)] + images[at(g, 0, 0, y, x - 1)]);
            EXPECT_FLOAT_EQ(withZeros[at(g, 0, 0, y, x)], mean);
            EXPECT_FLOAT_EQ(withEdges[at(g, 0, 0, y, x)], mean);
        }
    }
}

TEST_P(AugmentSemantics, ErasingCoversExactlyTheStatedRectangle) {
    const AugmentGeometry g{2, 2, 10, 12};
    const std::vector<float> images = numberedImages(g);
    std::vector<ImageAugmentation> augmentations(2);
    augmentations[0].eraseTop = 2, augmentations[0].eraseLeft = 3;
    augmentations[0].eraseHeight = 4, augmentations[0].eraseWidth = 5;
    augmentations[1] = augmentations[0];
    augmentations[1].eraseFill = EraseFill::Noise;
    augmentations[1].noiseSeed = 1234;
    augmentations[1].eraseLeft = 9;  // reaches past the right edge: clipped
    const std::vector<float> erased = augment(g, images, augmentations);
    for (int i = 0; i < g.batch; ++i) {
        const ImageAugmentation& a = augmentations[std::size_t(i)];
        for (int c = 0; c < g.channels; ++c)
            for (int y = 0; y < g.height; ++y)
                for (int x = 0; x < g.width; ++x) {
                    const bool inside = y >= a.eraseTop && y < a.eraseTop + a.eraseHeight &&
                                        x >= a.eraseLeft && x < a.eraseLeft + a.eraseWidth;
                    const float expected =
                        !inside ? images[at(g, i, c, y, x)]
                        : a.eraseFill == EraseFill::Zero
                            ? 0.0f
                            : augmentNoise(a.noiseSeed, std::uint32_t((c * g.height + y) * g.width + x));
                    ASSERT_EQ(erased[at(g, i, c, y, x)], expected)
                        << "image " << i << " channel " << c << " at (" << y << ", " << x << ")";
                }
    }
}

// The erasing noise is the same function on every backend (ops/augment_sampling.h).
TEST(AugmentNoise, HasUnitVarianceAndZeroMean) {
    double sum = 0, squares = 0;
    const int count = 100000;
    for (int pixel = 0; pixel < count; ++pixel) {
        const double value = augmentNoise(77, std::uint32_t(pixel));
        ASSERT_GE(value, -kAugmentNoiseHalfWidth);
        ASSERT_LT(value, kAugmentNoiseHalfWidth);
        sum += value;
        squares += value * value;
    }
    EXPECT_NEAR(sum / count, 0.0, 0.02);
    EXPECT_NEAR(squares / count, 1.0, 0.02);
}

TEST_P(AugmentSemantics, MixupBlendsAndCutmixPastesThePartnerAsItWasBeforeMixing) {
    const AugmentGeometry g{2, 1, 6, 6};
    const std::vector<float> images = numberedImages(g);
    std::vector<ImageAugmentation> augmentations(2);
    augmentations[0].partner = 1;  // mixup with image 1, a quarter of itself
    augmentations[0].mixKeep = 0.25f;
    augmentations[1].partner = 0;  // cutmix: rows 1..2, columns 2..4 from image 0 (un-mixed)
    augmentations[1].pasteTop = 1, augmentations[1].pasteLeft = 2;
    augmentations[1].pasteHeight = 2, augmentations[1].pasteWidth = 3;
    const std::vector<float> mixed = augment(g, images, augmentations);
    for (int y = 0; y < g.height; ++y)
        for (int x = 0; x < g.width; ++x) {
            EXPECT_FLOAT_EQ(mixed[at(g, 0, 0, y, x)],
                            0.25f * images[at(g, 0, 0, y, x)] + 0.75f * images[at(g, 1, 0, y, x)]);
            const bool pasted = y >= 1 && y < 3 && x >= 2 && x < 5;
            EXPECT_EQ(mixed[at(g, 1, 0, y, x)], images[at(g, pasted ? 0 : 1, 0, y, x)]);
        }
}

TEST_P(AugmentSemantics, PartnerOutsideTheBatchIsRefusedOnTheCpuBackends) {
    if (backend_->isDevice()) GTEST_SKIP() << GetParam() << " reads the augmentations on the device only";
    const AugmentGeometry g{2, 1, 3, 3};
    std::vector<ImageAugmentation> augmentations(2);
    augmentations[1].partner = 2;
    try {
        augment(g, numberedImages(g), augmentations);
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("image 1"), std::string::npos) << error.what();
        EXPECT_EQ(error.where(), GetParam() + " augmentImages");
    }
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, AugmentSemantics, ::testing::ValuesIn(availableBackends()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name = info.param;
                             for (char& c : name)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

}  // namespace
}  // namespace cnnstudio::test
