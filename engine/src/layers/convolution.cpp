// Conv2D and SeparableConv2D (a depthwise convolution followed by a 1x1 pointwise one): their
// parameters, shape rules, layers and registry records.
//
// Conv2D          x (N, C, H, W), weight (filters, C/groups, kh, kw) -> y (N, filters, H', W'),
//                 H' = floor((H + 2·pad - kh) / stride) + 1, likewise W'.
//                 FLOPs 2 · filters·H'·W' · (C/groups)·kh·kw, + filters·H'·W' with bias.
// SeparableConv2D depthwise (C, 1, kh, kw), no bias, -> (N, C, H', W'); then pointwise
//                 (filters, C, 1, 1) with the bias -> (N, filters, H', W').
//                 FLOPs depthwise 2 · C·H'·W'·kh·kw, pointwise 2 · filters·H'·W'·C,
//                 + filters·H'·W' with bias.
#include "layers/layer_params.h"
#include "layers/layer_type.h"
#include "layers/shape_rules.h"
#include "onnx/onnx_graph_builder.h"

namespace cnnstudio {
namespace {

using nlohmann::json;

ParamInfo strideParam() {
    return {"stride", "int-pair", 1, "", 1, maxWindow, "step between windows: n or [height, width]"};
}

ParamInfo paddingParam() {
    return {"padding", "padding", "valid", "", 0, maxWindow,
            "zeros added on each side: \"valid\" (none), \"same\" ((kernel-1)/2, odd kernels), "
            "n or [height, width]"};
}

struct ConvSettings {
    int filters = 1;
    SpatialPair kernel, stride, padding;  // padding resolved: "valid" = 0, "same" = (k-1)/2
    int groups = 1;
    bool bias = true;
};

ConvSettings sharedConvSettings(const NodeSpec& node) {
    ConvSettings conv;
    conv.filters = intParam(node, "filters");
    conv.kernel = pairParam(node, "kernel");
    conv.stride = pairParam(node, "stride");
    const json& padding = paramValue(node, "padding");
    if (padding == "valid") conv.padding = {0, 0};
    else if (padding == "same") conv.padding = {(conv.kernel.height - 1) / 2, (conv.kernel.width - 1) / 2};
    else conv.padding = pairParam(node, "padding");
    conv.bias = boolParam(node, "bias");
    return conv;
}

ConvSettings conv2dSettings(const NodeSpec& node) {
    ConvSettings conv = sharedConvSettings(node);
    conv.groups = intParam(node, "groups");
    return conv;
}

// groups stays 1: the depthwise step is implied by the type.
ConvSettings separableConv2dSettings(const NodeSpec& node) { return sharedConvSettings(node); }

// "same" keeps the size only when the window has a centre: an odd kernel.
std::string checkSamePadding(const NodeSpec& node) {
    SpatialPair kernel = pairParam(node, "kernel");
    if (paramValue(node, "padding") == "same" && (kernel.height % 2 == 0 || kernel.width % 2 == 0))
        return "padding \"same\" needs an odd kernel, got " + formatPair(kernel) +
               " (use an odd kernel, or give the padding as a number)";
    return {};
}

std::string checkConv2DParams(const NodeSpec& node) {
    if (std::string problem = checkSamePadding(node); !problem.empty()) return problem;
    if (intParam(node, "filters") % intParam(node, "groups") != 0)
        return "filters " + std::to_string(intParam(node, "filters")) +
               " are not divisible by groups " + std::to_string(intParam(node, "groups"));
    return {};
}

// The output plane of either convolution, or nothing with the outcome's problem set.
std::optional<SpatialPair> convOutput(const NodeSpec& node, const ConvSettings& conv,
                                      const TensorShape& input, LayerOutcome& outcome) {
    if (input.channels % conv.groups != 0) {
        outcome.problem = "input channels " + std::to_string(input.channels) + " (from '" +
                          node.inputs[0] + "') are not divisible by groups " +
                          std::to_string(conv.groups);
        return std::nullopt;
    }
    auto out = slideWindow(input, conv.kernel, conv.stride, conv.padding, outcome);
    if (!out) return std::nullopt;
    setShape(outcome, conv.filters, out->height, out->width);
    if (!outcome.problem.empty()) return std::nullopt;
    return out;
}

LayerOutcome inferConv2D(const NodeSpec& node, const std::vector<TensorShape>& inputs) {
    LayerOutcome outcome;
    const ConvSettings conv = conv2dSettings(node);
    const TensorShape& input = inputs[0];
    if (!convOutput(node, conv, input, outcome)) return outcome;
    const std::int64_t outCount = outcome.outputShape.countPerImage();
    const std::int64_t window = std::int64_t(conv.kernel.height) * conv.kernel.width;
    const std::int64_t inPerGroup = input.channels / conv.groups;
    outcome.parameters = std::int64_t(conv.filters) * inPerGroup * window + (conv.bias ? conv.filters : 0);
    auto multiplyAdds = checkedProduct({2, outCount, inPerGroup, window});
    if (multiplyAdds && conv.bias) *multiplyAdds += outCount;
    setFlops(outcome, multiplyAdds);
    return outcome;
}

LayerOutcome inferSeparableConv2D(const NodeSpec& node, const std::vector<TensorShape>& inputs) {
    LayerOutcome outcome;
    const ConvSettings conv = separableConv2dSettings(node);
    const TensorShape& input = inputs[0];
    auto out = convOutput(node, conv, input, outcome);
    if (!out) return outcome;
    const std::int64_t outCount = outcome.outputShape.countPerImage();
    const std::int64_t outPlane = std::int64_t(out->height) * out->width;
    const std::int64_t window = std::int64_t(conv.kernel.height) * conv.kernel.width;
    outcome.parameters = input.channels * window + std::int64_t(input.channels) * conv.filters +
                         (conv.bias ? conv.filters : 0);
    auto depthwise = checkedProduct({2, input.channels, outPlane, window});
    auto pointwise = checkedProduct({2, conv.filters, outPlane, input.channels});
    std::optional<std::int64_t> total;
    if (depthwise && pointwise) total = *depthwise + *pointwise + (conv.bias ? outCount : 0);
    setFlops(outcome, total);
    return outcome;
}

ConvGeometry convGeometry(const TensorShape& in, const TensorShape& out, SpatialPair kernel,
                          SpatialPair stride, SpatialPair padding, int groups) {
    ConvGeometry g;
    g.batch = in.batch;
    g.inChannels = in.channels, g.inHeight = in.height, g.inWidth = in.width;
    g.outChannels = out.channels, g.outHeight = out.height, g.outWidth = out.width;
    g.kernelHeight = kernel.height, g.kernelWidth = kernel.width;
    g.strideHeight = stride.height, g.strideWidth = stride.width;
    g.padHeight = padding.height, g.padWidth = padding.width;
    g.groups = groups;
    return g;
}

std::vector<BufferRequest> convRequests(const ConvGeometry& g, bool bias, const std::string& prefix,
                                        Initialisation init) {
    std::int64_t receptive = std::int64_t(g.kernelHeight) * g.kernelWidth;
    std::int64_t fanIn = receptive * (g.inChannels / g.groups);
    std::int64_t fanOut = receptive * (g.outChannels / g.groups);
    std::vector<BufferRequest> requests{
        {prefix + "weight",
         {g.outChannels, g.inChannels / g.groups, g.kernelHeight, g.kernelWidth},
         init, fanIn, fanOut}};
    if (bias) requests.push_back({prefix + "bias", {g.outChannels}, Initialisation::Zeros});
    return requests;
}

// y = conv(x, weight) + bias. weight (filters, C/groups, kh, kw).
class Conv2DLayer : public Layer {
public:
    Conv2DLayer(Backend& backend, const NodeSpec& node, const TensorShape& in,
                const TensorShape& out, Initialisation init);
    std::vector<BufferRequest> parameterRequests() const override;
    void bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
              const std::vector<float*>& state) override;
    void forward(Phase phase, const LayerIo& io, const StepScalars* step) override;
    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override;
    std::optional<FusableConv> fusableConv() const override {
        return FusableConv{geometry_, weight_, bias_, weightGradient_, biasGradient_};
    }

private:
    Backend& backend_;
    Initialisation init_;
    ConvGeometry geometry_;
    bool hasBias_ = true;
    float *weight_ = nullptr, *weightGradient_ = nullptr, *bias_ = nullptr, *biasGradient_ = nullptr;
};

// Depthwise (C, 1, kh, kw), no bias, into a middle buffer (N, C, H', W'); then pointwise
// (filters, C, 1, 1) with the optional bias.
class SeparableConv2DLayer : public Layer {
public:
    SeparableConv2DLayer(Backend& backend, const NodeSpec& node, const TensorShape& in,
                         const TensorShape& out, Initialisation init);
    std::vector<BufferRequest> parameterRequests() const override;
    void bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
              const std::vector<float*>& state) override;
    void forward(Phase phase, const LayerIo& io, const StepScalars* step) override;
    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override;

private:
    Backend& backend_;
    Initialisation init_;
    ConvGeometry depthwise_, pointwise_;
    bool hasBias_ = true;
    Tensor middle_, middleGradient_;
    float *depthwiseWeight_ = nullptr, *depthwiseGradient_ = nullptr;
    float *pointwiseWeight_ = nullptr, *pointwiseGradient_ = nullptr;
    float *bias_ = nullptr, *biasGradient_ = nullptr;
};

