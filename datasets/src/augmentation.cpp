// Augmentation: the config's text form, the per-sample draws, and the image operations,
// written once as templates over the pixel type (uint8 or float in [0, maxValue]).
#include "cnnstudio/datasets/augmentation.h"

#include "cnnstudio/error.h"
#include "random.h"

#ifdef CNNSTUDIO_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

namespace cnnstudio::datasets {

namespace {

constexpr const char* kAugmentationHint =
    "write none, default, or a comma list such as crop=4,flip,rotate=10,scale=0.1,brightness=0.2,contrast=0.2";

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return text;
}

double parseNumber(std::string_view item, std::string_view value, double low, double high) {
    double number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || error != std::errc() || end != value.data() + value.size())
        throw Error("'" + std::string(value) + "' is not a number", "augmentation item '" + std::string(item) + "'",
                    kAugmentationHint);
    if (!(number >= low && number <= high))
        throw Error(std::string(value) + " is outside " + std::to_string(low) + ".." + std::to_string(high),
                    "augmentation item '" + std::string(item) + "'", kAugmentationHint);
    return number;
}

std::string formatNumber(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// Scratch for one plane, one per thread (worker threads augment concurrently).
template <typename T>
std::vector<T>& planeScratch(std::size_t count) {
    thread_local std::vector<T> scratch;
    if (scratch.size() < count) scratch.resize(count);
    return scratch;
}

template <typename T>
void flipPlanes(T* image, int channels, int height, int width) {
    for (int row = 0; row < channels * height; ++row) std::reverse(image + std::size_t(row) * width, image + std::size_t(row + 1) * width);
}

template <typename T>
void padAndCropPlanes(T* image, int channels, int height, int width, int padding, int offsetY, int offsetX) {
    const int shiftY = offsetY - padding, shiftX = offsetX - padding;  // out(y, x) = in(y + shiftY, x + shiftX)
    if (shiftY == 0 && shiftX == 0) return;
    const std::size_t planeSize = std::size_t(height) * width;
    std::vector<T>& source = planeScratch<T>(planeSize);
    for (int c = 0; c < channels; ++c) {
        T* plane = image + std::size_t(c) * planeSize;
        std::copy(plane, plane + planeSize, source.begin());
        std::fill(plane, plane + planeSize, T(0));
        const int firstX = std::max(0, -shiftX), lastX = std::min(width, width - shiftX);  // [first, last)
        if (firstX >= lastX) continue;
        for (int y = std::max(0, -shiftY); y < std::min(height, height - shiftY); ++y)
            std::copy(source.begin() + std::ptrdiff_t((y + shiftY) * width + firstX + shiftX),
                      source.begin() + std::ptrdiff_t((y + shiftY) * width + lastX + shiftX),
                      plane + std::size_t(y) * width + firstX);
    }
}

#ifdef CNNSTUDIO_HAVE_OPENCV
constexpr bool geometricWarpsAvailable = true;
#else
constexpr bool geometricWarpsAvailable = false;
#endif

template <typename T>
void warpPlanes(T* image, int channels, int height, int width, float angleDegrees, float zoom) {
#ifdef CNNSTUDIO_HAVE_OPENCV
    constexpr int type = std::is_same_v<T, float> ? CV_32FC1 : CV_8UC1;
    const cv::Mat transform = cv::getRotationMatrix2D(
        cv::Point2f(0.5f * float(width - 1), 0.5f * float(height - 1)), angleDegrees, zoom);
    const std::size_t planeSize = std::size_t(height) * width;
    std::vector<T>& scratch = planeScratch<T>(planeSize);
    cv::Mat warped(height, width, type, scratch.data());
    for (int c = 0; c < channels; ++c) {
        cv::Mat plane(height, width, type, image + std::size_t(c) * planeSize);
        cv::warpAffine(plane, warped, transform, plane.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                       cv::Scalar(0));
        warped.copyTo(plane);
    }
#else
    // parseAugmentation refuses rotate and scale in a build without OpenCV.
    throw Error("rotate and scale augmentation need OpenCV, which this build lacks");
#endif
}

template <typename T>
void adjustBrightnessContrast(T* image, std::size_t count, float shift, float factor, float maxValue) {
    double sum = 0;
    for (std::size_t i = 0; i < count; ++i) sum += double(image[i]);
    const float mean = count ? float(sum / double(count)) : 0.0f;
    const float offset = mean + shift * maxValue - factor * mean;  // x' = (x - mean) * factor + mean + shift
    for (std::size_t i = 0; i < count; ++i) {
        const float value = std::clamp(float(image[i]) * factor + offset, 0.0f, maxValue);
        if constexpr (std::is_same_v<T, float>) image[i] = value;
        else image[i] = T(std::lround(value));
    }
}

template <typename T>
void augmentPlanes(T* image, int channels, int height, int width, const AugmentationConfig& config,
                   std::uint64_t sampleSeed, float maxValue) {
    if (!config.enabled()) return;
    const AugmentationDraw draw = drawAugmentation(config, sampleSeed);
    if (draw.angleDegrees != 0.0f || draw.zoom != 1.0f)
        warpPlanes(image, channels, height, width, draw.angleDegrees, draw.zoom);
    if (config.cropPadding > 0)
        padAndCropPlanes(image, channels, height, width, config.cropPadding, draw.cropOffsetY, draw.cropOffsetX);
    if (draw.flip) flipPlanes(image, channels, height, width);
    if (draw.brightnessShift != 0.0f || draw.contrastFactor != 1.0f)
        adjustBrightnessContrast(image, std::size_t(channels) * height * width, draw.brightnessShift,
                                 draw.contrastFactor, maxValue);
}

void checkCropWindow(int padding, int offsetY, int offsetX) {
    if (padding < 0 || offsetY < 0 || offsetX < 0 || offsetY > 2 * padding || offsetX > 2 * padding)
        throw Error("crop offset (" + std::to_string(offsetY) + ", " + std::to_string(offsetX) +
                        ") is outside 0.." + std::to_string(2 * padding) + " for padding " + std::to_string(padding),
                    "padAndCrop");
}

template <typename T>
void checkImageSpan(std::span<T> image, int channels, int height, int width) {
    if (channels < 1 || height < 1 || width < 1 ||
        image.size() != std::size_t(channels) * std::size_t(height) * std::size_t(width))
        throw Error("image of " + std::to_string(image.size()) + " values does not match shape " +
                        std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width),
                    "augmentation");
}

}  // namespace

