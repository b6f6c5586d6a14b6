// ReLU, LeakyReLU, ELU and SiLU: elementwise nonlinearities, x (N, C, H, W) -> y of the same shape.
//
// ReLU       max(x, 0)                              FLOPs 1 per element
// LeakyReLU  x for x > 0, alpha·x otherwise         FLOPs 2 per element
// ELU        x for x > 0, alpha·(exp(x) - 1) else   FLOPs 3 per element
// SiLU       x·sigmoid(x) (PyTorch's nn.SiLU)       FLOPs 4 per element (exp, add, divide, multiply)
#include "layers/layer_params.h"
#include "layers/layer_type.h"
#include "layers/shape_rules.h"
#include "onnx/onnx_graph_builder.h"

namespace cnnstudio {
namespace {

class ActivationLayer : public Layer {
public:
    ActivationLayer(Backend& backend, Activation kind, float alpha, std::size_t count)
        : backend_(backend), kind_(kind), alpha_(alpha), count_(count) {}

    void forward(Phase, const LayerIo& io, const StepScalars*) override {
        backend_.activationForward(kind_, alpha_, io.inputs[0], io.output, count_);
    }

    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override {
        if (dx[0])
            backend_.activationBackward(kind_, alpha_, io.inputs[0], io.output, dy, dx[0], count_);
    }

private:
    Backend& backend_;
    Activation kind_;
    float alpha_;
    std::size_t count_;
};

std::unique_ptr<Layer> createActivation(const LayerBuild& build, Activation kind, float alpha) {
    return std::make_unique<ActivationLayer>(build.backend, kind, alpha,
                                             std::size_t(build.inputShapes[0].count()));
}

LayerOutcome inferRelu(const NodeSpec&, const std::vector<TensorShape>& inputs) {
    return sameShape(inputs[0], 1);
}

LayerOutcome inferLeakyRelu(const NodeSpec&, const std::vector<TensorShape>& inputs) {
    return sameShape(inputs[0], 2);
}

LayerOutcome inferElu(const NodeSpec&, const std::vector<TensorShape>& inputs) {
    return sameShape(inputs[0], 3);
}

LayerOutcome inferSilu(const NodeSpec&, const std::vector<TensorShape>& inputs) {
    return sameShape(inputs[0], 4);
}

std::unique_ptr<Layer> createRelu(const LayerBuild& build) {
    return createActivation(build, Activation::Relu, 0.0f);
}

std::unique_ptr<Layer> createLeakyRelu(const LayerBuild& build) {
    return createActivation(build, Activation::LeakyRelu, float(floatParam(build.node, "alpha")));
}

std::unique_ptr<Layer> createElu(const LayerBuild& build) {
    return createActivation(build, Activation::Elu, float(floatParam(build.node, "alpha")));
}

std::unique_ptr<Layer> createSilu(const LayerBuild& build) {
    return createActivation(build, Activation::Silu, 0.0f);
}

// Every activation: weights feeding it get He initialisation, and the class scores pass
// through it on the way to the output.
LayerType activationType(LayerTypeInfo info) {
    LayerType type;
    type.info = std::move(info);
    type.traits.isActivation = true;
    type.traits.passesClassScoresThrough = true;
    return type;
}

// Element-wise: the value keeps its rank.
void exportRelu(const NodeSpec&, OnnxGraphBuilder& graph) {
    graph.addResult("Relu", {graph.input(0)}, graph.rankOf(graph.input(0)));
}

void exportLeakyRelu(const NodeSpec& node, OnnxGraphBuilder& graph) {
    graph.addResult("LeakyRelu", {graph.input(0)}, graph.rankOf(graph.input(0)),
                    {{"alpha", float(floatParam(node, "alpha"))}});
}

void exportElu(const NodeSpec& node, OnnxGraphBuilder& graph) {
    graph.addResult("Elu", {graph.input(0)}, graph.rankOf(graph.input(0)),
                    {{"alpha", float(floatParam(node, "alpha"))}});
}

// Opset 13 has no SiLU op: x · Sigmoid(x).
void exportSilu(const NodeSpec&, OnnxGraphBuilder& graph) {
    const OnnxRank rank = graph.rankOf(graph.input(0));
    const std::string sigmoid = graph.addStep("sigmoid", "Sigmoid", {graph.input(0)}, rank);
    graph.addResult("Mul", {graph.input(0), sigmoid}, rank);
}

}  // namespace

LayerType reluLayerType() {
    LayerType type = activationType({"ReLU", "Activation", 1, 1, {}, "max(x, 0)."});
    type.traits.isRelu = true;
    type.inferShape = inferRelu;
    type.create = createRelu;
    type.exportOnnx = exportRelu;
    return type;
}

LayerType leakyReluLayerType() {
    LayerType type = activationType(
        {"LeakyReLU", "Activation", 1, 1,
         {{"alpha", "float", 0.01, "", 0, 1, "slope for negative inputs"}},
         "x for x > 0, alpha·x otherwise."});
    type.inferShape = inferLeakyRelu;
    type.create = createLeakyRelu;
    type.exportOnnx = exportLeakyRelu;
    return type;
}

LayerType eluLayerType() {
    LayerType type = activationType(
        {"ELU", "Activation", 1, 1,
         {{"alpha", "float", 1.0, "", 0, 10, "value approached for very negative inputs is -alpha"}},
         "x for x > 0, alpha·(exp(x) - 1) otherwise."});
    type.inferShape = inferElu;
    type.create = createElu;
    type.exportOnnx = exportElu;
    return type;
}

LayerType siluLayerType() {
    LayerType type = activationType(
        {"SiLU", "Activation", 1, 1, {}, "x·sigmoid(x) (swish): smooth, slightly negative below 0."});
    type.inferShape = inferSilu;
    type.create = createSilu;
    type.exportOnnx = exportSilu;
    return type;
}

}  // namespace cnnstudio
