// BatchNorm2D: batch statistics in training (running statistics updated), running statistics
// in evaluation. gamma and beta are trained; running mean and variance are network state.
//
// x (N, C, H, W) -> y (N, C, H, W); parameters 2·C (gamma, beta). FLOPs 2 per element:
// normalise and affine folded into one multiply-add, as at inference (the training-time
// statistics are not counted).
#include "layers/layer_params.h"
#include "layers/layer_type.h"
#include "layers/shape_rules.h"
#include "onnx/onnx_graph_builder.h"

namespace cnnstudio {
namespace {

LayerOutcome inferBatchNorm2D(const NodeSpec&, const std::vector<TensorShape>& inputs) {
    LayerOutcome outcome = sameShape(inputs[0], 2);
    outcome.parameters = 2 * std::int64_t(inputs[0].channels);
    return outcome;
}

class BatchNormLayer : public Layer {
public:
    BatchNormLayer(Backend& backend, const NodeSpec& node, const TensorShape& in)
        : backend_(backend),
          savedMean_(backend, {1, in.channels, 1, 1}),
          savedInvStd_(backend, {1, in.channels, 1, 1}),
          zeros_(backend, {1, in.channels, 1, 1}) {
        backend_.fill(zeros_.data(), 0.0f, std::size_t(in.channels));
        geometry_.batch = in.batch;
        geometry_.channels = in.channels;
        geometry_.spatial = in.height * in.width;
        geometry_.epsilon = float(floatParam(node, "epsilon"));
        geometry_.momentum = float(floatParam(node, "momentum"));
    }

    std::vector<BufferRequest> parameterRequests() const override {
        return {{"weight", {geometry_.channels}, Initialisation::Ones},
                {"bias", {geometry_.channels}, Initialisation::Zeros}};
    }
    std::vector<BufferRequest> stateRequests() const override {
        return {{"running_mean", {geometry_.channels}, Initialisation::Zeros},
                {"running_var", {geometry_.channels}, Initialisation::Ones}};
    }

    void bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
              const std::vector<float*>& state) override {
        gamma_ = parameters[0], beta_ = parameters[1];
        gammaGradient_ = gradients[0], betaGradient_ = gradients[1];
        runningMean_ = state[0], runningVar_ = state[1];
    }

    void forward(Phase phase, const LayerIo& io, const StepScalars*) override {
        if (phase == Phase::Training)
            backend_.batchNormForwardTraining(geometry_, io.inputs[0], gamma_, beta_, io.output,
                                              runningMean_, runningVar_, savedMean_.data(),
                                              savedInvStd_.data());
        else
            backend_.batchNormForwardInference(geometry_, io.inputs[0], gamma_, beta_,
                                               runningMean_, runningVar_, io.output);
    }

    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override {
        backend_.batchNormBackward(geometry_, io.inputs[0], dy, gamma_, savedMean_.data(),
                                   savedInvStd_.data(), dx[0], gammaGradient_, betaGradient_);
    }

    // Inference computes y = gamma (x - runningMean) / sqrt(runningVar + eps) + beta, so
    // dx = gamma dy / sqrt(runningVar + eps): the inference op itself, run on dy with a zero
    // mean and a zero beta.
    void backwardInference(const LayerIo&, const float* dy, const std::vector<float*>& dx) override {
        backend_.batchNormForwardInference(geometry_, dy, gamma_, zeros_.data(), zeros_.data(),
                                           runningVar_, dx[0]);
    }

    bool alwaysWritesInputGradients() const override { return true; }

    void forwardWithRelu(const LayerIo& io, float* reluOutput) override {
        backend_.batchNormReluForwardTraining(geometry_, io.inputs[0], gamma_, beta_, io.output,
                                              reluOutput, runningMean_, runningVar_,
                                              savedMean_.data(), savedInvStd_.data());
    }

    void backwardWithRelu(const LayerIo& io, const float* reluOutput,
                          const float* reluOutputGradient, float* innerGradient,
                          const std::vector<float*>& dx) override {
        backend_.batchNormReluBackward(geometry_, io.inputs[0], reluOutput, reluOutputGradient,
                                       gamma_, beta_, savedMean_.data(), savedInvStd_.data(),
                                       innerGradient, dx[0], gammaGradient_, betaGradient_);
    }