Conv2DLayer::Conv2DLayer(Backend& backend, const NodeSpec& node, const TensorShape& in,
                         const TensorShape& out, Initialisation init)
    : backend_(backend), init_(init) {
    ConvSettings settings = conv2dSettings(node);
    geometry_ = convGeometry(in, out, settings.kernel, settings.stride, settings.padding, settings.groups);
    hasBias_ = settings.bias;
}

std::vector<BufferRequest> Conv2DLayer::parameterRequests() const {
    return convRequests(geometry_, hasBias_, "", init_);
}

void Conv2DLayer::bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
                       const std::vector<float*>&) {
    weight_ = parameters[0], weightGradient_ = gradients[0];
    if (hasBias_) bias_ = parameters[1], biasGradient_ = gradients[1];
}

void Conv2DLayer::forward(Phase, const LayerIo& io, const StepScalars*) {
    backend_.convForward(geometry_, io.inputs[0], weight_, bias_, io.output);
}

void Conv2DLayer::backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) {
    backend_.convBackwardFilter(geometry_, io.inputs[0], dy, weightGradient_, biasGradient_);
    if (dx[0]) backend_.convBackwardData(geometry_, dy, weight_, dx[0]);
}

SeparableConv2DLayer::SeparableConv2DLayer(Backend& backend, const NodeSpec& node,
                                           const TensorShape& in, const TensorShape& out,
                                           Initialisation init)
    : backend_(backend), init_(init) {
    ConvSettings settings = separableConv2dSettings(node);
    TensorShape middle{in.batch, in.channels, out.height, out.width};
    depthwise_ = convGeometry(in, middle, settings.kernel, settings.stride, settings.padding, in.channels);
    pointwise_ = convGeometry(middle, out, {1, 1}, {1, 1}, {0, 0}, 1);
    hasBias_ = settings.bias;
    middle_ = Tensor::activations(backend, middle);
    middleGradient_ = Tensor::activations(backend, middle);
}

