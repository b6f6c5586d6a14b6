// Training-time augmentation, per sample, reproducible: every random choice for a sample
// comes from one seed (augmentationSeed(seed, epoch, sample index)), so the same run sees the
// same images whatever the thread, rank or prefetch order.
//
// Images are channels x height x width planes, uint8 or float with values in [0, maxValue]
// (the batch pipeline augments floats in [0, 1], before normalisation). Applied in this order:
//   rotate / scale   cv::warpAffine about the centre, bilinear, zero outside
//   crop             pad by P zero pixels per side, cut back to H x W at a random offset
//   flip             mirror left-right with probability 1/2
//   brightness       add U(-b, b) * maxValue
//   contrast         scale deviations from the image's mean by U(1 - c, 1 + c)
// then clamp to [0, maxValue].
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace cnnstudio::datasets {

struct AugmentationConfig {
    int cropPadding = 0;          // "crop=4"
    bool horizontalFlip = false;  // "flip"
    float rotationDegrees = 0;    // "rotate=10": angle uniform in [-10, 10] degrees
    float scale = 0;              // "scale=0.1": zoom uniform in [0.9, 1.1]
    float brightness = 0;         // "brightness=0.2"
    float contrast = 0;           // "contrast=0.2"

    bool enabled() const;
    bool operator==(const AugmentationConfig&) const = default;
};

// "none" (or ""), "default" (= crop=4,flip,rotate=10,scale=0.1), or a comma list of the
// items above, e.g. "crop=4,flip,rotate=10,scale=0.1,brightness=0.2,contrast=0.2".
// Unknown items or out-of-range values throw cnnstudio::Error naming the item.
AugmentationConfig parseAugmentation(std::string_view text);
// The text form, parseable again: "none" or the comma list.
std::string toString(const AugmentationConfig& config);

// The seed of one sample's random choices in one epoch.
std::uint64_t augmentationSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sampleIndex);

// The random choices for one sample (all drawn, in a fixed order, whatever is enabled, so
// switching one augmentation on does not change the others' choices).
struct AugmentationDraw {
    float angleDegrees = 0, zoom = 1;
    int cropOffsetY = 0, cropOffsetX = 0;  // 0..2P: where the H x W window sits in the padded image
    bool flip = false;
    float brightnessShift = 0, contrastFactor = 1;  // shift as a fraction of maxValue
};
AugmentationDraw drawAugmentation(const AugmentationConfig& config, std::uint64_t sampleSeed);

// Applies config to one image with the draws of sampleSeed.
void augmentImage(std::span<float> image, int channels, int height, int width,
                  const AugmentationConfig& config, std::uint64_t sampleSeed, float maxValue = 1.0f);
void augmentImage(std::span<std::uint8_t> image, int channels, int height, int width,
                  const AugmentationConfig& config, std::uint64_t sampleSeed);

// The building blocks, each on a whole CHW image in place.
void flipHorizontal(std::span<float> image, int channels, int height, int width);
void flipHorizontal(std::span<std::uint8_t> image, int channels, int height, int width);
// Pad by `padding` zeros per side, cut back at (offsetY, offsetX) in 0..2*padding.
void padAndCrop(std::span<float> image, int channels, int height, int width, int padding,
                int offsetY, int offsetX);
void padAndCrop(std::span<std::uint8_t> image, int channels, int height, int width, int padding,
                int offsetY, int offsetX);

}  // namespace cnnstudio::datasets
