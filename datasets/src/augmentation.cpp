// Augmentation: the config's text form, the per-sample and per-batch draws that become the
// device op's ImageAugmentation array, and the host's photometric share (brightness, contrast).
#include "cnnstudio/datasets/augmentation.h"

#include "cnnstudio/error.h"
#include "random.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace cnnstudio::datasets {

namespace {

constexpr const char* kAugmentationHint =
    "write none, default, or a comma list such as crop=4,flip,rotate=10,scale=0.9-1.1,shift=0.1,"
    "erase=0.25,erase-fill=noise,border=replicate,mixup=0.2,cutmix=1,brightness=0.2,contrast=0.2";

// torchvision's RandomErasing defaults: the share of the area and the aspect ratio.
constexpr double kEraseAreaLow = 0.02, kEraseAreaHigh = 0.33;
constexpr double kEraseAspectLow = 0.3, kEraseAspectHigh = 3.3;

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return text;
}

[[noreturn]] void failItem(std::string_view item, const std::string& what) {
    throw Error(what, "augmentation item '" + std::string(item) + "'", kAugmentationHint);
}

double parseNumber(std::string_view item, std::string_view value, double low, double high) {
    double number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || error != std::errc() || end != value.data() + value.size())
        failItem(item, std::string(value).insert(0, 1, '\'') + "' is not a number");
    if (!(number >= low && number <= high))
        failItem(item, std::string(value) + " is outside " + std::to_string(low) + ".." + std::to_string(high));
    return number;
}

// "0.8-1.2" (a range of zooms) or "0.1" (the older form: 0.9-1.1).
void parseScale(std::string_view item, std::string_view value, AugmentationConfig& config) {
    const std::size_t dash = value.find('-');
    if (dash == std::string_view::npos) {
        const double spread = parseNumber(item, value, 0, 0.9);
        config.scaleLow = float(1 - spread);
        config.scaleHigh = float(1 + spread);
        return;
    }
    config.scaleLow = float(parseNumber(item, trimmed(value.substr(0, dash)), 0.1, 10));
    config.scaleHigh = float(parseNumber(item, trimmed(value.substr(dash + 1)), 0.1, 10));
    if (config.scaleLow > config.scaleHigh) failItem(item, "the lower zoom is above the upper one");
}

std::string formatNumber(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// Gamma(shape, 1) by Marsaglia and Tsang, with our own generator so that a seed gives the same
// value with every standard library. Shape < 1 boosts Gamma(shape + 1) by U^(1/shape).
double gammaSample(SplitMix64& rng, double shape) {
    if (shape < 1) {
        const double boost = std::pow(1.0 - rng.unit(), 1.0 / shape);  // U in (0, 1]
        return gammaSample(rng, shape + 1) * boost;
    }
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9 * d);
    for (;;) {
        // A standard normal by Box-Muller.
        const double u1 = 1.0 - rng.unit(), u2 = rng.unit();
        const double normal = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
        const double v = std::pow(1 + c * normal, 3);
        if (v <= 0) continue;
        const double u = 1.0 - rng.unit();
        if (std::log(u) < 0.5 * normal * normal + d - d * v + d * std::log(v)) return d * v;
    }
}

// Beta(alpha, alpha), the mixing weight of mixup and cutmix.
double betaSample(SplitMix64& rng, double alpha) {
    const double x = gammaSample(rng, alpha), y = gammaSample(rng, alpha);
    return x + y > 0 ? x / (x + y) : 0.5;
}

}  // namespace

bool AugmentationConfig::enabled() const { return onHost() || onDevice(); }

bool AugmentationConfig::onHost() const { return brightness > 0 || contrast > 0; }

bool AugmentationConfig::onDevice() const {
    return cropPadding > 0 || horizontalFlip || rotationDegrees > 0 || scaleLow != 1 || scaleHigh != 1 ||
           shift > 0 || eraseProbability > 0 || mixes();
}

bool AugmentationConfig::mixes() const { return mixupAlpha > 0 || cutmixAlpha > 0; }

