// Output shape, parameter count and forward FLOPs of each layer type, per image.
//
// Parameters are the trainable ones, counted as PyTorch counts them (running statistics of
// batch normalisation are buffers, not parameters).
//
// FLOPs convention (forward pass, one image; a multiply-add counts 2):
//   Conv2D            2 · outC·outH·outW · (inC/groups)·kh·kw, + outC·outH·outW with bias
//   SeparableConv2D   depthwise 2 · C·outH·outW·kh·kw, pointwise 2 · filters·outH·outW·C,
//                     + filters·outH·outW with bias
//   Dense             2 · in·units, + units with bias
//   MaxPool2D         kh·kw per output (comparisons); AvgPool2D kh·kw per output (adds, divide)
//   GlobalAvgPool     one add per input element
//   BatchNorm2D       2 per element (normalise and affine folded into one multiply-add, as at
//                     inference; the training-time statistics are not counted)
//   ReLU 1, LeakyReLU 2, ELU 3, Dropout 1 per element
//   Add               (inputs - 1) per element; Input, Flatten, Concat 0 (data movement only)
#include "spec/layer_shapes.h"

#include <climits>
#include <initializer_list>
#include <optional>

#include "spec/layer_params.h"

namespace cnnstudio {
namespace {

// Product of the factors, or nothing when it does not fit an int64.
std::optional<std::int64_t> product(std::initializer_list<std::int64_t> factors) {
    std::int64_t result = 1;
    for (std::int64_t factor : factors)
        if (__builtin_mul_overflow(result, factor, &result)) return std::nullopt;
    return result;
}

std::string sizeText(SpatialPair pair) {
    if (pair.height == pair.width) return std::to_string(pair.height);
    return std::to_string(pair.height) + "x" + std::to_string(pair.width);
}

std::string hxw(std::int64_t height, std::int64_t width) {
    return std::to_string(height) + "x" + std::to_string(width);
}

// Sets the outcome's shape, or its problem when the shape is too large for the backends,
// which index with int.
void setShape(LayerOutcome& outcome, std::int64_t channels, std::int64_t height, std::int64_t width) {
    auto count = product({channels, height, width});
    if (!count || *count > INT_MAX) {
        outcome.problem = "output " + std::to_string(channels) + "x" + hxw(height, width) +
                          " has more than 2^31 - 1 values per image; make the layer smaller";
        return;
    }
    outcome.outputShape = {1, int(channels), int(height), int(width)};
}

// Sliding a window over the input (PyTorch semantics, no ceil mode):
// out = floor((in + 2·pad - kernel) / stride) + 1 per side. Sets the problem when a side would
// be 0 or less.
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
            padded = " padded to " + hxw(input.height + 2 * padding.height,
                                         input.width + 2 * padding.width);
        outcome.problem = "output would be " + hxw(outHeight, outWidth) + ": input " +
                          hxw(input.height, input.width) + padded + " is smaller than kernel " +
                          sizeText(kernel);
        return std::nullopt;
    }
    return SpatialPair{int(spanHeight / stride.height + 1), int(spanWidth / stride.width + 1)};
}

void setFlops(LayerOutcome& outcome, std::optional<std::int64_t> flops) {
    if (flops) outcome.forwardFlops = *flops;
    else outcome.problem = "the FLOP count of this layer does not fit 64 bits; make it smaller";
}

LayerOutcome inferConv(const NodeSpec& node, const TensorShape& input) {
    LayerOutcome outcome;
    ConvSettings conv = convSettings(node);
    if (input.channels % conv.groups != 0) {
        outcome.problem = "input channels " + std::to_string(input.channels) + " (from '" +
                          node.inputs[0] + "') are not divisible by groups " +
                          std::to_string(conv.groups);
        return outcome;
    }
    auto out = slideWindow(input, conv.kernel, conv.stride, conv.padding, outcome);
    if (!out) return outcome;
    setShape(outcome, conv.filters, out->height, out->width);
    if (!outcome.problem.empty()) return outcome;
    const std::int64_t outCount = outcome.outputShape.countPerImage();
    const std::int64_t window = std::int64_t(conv.kernel.height) * conv.kernel.width;
    const std::int64_t bias = conv.bias ? conv.filters : 0;
    if (node.type == "Conv2D") {
        const std::int64_t inPerGroup = input.channels / conv.groups;
        outcome.parameters = std::int64_t(conv.filters) * inPerGroup * window + bias;
        auto multiplyAdds = product({2, outCount, inPerGroup, window});
        if (multiplyAdds && conv.bias) *multiplyAdds += outCount;
        setFlops(outcome, multiplyAdds);
        return outcome;
    }
    // SeparableConv2D: depthwise (one kh×kw kernel per input channel, no bias), then a 1×1
    // pointwise convolution to `filters` channels carrying the bias.
    const std::int64_t outPlane = std::int64_t(out->height) * out->width;
    outcome.parameters = input.channels * window + std::int64_t(input.channels) * conv.filters + bias;
    auto depthwise = product({2, input.channels, outPlane, window});
    auto pointwise = product({2, conv.filters, outPlane, input.channels});
    std::optional<std::int64_t> total;
    if (depthwise && pointwise) total = *depthwise + *pointwise + (conv.bias ? outCount : 0);
    setFlops(outcome, total);
    return outcome;
}

