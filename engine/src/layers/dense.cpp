// Dense: y (N, units) = x (N, C*H*W) weight^T + bias; the input is read as flattened, in NCHW
// element order. A backend that stores images channels-last flattens them first (into scratch).
// The output shape is (units, 1, 1); parameters in·units (+ units with bias); FLOPs
// 2 · in·units (+ units with bias), in = C·H·W.
#include "layers/layer_params.h"
#include "layers/layer_type.h"
#include "layers/shape_rules.h"
#include "onnx/onnx_graph_builder.h"

namespace cnnstudio {
namespace {

LayerOutcome inferDense(const NodeSpec& node, const std::vector<TensorShape>& inputs) {
    LayerOutcome outcome;
    const std::int64_t in = inputs[0].countPerImage();
    const std::int64_t units = intParam(node, "units");
    const bool bias = boolParam(node, "bias");
    outcome.outputShape = {1, int(units), 1, 1};
    outcome.parameters = in * units + (bias ? units : 0);
    outcome.forwardFlops = 2 * in * units + (bias ? units : 0);
    return outcome;
}

class DenseLayer : public Layer {
public:
    DenseLayer(Backend& backend, const NodeSpec& node, const TensorShape& in, const TensorShape& out,
               Initialisation init)
        : backend_(backend), init_(init), hasBias_(boolParam(node, "bias")) {
        geometry_.batch = in.batch;
        geometry_.inFeatures = int(in.countPerImage());
        geometry_.outFeatures = int(out.countPerImage());
        if (backend.activationFormat().channelsLast && in.height * in.width > 1) {
            imageShape_ = in;
            flat_ = Tensor::activations(backend, {in.batch, geometry_.inFeatures, 1, 1});
            flatGradient_ = Tensor::activations(backend, flat_.shape());
        }
    }

    std::vector<BufferRequest> parameterRequests() const override {
        std::vector<BufferRequest> requests{{"weight",
                                             {geometry_.outFeatures, geometry_.inFeatures},
                                             init_, geometry_.inFeatures, geometry_.outFeatures}};
        if (hasBias_) requests.push_back({"bias", {geometry_.outFeatures}, Initialisation::Zeros});
        return requests;
    }

    void bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
              const std::vector<float*>&) override {
        weight_ = parameters[0], weightGradient_ = gradients[0];
        if (hasBias_) bias_ = parameters[1], biasGradient_ = gradients[1];
    }

    void forward(Phase, const LayerIo& io, const StepScalars*) override {
        backend_.denseForward(geometry_, flatInput(io), weight_, bias_, io.output);
    }

    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override {
        backend_.denseBackwardWeights(geometry_, flat_.empty() ? io.inputs[0] : flat_.data(), dy,
                                      weightGradient_, biasGradient_);
        if (!dx[0]) return;
        if (flat_.empty()) {
            backend_.denseBackwardData(geometry_, dy, weight_, dx[0]);
        } else {
            backend_.denseBackwardData(geometry_, dy, weight_, flatGradient_.data());
            backend_.flattenBackward(imageShape_, flatGradient_.data(), dx[0]);
        }
    }

private:
    const float* flatInput(const LayerIo& io) {
        if (flat_.empty()) return io.inputs[0];
        backend_.flattenForward(imageShape_, io.inputs[0], flat_.data());
        return flat_.data();
    }

    Backend& backend_;
    Initialisation init_;
    bool hasBias_;
    DenseGeometry geometry_;
    TensorShape imageShape_;
    Tensor flat_, flatGradient_;  // only for a channels-last image input
    float *weight_ = nullptr, *weightGradient_ = nullptr, *bias_ = nullptr, *biasGradient_ = nullptr;
};

std::unique_ptr<Layer> createDense(const LayerBuild& build) {
    return std::make_unique<DenseLayer>(build.backend, build.node, build.inputShapes[0],
                                        build.outputShape, build.initialisation);
}

// y = x · weightᵀ + bias over the flattened input: Gemm with transB, weight (units, inputs) as ours.
void exportDense(const NodeSpec& node, OnnxGraphBuilder& graph) {
    std::vector<std::string> inputs{graph.matrixInput(0), graph.weight("weight")};
    if (boolParam(node, "bias")) inputs.push_back(graph.weight("bias"));
    graph.addResult("Gemm", inputs, OnnxRank::Matrix, {{"transB", std::int64_t(1)}});
}

}  // namespace

LayerType denseLayerType() {
    LayerType type;
    type.info = {"Dense", "Dense", 1, 1, {channelsParam("units", "number of outputs"), biasParam()},
                 "Fully connected layer (PyTorch's Linear) over the flattened input: C·H·W inputs."};
    type.traits.hasWeights = true;
    type.traits.classCountParam = "units";
    type.inferShape = inferDense;
    type.create = createDense;
    type.exportOnnx = exportDense;
    return type;
}

}  // namespace cnnstudio
