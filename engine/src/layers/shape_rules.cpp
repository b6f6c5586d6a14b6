#include "layers/shape_rules.h"

#include <climits>

namespace cnnstudio {
namespace {

std::string sizeText(SpatialPair pair) {
    if (pair.height == pair.width) return std::to_string(pair.height);
    return formatPair(pair);
}

}  // namespace

std::optional<std::int64_t> checkedProduct(std::initializer_list<std::int64_t> factors) {
    std::int64_t result = 1;
    for (std::int64_t factor : factors)
        if (__builtin_mul_overflow(result, factor, &result)) return std::nullopt;
    return result;
}

std::string formatHxw(std::int64_t height, std::int64_t width) {
    return std::to_string(height) + "x" + std::to_string(width);
}

void setShape(LayerOutcome& outcome, std::int64_t channels, std::int64_t height, std::int64_t width) {
    auto count = checkedProduct({channels, height, width});
    if (!count || *count > INT_MAX) {
        outcome.problem = "output " + std::to_string(channels) + "x" + formatHxw(height, width) +
                          " has more than 2^31 - 1 values per image; make the layer smaller";
        return;
    }
    outcome.outputShape = {1, int(channels), int(height), int(width)};
}

void setFlops(LayerOutcome& outcome, std::optional<std::int64_t> flops) {
    if (flops) outcome.forwardFlops = *flops;
    else outcome.problem = "the FLOP count of this layer does not fit 64 bits; make it smaller";
}

std::optional<SpatialPair> slideWindow(const TensorShape& input, SpatialPair kernel,
                                       SpatialPair stride, SpatialPair padding,
                                       LayerOutcome& outcome) {
    std::int64_t spanHeight = std::int64_t(input.height) + 2 * padding.height - kernel.height;
    std::int64_t spanWidth = std::int64_t(input.width) + 2 * padding.width - kernel.width;
    if (spanHeight < 0 || spanWidth < 0) {
        std::int64_t outHeight = spanHeight < 0 ? 0 : spanHeight / stride.height + 1;
        std::int64_t outWidth = spanWidth < 0 ? 0 : spanWidth / stride.width + 1;
        std::string padded;
        if (padding.height || padding.width)
            padded = " padded to " + formatHxw(input.height + 2 * padding.height,
                                               input.width + 2 * padding.width);
        outcome.problem = "output would be " + formatHxw(outHeight, outWidth) + ": input " +
                          formatHxw(input.height, input.width) + padded +
                          " is smaller than kernel " + sizeText(kernel);
        return std::nullopt;
    }
    return SpatialPair{int(spanHeight / stride.height + 1), int(spanWidth / stride.width + 1)};
}

LayerOutcome sameShape(const TensorShape& input, std::int64_t flopsPerElement) {
    LayerOutcome outcome;
    outcome.outputShape = input;
    outcome.forwardFlops = flopsPerElement * input.countPerImage();
    return outcome;
}

std::string formatChw(const TensorShape& shape) {
    // Appended piece by piece: GCC 12 reports a false -Wrestrict on a chain of "(" + ... at -O2.
    std::string text = "(";
    for (int dimension : {shape.channels, shape.height, shape.width}) text += std::to_string(dimension) + ",";
    text.back() = ')';
    return text;
}

}  // namespace cnnstudio