LayerOutcome inferPool(const NodeSpec& node, const TensorShape& input) {
    LayerOutcome outcome;
    PoolSettings pool = poolSettings(node);
    auto out = slideWindow(input, pool.kernel, pool.stride, pool.padding, outcome);
    if (!out) return outcome;
    setShape(outcome, input.channels, out->height, out->width);
    if (outcome.problem.empty())
        outcome.forwardFlops = outcome.outputShape.countPerImage() * pool.kernel.height * pool.kernel.width;
    return outcome;
}

LayerOutcome sameShape(const TensorShape& input, std::int64_t flopsPerElement) {
    LayerOutcome outcome;
    outcome.outputShape = input;
    outcome.forwardFlops = flopsPerElement * input.countPerImage();
    return outcome;
}

LayerOutcome inferAdd(const NodeSpec& node, const std::vector<TensorShape>& inputs) {
    for (std::size_t i = 1; i < inputs.size(); ++i) {
        if (inputs[i] == inputs[0]) continue;
        LayerOutcome outcome;
        outcome.problem = "shapes " + formatChw(inputs[0]) + " from '" + node.inputs[0] + "' and " +
                          formatChw(inputs[i]) + " from '" + node.inputs[i] +
                          "' differ; Add needs inputs of identical shape";
        return outcome;
    }
    return sameShape(inputs[0], std::int64_t(inputs.size()) - 1);
}

LayerOutcome inferConcat(const NodeSpec& node, const std::vector<TensorShape>& inputs) {
    LayerOutcome outcome;
    std::int64_t channels = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].height != inputs[0].height || inputs[i].width != inputs[0].width) {
            outcome.problem = "sizes " + hxw(inputs[0].height, inputs[0].width) + " from '" +
                              node.inputs[0] + "' and " + hxw(inputs[i].height, inputs[i].width) +
                              " from '" + node.inputs[i] +
                              "' differ; Concat needs inputs of the same height and width";
            return outcome;
        }
        channels += inputs[i].channels;
    }
    setShape(outcome, channels, inputs[0].height, inputs[0].width);
    return outcome;
}

LayerOutcome inferDense(const NodeSpec& node, const TensorShape& input) {
    LayerOutcome outcome;
    const std::int64_t in = input.countPerImage();
    const std::int64_t units = intParam(node, "units");
    const bool bias = boolParam(node, "bias");
    outcome.outputShape = {1, int(units), 1, 1};
    outcome.parameters = in * units + (bias ? units : 0);
    outcome.forwardFlops = 2 * in * units + (bias ? units : 0);
    return outcome;
}

}  // namespace

std::string formatChw(const TensorShape& shape) {
    // Appended piece by piece: GCC 12 reports a false -Wrestrict on a chain of "(" + ... at -O2.
    std::string text = "(";
    for (int dimension : {shape.channels, shape.height, shape.width}) text += std::to_string(dimension) + ",";
    text.back() = ')';
    return text;
}

LayerOutcome inferLayer(const NodeSpec& node, const std::vector<TensorShape>& inputShapes) {
    const std::string& type = node.type;
    if (type == "Input") {
        LayerOutcome outcome;
        setShape(outcome, intParam(node, "channels"), intParam(node, "height"), intParam(node, "width"));
        return outcome;
    }
    if (type == "Add") return inferAdd(node, inputShapes);
    if (type == "Concat") return inferConcat(node, inputShapes);

    const TensorShape& input = inputShapes.at(0);
    if (type == "Conv2D" || type == "SeparableConv2D") return inferConv(node, input);
    if (type == "MaxPool2D" || type == "AvgPool2D") return inferPool(node, input);
    if (type == "Dense") return inferDense(node, input);
    if (type == "GlobalAvgPool") {
        LayerOutcome outcome;
        outcome.outputShape = {1, input.channels, 1, 1};
        outcome.forwardFlops = input.countPerImage();
        return outcome;
    }
    if (type == "Flatten") {
        LayerOutcome outcome;
        outcome.outputShape = {1, int(input.countPerImage()), 1, 1};
        return outcome;
    }
    if (type == "BatchNorm2D") {
        LayerOutcome outcome = sameShape(input, 2);
        outcome.parameters = 2 * std::int64_t(input.channels);
        return outcome;
    }
    if (type == "ReLU") return sameShape(input, 1);
    if (type == "LeakyReLU") return sameShape(input, 2);
    if (type == "ELU") return sameShape(input, 3);
    if (type == "Dropout") return sameShape(input, 1);
    LayerOutcome outcome;
    outcome.problem = "layer type '" + type + "' has no shape rule (a bug in CNN Studio; please report it)";
    return outcome;
}

}  // namespace cnnstudio