std::vector<BufferRequest> SeparableConv2DLayer::parameterRequests() const {
    auto requests = convRequests(depthwise_, false, "depthwise.", Initialisation::Glorot);
    for (auto& request : convRequests(pointwise_, hasBias_, "pointwise.", init_))
        requests.push_back(request);
    return requests;
}

void SeparableConv2DLayer::bind(const std::vector<float*>& parameters,
                                const std::vector<float*>& gradients, const std::vector<float*>&) {
    depthwiseWeight_ = parameters[0], depthwiseGradient_ = gradients[0];
    pointwiseWeight_ = parameters[1], pointwiseGradient_ = gradients[1];
    if (hasBias_) bias_ = parameters[2], biasGradient_ = gradients[2];
}

void SeparableConv2DLayer::forward(Phase, const LayerIo& io, const StepScalars*) {
    backend_.convForward(depthwise_, io.inputs[0], depthwiseWeight_, nullptr, middle_.data());
    backend_.convForward(pointwise_, middle_.data(), pointwiseWeight_, bias_, io.output);
}

void SeparableConv2DLayer::backward(const LayerIo& io, const float* dy,
                                    const std::vector<float*>& dx) {
    backend_.convBackwardFilter(pointwise_, middle_.data(), dy, pointwiseGradient_, biasGradient_);
    backend_.convBackwardData(pointwise_, dy, pointwiseWeight_, middleGradient_.data());
    backend_.convBackwardFilter(depthwise_, io.inputs[0], middleGradient_.data(),
                                depthwiseGradient_, nullptr);
    if (dx[0])
        backend_.convBackwardData(depthwise_, middleGradient_.data(), depthwiseWeight_, dx[0]);
}