    void forwardWithConvRelu(const LayerIo& io, const FusableConv& conv, const float* convInput,
                             float* convOutput, float* reluOutput) override {
        backend_.convBatchNormReluForwardTraining(conv.geometry, convInput, conv.weight, conv.bias,
                                                  geometry_, gamma_, beta_, convOutput, io.output,
                                                  reluOutput, runningMean_, runningVar_,
                                                  savedMean_.data(), savedInvStd_.data());
    }

    void backwardWithConvRelu(const LayerIo& io, const FusableConv& conv, const float* convInput,
                              const float* reluOutput, const float* reluOutputGradient,
                              float* innerGradient, float* convOutputGradient) override {
        backend_.convBatchNormReluBackward(conv.geometry, convInput, conv.weight, conv.bias,
                                           geometry_, io.inputs[0], reluOutput, reluOutputGradient,
                                           gamma_, beta_, savedMean_.data(), savedInvStd_.data(),
                                           innerGradient, convOutputGradient, conv.weightGradient,
                                           conv.biasGradient, gammaGradient_, betaGradient_);
    }

    void forwardWithReluMaxPool(const LayerIo& io, float* reluOutput, const PoolGeometry& pool,
                                float* poolOutput) override {
        backend_.batchNormReluMaxPoolForwardTraining(geometry_, pool, io.inputs[0], gamma_, beta_,
                                                     io.output, reluOutput, poolOutput,
                                                     runningMean_, runningVar_, savedMean_.data(),
                                                     savedInvStd_.data());
    }

    void backwardWithReluMaxPool(const LayerIo& io, const float* reluOutput,
                                 const PoolGeometry& pool, const float* poolOutput,
                                 const float* poolOutputGradient, float* reluOutputGradient,
                                 float* innerGradient, const std::vector<float*>& dx) override {
        backend_.batchNormReluMaxPoolBackward(geometry_, pool, io.inputs[0], reluOutput,
                                              poolOutput, poolOutputGradient, gamma_, beta_,
                                              savedMean_.data(), savedInvStd_.data(),
                                              reluOutputGradient, innerGradient, dx[0],
                                              gammaGradient_, betaGradient_);
    }

    std::optional<FusableBatchNorm> fusableBatchNorm() const override {
        return FusableBatchNorm{geometry_, gamma_, beta_, runningMean_, runningVar_};
    }

private:
    Backend& backend_;
    BatchNormGeometry geometry_;
    Tensor savedMean_, savedInvStd_;
    Tensor zeros_;  // the mean and beta of backwardInference
    float *gamma_ = nullptr, *beta_ = nullptr, *gammaGradient_ = nullptr, *betaGradient_ = nullptr;
    float *runningMean_ = nullptr, *runningVar_ = nullptr;
};

std::unique_ptr<Layer> createBatchNorm2D(const LayerBuild& build) {
    return std::make_unique<BatchNormLayer>(build.backend, build.node, build.inputShapes[0]);
}

// Inference form: the running statistics, as batchNormForwardInference uses them.
void exportBatchNorm2D(const NodeSpec& node, OnnxGraphBuilder& graph) {
    graph.addResult("BatchNormalization",
                    {graph.imageInput(0), graph.weight("weight"), graph.weight("bias"),
                     graph.weight("running_mean"), graph.weight("running_var")},
                    OnnxRank::Image, {{"epsilon", float(floatParam(node, "epsilon"))}});
}

}  // namespace

LayerType batchNorm2dLayerType() {
    LayerType type;
    type.info = {"BatchNorm2D", "Normalisation", 1, 1,
                 {{"epsilon", "float", 1e-5, "", 1e-12, 1,
                   "added to the variance before the square root"},
                  {"momentum", "float", 0.1, "", 0, 1,
                   "weight of the current batch in the running statistics (PyTorch convention)"}},
                 "Batch normalisation per channel, with a learned scale and shift."};
    type.traits.transparentToInitialisation = true;
    type.traits.absorbsFollowingRelu = true;
    type.traits.passesClassScoresThrough = true;
    type.inferShape = inferBatchNorm2D;
    type.create = createBatchNorm2D;
    type.exportOnnx = exportBatchNorm2D;
    return type;
}

}  // namespace cnnstudio
