// Layers that move data without arithmetic on it: Input (the caller fills its output),
// Flatten (to NCHW element order, which the backend may not store), Add (residual sums) and
// Concat (channel concatenation).
//
// Input    -> (channels, height, width) from its params. FLOPs 0.
// Flatten  (N, C, H, W) -> (N, C·H·W, 1, 1). FLOPs 0.
// Add      k inputs of one shape -> that shape. FLOPs (k - 1) per element.
// Concat   (N, C_i, H, W) -> (N, sum C_i, H, W). FLOPs 0.
#include "layers/layer_params.h"
#include "layers/layer_type.h"
#include "layers/shape_rules.h"
#include "onnx/onnx_graph_builder.h"

namespace cnnstudio {
namespace {

constexpr int unbounded = -1;  // maxInputs of Add and Concat

using Shapes = std::vector<TensorShape>;

LayerOutcome inferInput(const NodeSpec& node, const Shapes&) {
    LayerOutcome outcome;
    setShape(outcome, intParam(node, "channels"), intParam(node, "height"), intParam(node, "width"));
    return outcome;
}

LayerOutcome inferFlatten(const NodeSpec&, const Shapes& inputs) {
    LayerOutcome outcome;
    outcome.outputShape = {1, int(inputs[0].countPerImage()), 1, 1};
    return outcome;
}

LayerOutcome inferAdd(const NodeSpec& node, const Shapes& inputs) {
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

LayerOutcome inferConcat(const NodeSpec& node, const Shapes& inputs) {
    LayerOutcome outcome;
    std::int64_t channels = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].height != inputs[0].height || inputs[i].width != inputs[0].width) {
            outcome.problem = "sizes " + formatHxw(inputs[0].height, inputs[0].width) + " from '" +
                              node.inputs[0] + "' and " + formatHxw(inputs[i].height, inputs[i].width) +
                              " from '" + node.inputs[i] +
                              "' differ; Concat needs inputs of the same height and width";
            return outcome;
        }
        channels += inputs[i].channels;
    }
    setShape(outcome, channels, inputs[0].height, inputs[0].width);
    return outcome;
}

class InputLayer : public Layer {
public:
    void forward(Phase, const LayerIo&, const StepScalars*) override {}
    void backward(const LayerIo&, const float*, const std::vector<float*>&) override {}
};

class FlattenLayer : public Layer {
public:
    FlattenLayer(Backend& backend, const TensorShape& in) : backend_(backend), in_(in) {}

    void forward(Phase, const LayerIo& io, const StepScalars*) override {
        backend_.flattenForward(in_, io.inputs[0], io.output);
    }

    void backward(const LayerIo&, const float* dy, const std::vector<float*>& dx) override {
        if (dx[0]) backend_.flattenBackward(in_, dy, dx[0]);
    }

private:
    Backend& backend_;
    TensorShape in_;
};

// y = x0 + x1 + ...; every input's gradient is dy.
class AddLayer : public Layer {
public:
    AddLayer(Backend& backend, std::size_t count, std::size_t inputs)
        : backend_(backend), count_(count), inputs_(inputs) {}

    void forward(Phase, const LayerIo& io, const StepScalars*) override {
        backend_.add(io.inputs[0], io.inputs[1], io.output, count_);
        for (std::size_t i = 2; i < inputs_; ++i) backend_.axpy(1.0f, io.inputs[i], io.output, count_);
    }

    void backward(const LayerIo&, const float* dy, const std::vector<float*>& dx) override {
        for (float* gradient : dx)
            if (gradient) backend_.copy(gradient, dy, backend_.activationBytes(count_));
    }

private:
    Backend& backend_;
    std::size_t count_, inputs_;
};

// y (N, sum C_i, H, W): input i occupies channels [offset_i, offset_i + C_i).
class ConcatLayer : public Layer {
public:
    ConcatLayer(Backend& backend, const Shapes& in, const TensorShape& out)
        : backend_(backend), in_(in), out_(out) {}

    void forward(Phase, const LayerIo& io, const StepScalars*) override {
        int offset = 0;
        for (std::size_t i = 0; i < in_.size(); ++i) {
            backend_.copyChannels(out_.batch, out_.height * out_.width, in_[i].channels,
                                  io.inputs[i], in_[i].channels, 0, io.output, out_.channels, offset);
            offset += in_[i].channels;
        }
    }

