// MaxPool2D, AvgPool2D and GlobalAvgPool (an average pool over the whole image): their
// parameters, shape rules, layer and registry records.
//
// MaxPool2D, AvgPool2D  x (N, C, H, W) -> y (N, C, H', W'), H' = floor((H + 2·pad - kh) / stride) + 1,
//                       likewise W'. FLOPs kh·kw per output (comparisons; adds and the divide).
//                       The average counts only the non-padding elements.
// GlobalAvgPool         x (N, C, H, W) -> y (N, C, 1, 1). FLOPs one add per input element.
#include "layers/layer_params.h"
#include "layers/layer_type.h"
#include "layers/shape_rules.h"
#include "onnx/onnx_graph_builder.h"

namespace cnnstudio {
namespace {

using nlohmann::json;

std::vector<ParamInfo> windowPoolParams() {
    return {kernelParam(2),
            {"stride", "int-pair", json(), "kernel", 1, maxWindow,
             "step between windows: n or [height, width]; defaults to the kernel"},
            {"padding", "int-pair", 0, "", 0, maxWindow / 2,
             "zeros added on each side, at most half the kernel: n or [height, width]"}};
}

struct PoolSettings {
    SpatialPair kernel, stride, padding;
};

PoolSettings poolSettings(const NodeSpec& node) {
    return {pairParam(node, "kernel"), pairParam(node, "stride"), pairParam(node, "padding")};
}

std::string checkWindowPoolParams(const NodeSpec& node) {
    PoolSettings pool = poolSettings(node);
    if (pool.padding.height > pool.kernel.height / 2 || pool.padding.width > pool.kernel.width / 2)
        return "padding " + formatPair(pool.padding) + " is more than half the kernel " +
               formatPair(pool.kernel) + " (a window could lie wholly in the padding)";
    return {};
}

LayerOutcome inferWindowPool(const NodeSpec& node, const std::vector<TensorShape>& inputs) {
    LayerOutcome outcome;
    const TensorShape& input = inputs[0];
    PoolSettings pool = poolSettings(node);
    auto out = slideWindow(input, pool.kernel, pool.stride, pool.padding, outcome);
    if (!out) return outcome;
    setShape(outcome, input.channels, out->height, out->width);
    if (outcome.problem.empty())
        outcome.forwardFlops = outcome.outputShape.countPerImage() * pool.kernel.height * pool.kernel.width;
    return outcome;
}

LayerOutcome inferGlobalAvgPool(const NodeSpec&, const std::vector<TensorShape>& inputs) {
    LayerOutcome outcome;
    outcome.outputShape = {1, inputs[0].channels, 1, 1};
    outcome.forwardFlops = inputs[0].countPerImage();
    return outcome;
}

class PoolLayer : public Layer {
public:
    PoolLayer(Backend& backend, const PoolGeometry& geometry) : backend_(backend), geometry_(geometry) {}

    void forward(Phase, const LayerIo& io, const StepScalars*) override {
        backend_.poolForward(geometry_, io.inputs[0], io.output);
    }

    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override {
        if (dx[0]) backend_.poolBackward(geometry_, io.inputs[0], io.output, dy, dx[0]);
    }

    std::optional<PoolGeometry> fusableMaxPool() const override {
        if (geometry_.kind != PoolKind::Max) return std::nullopt;
        return geometry_;
    }

private:
    Backend& backend_;
    PoolGeometry geometry_;
};

PoolGeometry imageGeometry(const LayerBuild& build, PoolKind kind) {
    const TensorShape& in = build.inputShapes[0];
    PoolGeometry g;
    g.kind = kind;
    g.batch = in.batch, g.channels = in.channels;
    g.inHeight = in.height, g.inWidth = in.width;
    g.outHeight = build.outputShape.height, g.outWidth = build.outputShape.width;
    return g;
}

std::unique_ptr<Layer> createWindowPool(const LayerBuild& build, PoolKind kind) {
    PoolGeometry g = imageGeometry(build, kind);
    PoolSettings settings = poolSettings(build.node);
    g.kernelHeight = settings.kernel.height, g.kernelWidth = settings.kernel.width;
    g.strideHeight = settings.stride.height, g.strideWidth = settings.stride.width;
    g.padHeight = settings.padding.height, g.padWidth = settings.padding.width;
    return std::make_unique<PoolLayer>(build.backend, g);
}

std::unique_ptr<Layer> createMaxPool2D(const LayerBuild& build) {
    return createWindowPool(build, PoolKind::Max);
}

std::unique_ptr<Layer> createAvgPool2D(const LayerBuild& build) {
    return createWindowPool(build, PoolKind::Average);
}

// One window the size of the image.
std::unique_ptr<Layer> createGlobalAvgPool(const LayerBuild& build) {
    PoolGeometry g = imageGeometry(build, PoolKind::Average);
    g.kernelHeight = g.strideHeight = g.inHeight;
    g.kernelWidth = g.strideWidth = g.inWidth;
    return std::make_unique<PoolLayer>(build.backend, g);
}

std::vector<OnnxAttribute> poolAttributes(const PoolSettings& pool) {
    return onnxWindowAttributes(pool.kernel.height, pool.kernel.width, pool.stride.height, pool.stride.width,
                                pool.padding.height, pool.padding.width);
}

void exportMaxPool2D(const NodeSpec& node, OnnxGraphBuilder& graph) {
    graph.addResult("MaxPool", {graph.imageInput(0)}, OnnxRank::Image, poolAttributes(poolSettings(node)));
}

// Our average divides by the window's non-padding elements: count_include_pad 0.
void exportAvgPool2D(const NodeSpec& node, OnnxGraphBuilder& graph) {
    std::vector<OnnxAttribute> attributes = poolAttributes(poolSettings(node));
    attributes.push_back({"count_include_pad", std::int64_t(0)});
    graph.addResult("AveragePool", {graph.imageInput(0)}, OnnxRank::Image, attributes);
}

void exportGlobalAvgPool(const NodeSpec&, OnnxGraphBuilder& graph) {
    graph.addResult("GlobalAveragePool", {graph.imageInput(0)}, OnnxRank::Image);
}

}  // namespace

LayerType maxPool2dLayerType() {
    LayerType type;
    type.info = {"MaxPool2D", "Pooling", 1, 1, windowPoolParams(), "Maximum over each window."};
    type.checkParams = checkWindowPoolParams;
    type.inferShape = inferWindowPool;
    type.create = createMaxPool2D;
    type.exportOnnx = exportMaxPool2D;
    return type;
}

LayerType avgPool2dLayerType() {
    LayerType type;
    type.info = {"AvgPool2D", "Pooling", 1, 1, windowPoolParams(),
                 "Mean over each window; padding zeros are not counted."};
    type.checkParams = checkWindowPoolParams;
    type.inferShape = inferWindowPool;
    type.create = createAvgPool2D;
    type.exportOnnx = exportAvgPool2D;
    return type;
}

LayerType globalAvgPoolLayerType() {
    LayerType type;
    type.info = {"GlobalAvgPool", "Pooling", 1, 1, {},
                 "Mean over the whole height and width of each channel: (C, H, W) -> (C, 1, 1)."};
    type.traits.passesClassScoresThrough = true;
    type.inferShape = inferGlobalAvgPool;
    type.create = createGlobalAvgPool;
    type.exportOnnx = exportGlobalAvgPool;
    return type;
}

}  // namespace cnnstudio