AugmentationConfig parseAugmentation(std::string_view text) {
    text = trimmed(text);
    AugmentationConfig config;
    if (text.empty() || text == "none") return config;
    if (text == "default") return parseAugmentation("crop=4,flip,rotate=10,scale=0.9-1.1");
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view item = trimmed(text.substr(start, comma - start));
        start = comma + 1;
        const std::size_t equals = item.find('=');
        const std::string_view name = trimmed(item.substr(0, equals));
        const std::string_view value = equals == std::string_view::npos ? std::string_view{} : trimmed(item.substr(equals + 1));
        if (name == "flip" && equals == std::string_view::npos) config.horizontalFlip = true;
        else if (name == "crop") {
            const double pixels = parseNumber(item, value, 0, 64);
            if (pixels != std::floor(pixels)) failItem(item, "crop padding must be a whole number of pixels");
            config.cropPadding = int(pixels);
        }
        else if (name == "rotate") config.rotationDegrees = float(parseNumber(item, value, 0, 180));
        else if (name == "scale") parseScale(item, value, config);
        else if (name == "shift") config.shift = float(parseNumber(item, value, 0, 0.5));
        else if (name == "erase") config.eraseProbability = float(parseNumber(item, value, 0, 1));
        else if (name == "erase-fill" && (value == "zero" || value == "noise"))
            config.eraseFill = value == "noise" ? EraseFill::Noise : EraseFill::Zero;
        else if (name == "border" && (value == "constant" || value == "replicate"))
            config.border = value == "replicate" ? AugmentBorder::Replicate : AugmentBorder::Constant;
        else if (name == "mixup") config.mixupAlpha = float(parseNumber(item, value, 0, 10));
        else if (name == "cutmix") config.cutmixAlpha = float(parseNumber(item, value, 0, 10));
        else if (name == "brightness") config.brightness = float(parseNumber(item, value, 0, 1));
        else if (name == "contrast") config.contrast = float(parseNumber(item, value, 0, 1));
        else
            throw Error("unknown augmentation '" + std::string(item) + "'",
                        "augmentation '" + std::string(text) + "'", kAugmentationHint);
    }
    return config;
}

std::string toString(const AugmentationConfig& config) {
    std::string text;
    auto add = [&](const std::string& item) { text += (text.empty() ? "" : ",") + item; };
    if (config.cropPadding > 0) add("crop=" + std::to_string(config.cropPadding));
    if (config.horizontalFlip) add("flip");
    if (config.rotationDegrees > 0) add("rotate=" + formatNumber(config.rotationDegrees));
    if (config.scaleLow != 1 || config.scaleHigh != 1)
        add("scale=" + formatNumber(config.scaleLow) + "-" + formatNumber(config.scaleHigh));
    if (config.shift > 0) add("shift=" + formatNumber(config.shift));
    if (config.eraseProbability > 0) {
        add("erase=" + formatNumber(config.eraseProbability));
        if (config.eraseFill == EraseFill::Noise) add("erase-fill=noise");
    }
    if (config.border == AugmentBorder::Replicate) add("border=replicate");
    if (config.mixupAlpha > 0) add("mixup=" + formatNumber(config.mixupAlpha));
    if (config.cutmixAlpha > 0) add("cutmix=" + formatNumber(config.cutmixAlpha));
    if (config.brightness > 0) add("brightness=" + formatNumber(config.brightness));
    if (config.contrast > 0) add("contrast=" + formatNumber(config.contrast));
    return text.empty() ? "none" : text;
}

std::uint64_t augmentationSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sampleIndex) {
    return mixSeed(seed ^ 0xA0761D6478BD642Full, epoch, sampleIndex);
}

std::uint64_t mixingSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t firstSampleIndex) {
    return mixSeed(seed ^ 0xE7037ED1A0B428DBull, epoch, firstSampleIndex);
}

void sourceFromOutput(const AffineDraw& affine, int height, int width, float matrix[6]) {
    // Inverse of: mirror (x -> W-1-x), then about the centre c rotate by +angle and zoom, then
    // shift by t. For output p: u = mirror(p) - c - t; source = c + R(-angle) u / zoom, with
    // R(-a) = [cos -sin; sin cos] in image coordinates (y down), as getRotationMatrix2D inverts.
    const double radians = double(affine.angleDegrees) * std::numbers::pi / 180.0;
    const double cosine = std::cos(radians) / affine.zoom, sine = std::sin(radians) / affine.zoom;
    const double cx = 0.5 * (width - 1), cy = 0.5 * (height - 1);
    const double mirror = affine.flip ? -1.0 : 1.0;            // d mirror(x) / dx
    const double ux0 = (affine.flip ? width - 1 : 0) - cx - affine.shiftX;  // u_x at x = 0
    const double uy0 = -cy - affine.shiftY;                                  // u_y at y = 0
    matrix[0] = float(cosine * mirror);
    matrix[1] = float(-sine);
    matrix[2] = float(cx + cosine * ux0 - sine * uy0);
    matrix[3] = float(sine * mirror);
    matrix[4] = float(cosine);
    matrix[5] = float(cy + sine * ux0 + cosine * uy0);
}

