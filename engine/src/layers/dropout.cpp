// Dropout: x (N, C, H, W) -> y of the same shape. Training: y = x * mask, mask = keep ?
// 1 / (1 - rate) : 0 (inverted dropout), a fresh mask every step from the layer's seed;
// evaluation: y = x. FLOPs 1 per element.
#include "layers/layer_params.h"
#include "layers/layer_type.h"
#include "layers/shape_rules.h"
#include "onnx/onnx_graph_builder.h"

namespace cnnstudio {
namespace {

// A rate of 1 passes its range check (bounds are inclusive) but would drop everything.
std::string checkDropoutParams(const NodeSpec& node) {
    if (floatParam(node, "rate") >= 1.0)
        return "parameter 'rate' is " + paramValue(node, "rate").dump() +
               "; it must be below 1 (a rate of 1 would drop every activation)";
    return {};
}

LayerOutcome inferDropout(const NodeSpec&, const std::vector<TensorShape>& inputs) {
    return sameShape(inputs[0], 1);
}

class DropoutLayer : public Layer {
public:
    DropoutLayer(Backend& backend, float rate, const TensorShape& shape, std::uint64_t seed)
        : backend_(backend), rate_(rate), seed_(seed), count_(std::size_t(shape.count())),
          mask_(Tensor::activations(backend, shape)) {}

    void forward(Phase phase, const LayerIo& io, const StepScalars* step) override {
        if (phase == Phase::Training) {
            backend_.dropoutMask(rate_, seed_, step, mask_.data(), count_);
            backend_.multiply(io.inputs[0], mask_.data(), io.output, count_);
        } else {
            backend_.copy(io.output, io.inputs[0], backend_.activationBytes(count_));
        }
    }

    void backward(const LayerIo&, const float* dy, const std::vector<float*>& dx) override {
        if (dx[0]) backend_.multiply(dy, mask_.data(), dx[0], count_);
    }

    // Inference passes x through unchanged, so the gradient passes through too.
    void backwardInference(const LayerIo&, const float* dy, const std::vector<float*>& dx) override {
        if (dx[0]) backend_.copy(dx[0], dy, backend_.activationBytes(count_));
    }

private:
    Backend& backend_;
    float rate_;
    std::uint64_t seed_;
    std::size_t count_;
    Tensor mask_;
};

std::unique_ptr<Layer> createDropout(const LayerBuild& build) {
    return std::make_unique<DropoutLayer>(build.backend, float(floatParam(build.node, "rate")),
                                          build.inputShapes[0], build.seed);
}

// The identity at inference: no op at all.
void exportDropout(const NodeSpec&, OnnxGraphBuilder& graph) { graph.passThrough(graph.input(0)); }

}  // namespace

LayerType dropoutLayerType() {
    LayerType type;
    type.info = {"Dropout", "Regularisation", 1, 1,
                 {{"rate", "float", 0.5, "", 0, 1,
                   "fraction of activations zeroed in training, in [0, 1)"}},
                 "Zeroes a random fraction of activations while training and scales the rest by "
                 "1/(1-rate); does nothing at inference."};
    type.traits.transparentToInitialisation = true;
    type.traits.passesClassScoresThrough = true;
    type.checkParams = checkDropoutParams;
    type.inferShape = inferDropout;
    type.create = createDropout;
    type.exportOnnx = exportDropout;
    return type;
}

}  // namespace cnnstudio
