// Training-time augmentation, reproducible: every random choice for a sample comes from one
// seed (augmentationSeed(seed, epoch, sample index)) and every choice for a batch's mixing from
// another (mixingSeed), so the same run sees the same images whatever the thread, rank, backend
// or prefetch order.
//
// Two places do the work:
//   on the host, in the batch loader, before normalisation (images in [0, maxValue]):
//     brightness   add U(-b, b) * maxValue
//     contrast     scale deviations from the image's mean by U(1 - c, 1 + c), then clamp
//   on the device, after the batch is uploaded and normalised (Backend::augmentImages, one
//   kernel per batch on GPU backends, with the per-image ImageAugmentation drawn here):
//     affine       rotate U(-deg, deg) about the centre, zoom U(lo, hi), shift by a whole number
//                  of pixels U{-P..P} (crop=P) plus U(-f, f) of the size (shift=f), mirror
//                  left-right with probability 1/2; bilinear, the border constant 0 (the
//                  training mean after normalisation) or replicated
//     mixing       mixup (blend with another image of the batch, lambda ~ Beta(a, a)) and cutmix
//                  (paste a rectangle of another image, 1 - lambda of the area); with both, each
//                  image picks one with probability 1/2. The loss then trains towards lambda of
//                  the image's label and 1 - lambda of the partner's (Backend LabelMix).
//     erase        with probability p, a rectangle of 2% to 33% of the image, aspect 0.3 to 3.3
//                  (as torchvision's RandomErasing), filled with 0 or unit-variance noise
// No OpenCV anywhere: a headless GPU node augments as well as a desktop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cnnstudio/backend.h"

namespace cnnstudio::datasets {

struct AugmentationConfig {
    int cropPadding = 0;             // "crop=4": shift by -4..4 whole pixels on each axis
    bool horizontalFlip = false;     // "flip"
    float rotationDegrees = 0;       // "rotate=10": angle uniform in [-10, 10] degrees
    float scaleLow = 1, scaleHigh = 1;  // "scale=0.8-1.2": zoom uniform in [0.8, 1.2]
    float shift = 0;                 // "shift=0.1": up to 10% of the width and height
    float eraseProbability = 0;      // "erase=0.25"
    EraseFill eraseFill = EraseFill::Zero;          // "erase-fill=noise"
    AugmentBorder border = AugmentBorder::Constant;  // "border=replicate"
    float mixupAlpha = 0;            // "mixup=0.2": lambda ~ Beta(0.2, 0.2)
    float cutmixAlpha = 0;           // "cutmix=1"
    float brightness = 0;            // "brightness=0.2" (host, before normalisation)
    float contrast = 0;              // "contrast=0.2" (host, before normalisation)

    bool enabled() const;        // anything at all
    bool onHost() const;         // brightness or contrast: the loader's share
    bool onDevice() const;       // affine, erasing or mixing: Backend::augmentImages's share
    bool mixes() const;          // mixup or cutmix: the loss takes mixed labels
    bool operator==(const AugmentationConfig&) const = default;
};

// "none" (or ""), "default" (= crop=4,flip,rotate=10,scale=0.9-1.1), or a comma list of
// crop=P, flip, rotate=DEG, scale=LO-HI (or scale=S for 1-S..1+S), shift=FRACTION, erase=P,
// erase-fill=zero|noise, border=constant|replicate, mixup=ALPHA, cutmix=ALPHA,
// brightness=B, contrast=C. Unknown items or out-of-range values throw cnnstudio::Error naming
// the item.
AugmentationConfig parseAugmentation(std::string_view text);
// The text form, parseable again: "none" or the comma list.
std::string toString(const AugmentationConfig& config);

// The seed of one sample's random choices in one epoch.
std::uint64_t augmentationSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sampleIndex);
// The seed of one batch's mixing choices: a rank's batch is named by its first sample.
std::uint64_t mixingSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t firstSampleIndex);

// The affine part of one image's augmentation, about the image's centre. Output pixel (x, y)
// samples the source where the image, mirrored when `flip`, then rotated by angleDegrees
// (counter-clockwise on screen, as OpenCV's getRotationMatrix2D), zoomed by `zoom` and moved by
// (shiftX, shiftY) pixels (right and down), puts it.
struct AffineDraw {
    float angleDegrees = 0, zoom = 1, shiftX = 0, shiftY = 0;
    bool flip = false;
};
// ImageAugmentation::sourceFromOutput of that transform for a height x width image.
void sourceFromOutput(const AffineDraw& affine, int height, int width, float matrix[6]);

// One sample's device augmentation (no mixing: that is the batch's, mixBatch).
ImageAugmentation imageAugmentation(const AugmentationConfig& config, std::uint64_t sampleSeed,
                                    int height, int width);

// Mixing for one batch: fills each image's partner, mixKeep and paste rectangle in
// `augmentations`, and returns the loss's second labels and label weights (LabelMix).
struct MixedLabels {
    std::vector<std::int32_t> secondLabels;
    std::vector<float> labelWeights;
};
MixedLabels mixBatch(const AugmentationConfig& config, std::uint64_t batchSeed,
                     std::span<const std::int32_t> labels, std::span<ImageAugmentation> augmentations,
                     int height, int width);

// The host share of the augmentation (brightness, contrast) on one CHW image in [0, maxValue].
void adjustImage(std::span<float> image, const AugmentationConfig& config, std::uint64_t sampleSeed,
                 float maxValue = 1.0f);

}  // namespace cnnstudio::datasets