std::unique_ptr<Layer> createConv2D(const LayerBuild& build) {
    return std::make_unique<Conv2DLayer>(build.backend, build.node, build.inputShapes[0],
                                         build.outputShape, build.initialisation);
}

std::unique_ptr<Layer> createSeparableConv2D(const LayerBuild& build) {
    return std::make_unique<SeparableConv2DLayer>(build.backend, build.node, build.inputShapes[0],
                                                  build.outputShape, build.initialisation);
}

// Conv with the settings' window; `weight` (out, in/group, kh, kw) as ours.
std::vector<OnnxAttribute> convAttributes(const ConvSettings& conv, std::int64_t group) {
    std::vector<OnnxAttribute> attributes =
        onnxWindowAttributes(conv.kernel.height, conv.kernel.width, conv.stride.height, conv.stride.width,
                             conv.padding.height, conv.padding.width);
    attributes.push_back({"group", group});
    return attributes;
}

void exportConv2D(const NodeSpec& node, OnnxGraphBuilder& graph) {
    const ConvSettings conv = conv2dSettings(node);
    std::vector<std::string> inputs{graph.imageInput(0), graph.weight("weight")};
    if (conv.bias) inputs.push_back(graph.weight("bias"));
    graph.addResult("Conv", inputs, OnnxRank::Image, convAttributes(conv, conv.groups));
}

// Two Convs, as our layer runs them: depthwise (group = channels, no bias), then 1x1.
void exportSeparableConv2D(const NodeSpec& node, OnnxGraphBuilder& graph) {
    const ConvSettings conv = separableConv2dSettings(node);
    const std::int64_t channels = graph.weightShape("depthwise.weight")[0];
    const std::string depthwise = graph.addStep("depthwise", "Conv",
                                                {graph.imageInput(0), graph.weight("depthwise.weight")},
                                                OnnxRank::Image, convAttributes(conv, channels));
    ConvSettings pointwise;
    pointwise.kernel = pointwise.stride = {1, 1};
    pointwise.padding = {0, 0};
    std::vector<std::string> inputs{depthwise, graph.weight("pointwise.weight")};
    if (conv.bias) inputs.push_back(graph.weight("pointwise.bias"));
    graph.addResult("Conv", inputs, OnnxRank::Image, convAttributes(pointwise, 1));
}

}  // namespace

LayerType conv2dLayerType() {
    LayerType type;
    type.info = {"Conv2D", "Convolution", 1, 1,
                 {channelsParam("filters", "number of output channels"), kernelParam(json()),
                  strideParam(), paddingParam(),
                  {"groups", "int", 1, "", 1, maxChannels,
                   "split input and output channels into this many independent groups"},
                  biasParam()},
                 "2-D convolution (cross-correlation, as PyTorch's Conv2d)."};
    type.traits.hasWeights = true;
    type.traits.classCountParam = "filters";
    type.checkParams = checkConv2DParams;
    type.inferShape = inferConv2D;
    type.create = createConv2D;
    type.exportOnnx = exportConv2D;
    return type;
}

LayerType separableConv2dLayerType() {
    LayerType type;
    type.info = {"SeparableConv2D", "Convolution", 1, 1,
                 {channelsParam("filters", "number of output channels"), kernelParam(json()),
                  strideParam(), paddingParam(), biasParam()},
                 "Depthwise convolution (one kernel per input channel, no bias) followed by a "
                 "1×1 pointwise convolution to `filters` channels (with the bias)."};
    type.traits.hasWeights = true;
    type.checkParams = checkSamePadding;
    type.inferShape = inferSeparableConv2D;
    type.create = createSeparableConv2D;
    type.exportOnnx = exportSeparableConv2D;
    return type;
}

}  // namespace cnnstudio