    void backward(const LayerIo&, const float* dy, const std::vector<float*>& dx) override {
        int offset = 0;
        for (std::size_t i = 0; i < in_.size(); ++i) {
            if (dx[i])
                backend_.copyChannels(out_.batch, out_.height * out_.width, in_[i].channels, dy,
                                      out_.channels, offset, dx[i], in_[i].channels, 0);
            offset += in_[i].channels;
        }
    }

private:
    Backend& backend_;
    Shapes in_;
    TensorShape out_;
};

std::unique_ptr<Layer> createInput(const LayerBuild&) { return std::make_unique<InputLayer>(); }

std::unique_ptr<Layer> createFlatten(const LayerBuild& build) {
    return std::make_unique<FlattenLayer>(build.backend, build.inputShapes[0]);
}

std::unique_ptr<Layer> createAdd(const LayerBuild& build) {
    return std::make_unique<AddLayer>(build.backend, std::size_t(build.inputShapes[0].count()),
                                      build.inputShapes.size());
}

std::unique_ptr<Layer> createConcat(const LayerBuild& build) {
    return std::make_unique<ConcatLayer>(build.backend, build.inputShapes, build.outputShape);
}

void exportInput(const NodeSpec& node, OnnxGraphBuilder& graph) {
    graph.declareNetworkInput(intParam(node, "channels"), intParam(node, "height"), intParam(node, "width"));
}

void exportFlatten(const NodeSpec&, OnnxGraphBuilder& graph) { graph.passThrough(graph.matrixInput(0)); }

// The inputs as they are when they share a rank (so a sum of Dense outputs stays a matrix),
// else all as images; our shapes then agree element for element.
std::vector<std::string> sameRankInputs(OnnxGraphBuilder& graph) {
    std::vector<std::string> inputs;
    bool mixed = false;
    for (std::size_t i = 0; i < graph.inputCount(); ++i)
        mixed = mixed || graph.rankOf(graph.input(i)) != graph.rankOf(graph.input(0));
    for (std::size_t i = 0; i < graph.inputCount(); ++i)
        inputs.push_back(mixed ? graph.imageInput(i) : graph.input(i));
    return inputs;
}

// ONNX's Add takes two inputs: k inputs become a chain of k - 1.
void exportAdd(const NodeSpec&, OnnxGraphBuilder& graph) {
    const std::vector<std::string> inputs = sameRankInputs(graph);
    const OnnxRank rank = graph.rankOf(inputs[0]);
    std::string sum = inputs[0];
    for (std::size_t i = 1; i + 1 < inputs.size(); ++i)
        sum = graph.addStep("sum" + std::to_string(i), "Add", {sum, inputs[i]}, rank);
    graph.addResult("Add", {sum, inputs.back()}, rank);
}

void exportConcat(const NodeSpec&, OnnxGraphBuilder& graph) {
    const std::vector<std::string> inputs = sameRankInputs(graph);
    graph.addResult("Concat", inputs, graph.rankOf(inputs[0]), {{"axis", std::int64_t(1)}});
}

}  // namespace

LayerType inputLayerType() {
    const nlohmann::json required;  // null: no default
    LayerType type;
    type.info = {"Input", "Input", 0, 0,
                 {{"channels", "int", required, "", 1, 4096, "image channels: 1 for grey, 3 for colour"},
                  {"height", "int", required, "", 1, maxImageSide, "image height in pixels"},
                  {"width", "int", required, "", 1, maxImageSide, "image width in pixels"}},
                 "The images fed to the network, one per sample (channels × height × width)."};
    type.traits.isNetworkInput = true;
    type.inferShape = inferInput;
    type.create = createInput;
    type.exportOnnx = exportInput;
    return type;
}

LayerType flattenLayerType() {
    LayerType type;
    type.info = {"Flatten", "Structure", 1, 1, {}, "(C, H, W) -> (C·H·W, 1, 1)."};
    type.traits.passesClassScoresThrough = true;
    type.inferShape = inferFlatten;
    type.create = createFlatten;
    type.exportOnnx = exportFlatten;
    return type;
}

LayerType addLayerType() {
    LayerType type;
    type.info = {"Add", "Structure", 2, unbounded, {},
                 "Element-wise sum of two or more inputs of identical shape (residual connections)."};
    type.inferShape = inferAdd;
    type.create = createAdd;
    type.exportOnnx = exportAdd;
    return type;
}

LayerType concatLayerType() {
    LayerType type;
    type.info = {"Concat", "Structure", 2, unbounded, {},
                 "Joins two or more inputs of the same height and width along the channels."};
    type.inferShape = inferConcat;
    type.create = createConcat;
    type.exportOnnx = exportConcat;
    return type;
}

}  // namespace cnnstudio