ImageAugmentation imageAugmentation(const AugmentationConfig& config, std::uint64_t sampleSeed,
                                    int height, int width) {
    SplitMix64 rng(sampleSeed);
    // Always draw every value, in this order, so each choice is independent of the config.
    const float angle = rng.symmetric(), zoom = rng.unit();
    const std::uint64_t cropY = rng.next(), cropX = rng.next(), flip = rng.next();
    const float shiftY = rng.symmetric(), shiftX = rng.symmetric();
    const float erase = rng.unit(), eraseArea = rng.unit(), eraseAspect = rng.unit();
    const float eraseTop = rng.unit(), eraseLeft = rng.unit();
    const std::uint64_t noiseSeed = rng.next();

    const std::uint64_t cropChoices = std::uint64_t(2 * config.cropPadding + 1);
    AffineDraw affine;
    affine.angleDegrees = angle * config.rotationDegrees;
    affine.zoom = config.scaleLow + zoom * (config.scaleHigh - config.scaleLow);
    affine.shiftY = float(std::int64_t(cropY % cropChoices) - config.cropPadding) + shiftY * config.shift * float(height);
    affine.shiftX = float(std::int64_t(cropX % cropChoices) - config.cropPadding) + shiftX * config.shift * float(width);
    affine.flip = config.horizontalFlip && (flip >> 63) != 0;

    ImageAugmentation result;
    sourceFromOutput(affine, height, width, result.sourceFromOutput);
    result.border = config.border;
    result.eraseFill = config.eraseFill;
    result.noiseSeed = std::uint32_t(noiseSeed);
    if (erase < config.eraseProbability) {
        const double area = (kEraseAreaLow + eraseArea * (kEraseAreaHigh - kEraseAreaLow)) * height * width;
        const double aspect = std::exp(std::log(kEraseAspectLow) +
                                       eraseAspect * (std::log(kEraseAspectHigh) - std::log(kEraseAspectLow)));
        const int eraseHeight = std::clamp(int(std::lround(std::sqrt(area * aspect))), 1, height);
        const int eraseWidth = std::clamp(int(std::lround(std::sqrt(area / aspect))), 1, width);
        result.eraseHeight = eraseHeight;
        result.eraseWidth = eraseWidth;
        result.eraseTop = std::min(int(eraseTop * float(height - eraseHeight + 1)), height - eraseHeight);
        result.eraseLeft = std::min(int(eraseLeft * float(width - eraseWidth + 1)), width - eraseWidth);
    }
    return result;
}

MixedLabels mixBatch(const AugmentationConfig& config, std::uint64_t batchSeed,
                     std::span<const std::int32_t> labels, std::span<ImageAugmentation> augmentations,
                     int height, int width) {
    if (labels.size() != augmentations.size())
        throw Error(std::to_string(labels.size()) + " labels for " + std::to_string(augmentations.size()) +
                        " augmentations", "mixBatch");
    MixedLabels mixed;
    mixed.secondLabels.assign(labels.begin(), labels.end());
    mixed.labelWeights.assign(labels.size(), 1.0f);
    if (!config.mixes()) return mixed;
    const std::vector<std::size_t> partners = seededPermutation(labels.size(), batchSeed);
    SplitMix64 rng(mixSeed(batchSeed, 1));
    for (std::size_t i = 0; i < labels.size(); ++i) {
        const bool useCutmix = config.mixupAlpha <= 0 || (config.cutmixAlpha > 0 && (rng.next() >> 63) != 0);
        const double lambda = betaSample(rng, useCutmix ? config.cutmixAlpha : config.mixupAlpha);
        const double centreY = rng.unit() * height, centreX = rng.unit() * width;
        ImageAugmentation& a = augmentations[i];
        a.partner = std::int32_t(partners[i]);
        mixed.secondLabels[i] = labels[partners[i]];
        if (!useCutmix) {
            a.mixKeep = float(lambda);
            mixed.labelWeights[i] = a.mixKeep;
            continue;
        }
        // A box of 1 - lambda of the area around a uniform centre, clipped; lambda then
        // becomes the share of the image left outside the clipped box (as in CutMix).
        const double side = std::sqrt(1.0 - lambda);
        const int boxHeight = int(std::lround(side * height)), boxWidth = int(std::lround(side * width));
        const int top = std::clamp(int(std::lround(centreY - 0.5 * boxHeight)), 0, height);
        const int bottom = std::clamp(int(std::lround(centreY + 0.5 * boxHeight)), 0, height);
        const int left = std::clamp(int(std::lround(centreX - 0.5 * boxWidth)), 0, width);
        const int right = std::clamp(int(std::lround(centreX + 0.5 * boxWidth)), 0, width);
        a.mixKeep = 1.0f;
        a.pasteTop = top;
        a.pasteLeft = left;
        a.pasteHeight = bottom - top;
        a.pasteWidth = right - left;
        mixed.labelWeights[i] = float(1.0 - double(a.pasteHeight) * a.pasteWidth / (double(height) * width));
    }
    return mixed;
}

void adjustImage(std::span<float> image, const AugmentationConfig& config, std::uint64_t sampleSeed,
                 float maxValue) {
    if (!config.onHost() || image.empty()) return;
    // Its own stream of the sample's seed, so the device draws do not move when these are on.
    SplitMix64 rng(mixSeed(sampleSeed, 2));
    const float shift = rng.symmetric() * config.brightness;
    const float factor = 1.0f + rng.symmetric() * config.contrast;
    double sum = 0;
    for (float value : image) sum += double(value);
    const float mean = float(sum / double(image.size()));
    const float offset = mean + shift * maxValue - factor * mean;  // x' = (x - mean) * factor + mean + shift
    for (float& value : image) value = std::clamp(value * factor + offset, 0.0f, maxValue);
}

}  // namespace cnnstudio::datasets