bool AugmentationConfig::enabled() const {
    return cropPadding > 0 || horizontalFlip || rotationDegrees > 0 || scale > 0 || brightness > 0 ||
           contrast > 0;
}

AugmentationConfig parseAugmentation(std::string_view text) {
    text = trimmed(text);
    AugmentationConfig config;
    if (text.empty() || text == "none") return config;
    // Without OpenCV (a headless GPU node, say) the default keeps what the build can do.
    if (text == "default")
        return geometricWarpsAvailable ? AugmentationConfig{4, true, 10.0f, 0.1f, 0.0f, 0.0f}
                                       : AugmentationConfig{4, true, 0.0f, 0.0f, 0.0f, 0.0f};
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
            if (pixels != std::floor(pixels))
                throw Error("crop padding must be a whole number of pixels",
                            "augmentation item '" + std::string(item) + "'", kAugmentationHint);
            config.cropPadding = int(pixels);
        }
        else if (name == "rotate") config.rotationDegrees = float(parseNumber(item, value, 0, 180));
        else if (name == "scale") config.scale = float(parseNumber(item, value, 0, 0.9));
        if (!geometricWarpsAvailable && (config.rotationDegrees > 0 || config.scale > 0))
            throw Error("rotate and scale need OpenCV, which this build of CNN Studio lacks", "'" + std::string(item) + "'",
                        "use crop, flip, brightness and contrast, or rebuild with libopencv-dev");
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
    if (config.scale > 0) add("scale=" + formatNumber(config.scale));
    if (config.brightness > 0) add("brightness=" + formatNumber(config.brightness));
    if (config.contrast > 0) add("contrast=" + formatNumber(config.contrast));
    return text.empty() ? "none" : text;
}

std::uint64_t augmentationSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sampleIndex) {
    return mixSeed(seed ^ 0xA0761D6478BD642Full, epoch, sampleIndex);
}

AugmentationDraw drawAugmentation(const AugmentationConfig& config, std::uint64_t sampleSeed) {
    SplitMix64 rng(sampleSeed);
    // Always draw every value, in this order, so each choice is independent of the config.
    const float angle = rng.symmetric(), zoom = rng.symmetric();
    const std::uint64_t cropY = rng.next(), cropX = rng.next(), flip = rng.next();
    const float brightness = rng.symmetric(), contrast = rng.symmetric();
    const std::uint64_t cropChoices = std::uint64_t(2 * config.cropPadding + 1);
    AugmentationDraw draw;
    draw.angleDegrees = angle * config.rotationDegrees;
    draw.zoom = 1.0f + zoom * config.scale;
    draw.cropOffsetY = int(cropY % cropChoices);
    draw.cropOffsetX = int(cropX % cropChoices);
    draw.flip = config.horizontalFlip && (flip >> 63) != 0;
    draw.brightnessShift = brightness * config.brightness;
    draw.contrastFactor = 1.0f + contrast * config.contrast;
    return draw;
}

void augmentImage(std::span<float> image, int channels, int height, int width,
                  const AugmentationConfig& config, std::uint64_t sampleSeed, float maxValue) {
    checkImageSpan(image, channels, height, width);
    augmentPlanes(image.data(), channels, height, width, config, sampleSeed, maxValue);
}

void augmentImage(std::span<std::uint8_t> image, int channels, int height, int width,
                  const AugmentationConfig& config, std::uint64_t sampleSeed) {
    checkImageSpan(image, channels, height, width);
    augmentPlanes(image.data(), channels, height, width, config, sampleSeed, 255.0f);
}

void flipHorizontal(std::span<float> image, int channels, int height, int width) {
    checkImageSpan(image, channels, height, width);
    flipPlanes(image.data(), channels, height, width);
}

void flipHorizontal(std::span<std::uint8_t> image, int channels, int height, int width) {
    checkImageSpan(image, channels, height, width);
    flipPlanes(image.data(), channels, height, width);
}

void padAndCrop(std::span<float> image, int channels, int height, int width, int padding, int offsetY,
                int offsetX) {
    checkImageSpan(image, channels, height, width);
    checkCropWindow(padding, offsetY, offsetX);
    padAndCropPlanes(image.data(), channels, height, width, padding, offsetY, offsetX);
}

void padAndCrop(std::span<std::uint8_t> image, int channels, int height, int width, int padding,
                int offsetY, int offsetX) {
    checkImageSpan(image, channels, height, width);
    checkCropWindow(padding, offsetY, offsetX);
    padAndCropPlanes(image.data(), channels, height, width, padding, offsetY, offsetX);
}

}  // namespace cnnstudio::datasets
