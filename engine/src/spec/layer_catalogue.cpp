// The layer catalogue: every layer type a spec may use, with its parameters. The inspector
// builds its editors from this table, checkParams() validates against it, and absent
// parameters take the defaults written here.

#include "cnnstudio/spec.h"

namespace cnnstudio {
namespace {

using nlohmann::json;

constexpr int unbounded = -1;  // maxInputs of Add and Concat

// Practical bounds: every size must fit the int fields of the Backend geometry structs, and a
// value beyond these is a typo rather than a design.
constexpr double maxChannels = 65536, maxImageSide = 65536, maxWindow = 1024;

ParamInfo channelsParam(std::string name, std::string help) {
    return {std::move(name), "int", json(), "", 1, maxChannels, std::move(help)};
}

ParamInfo kernelParam(json defaultValue) {
    return {"kernel", "int-pair", std::move(defaultValue), "", 1, maxWindow,
            "window size: n for n×n, or [height, width]"};
}

ParamInfo convStrideParam() {
    return {"stride", "int-pair", 1, "", 1, maxWindow, "step between windows: n or [height, width]"};
}

ParamInfo convPaddingParam() {
    return {"padding", "padding", "valid", "", 0, maxWindow,
            "zeros added on each side: \"valid\" (none), \"same\" ((kernel-1)/2, odd kernels), "
            "n or [height, width]"};
}

ParamInfo biasParam() { return {"bias", "bool", true, "", 0, 0, "add a learned bias per output"}; }

std::vector<ParamInfo> poolParams() {
    return {kernelParam(2),
            {"stride", "int-pair", json(), "kernel", 1, maxWindow,
             "step between windows: n or [height, width]; defaults to the kernel"},
            {"padding", "int-pair", 0, "", 0, maxWindow / 2,
             "zeros added on each side, at most half the kernel: n or [height, width]"}};
}

std::vector<LayerTypeInfo> buildCatalogue() {
    return {
        {"Input", "Input", 0, 0,
         {{"channels", "int", json(), "", 1, 4096, "image channels: 1 for grey, 3 for colour"},
          {"height", "int", json(), "", 1, maxImageSide, "image height in pixels"},
          {"width", "int", json(), "", 1, maxImageSide, "image width in pixels"}},
         "The images fed to the network, one per sample (channels × height × width)."},
        {"Conv2D", "Convolution", 1, 1,
         {channelsParam("filters", "number of output channels"), kernelParam(json()),
          convStrideParam(), convPaddingParam(),
          {"groups", "int", 1, "", 1, maxChannels,
           "split input and output channels into this many independent groups"},
          biasParam()},
         "2-D convolution (cross-correlation, as PyTorch's Conv2d)."},
        {"SeparableConv2D", "Convolution", 1, 1,
         {channelsParam("filters", "number of output channels"), kernelParam(json()),
          convStrideParam(), convPaddingParam(), biasParam()},
         "Depthwise convolution (one kernel per input channel, no bias) followed by a 1×1 "
         "pointwise convolution to `filters` channels (with the bias)."},
        {"MaxPool2D", "Pooling", 1, 1, poolParams(), "Maximum over each window."},
        {"AvgPool2D", "Pooling", 1, 1, poolParams(),
         "Mean over each window; padding zeros are not counted."},
        {"GlobalAvgPool", "Pooling", 1, 1, {},
         "Mean over the whole height and width of each channel: (C, H, W) -> (C, 1, 1)."},
        {"BatchNorm2D", "Normalisation", 1, 1,
         {{"epsilon", "float", 1e-5, "", 1e-12, 1, "added to the variance before the square root"},
          {"momentum", "float", 0.1, "", 0, 1,
           "weight of the current batch in the running statistics (PyTorch convention)"}},
         "Batch normalisation per channel, with a learned scale and shift."},
        {"ReLU", "Activation", 1, 1, {}, "max(x, 0)."},
        {"LeakyReLU", "Activation", 1, 1,
         {{"alpha", "float", 0.01, "", 0, 1, "slope for negative inputs"}},
         "x for x > 0, alpha·x otherwise."},
        {"ELU", "Activation", 1, 1,
         {{"alpha", "float", 1.0, "", 0, 10, "value approached for very negative inputs is -alpha"}},
         "x for x > 0, alpha·(exp(x) - 1) otherwise."},
        {"Dropout", "Regularisation", 1, 1,
         {{"rate", "float", 0.5, "", 0, 1, "fraction of activations zeroed in training, in [0, 1)"}},
         "Zeroes a random fraction of activations while training and scales the rest by "
         "1/(1-rate); does nothing at inference."},
        {"Flatten", "Structure", 1, 1, {}, "(C, H, W) -> (C·H·W, 1, 1)."},
        {"Dense", "Dense", 1, 1,
         {channelsParam("units", "number of outputs"), biasParam()},
         "Fully connected layer (PyTorch's Linear) over the flattened input: C·H·W inputs."},
        {"Add", "Structure", 2, unbounded, {},
         "Element-wise sum of two or more inputs of identical shape (residual connections)."},
        {"Concat", "Structure", 2, unbounded, {},
         "Joins two or more inputs of the same height and width along the channels."},
    };
}

}  // namespace

const std::vector<LayerTypeInfo>& layerTypes() {
    static const std::vector<LayerTypeInfo> catalogue = buildCatalogue();
    return catalogue;
}

const LayerTypeInfo* findLayerType(const std::string& type) {
    for (const auto& info : layerTypes())
        if (info.type == type) return &info;
    return nullptr;
}

}  // namespace cnnstudio
