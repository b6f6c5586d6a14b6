// Layer: one node of the network, backend-agnostic; it only issues Backend ops.
// The network owns every buffer: a layer is told where its inputs, output, parameters and
// gradients live, and asks for scratch buffers when it is created.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/network.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio {

// He: weights feeding a ReLU-like activation. Glorot: other hidden weights. ClassScores: the
// weights producing the class scores, N(0, 0.01^2), so that the first logits are near zero (see
// Network::build). Zeros, Ones: biases, batch-norm parameters and statistics.
enum class Initialisation { He, Glorot, ClassScores, Zeros, Ones };

// A parameter or state buffer a layer needs, carved from the network's flat buffers.
struct BufferRequest {
    std::string suffix;                 // "weight", "bias", "running_mean"
    std::vector<std::int64_t> shape;
    Initialisation initialisation = Initialisation::Zeros;
    std::int64_t fanIn = 1, fanOut = 1;  // for He / Glorot
};

// What a Conv2D and a BatchNorm2D layer hand the network for the fused inference op
// (Backend::convBatchNormReluInference); pointers are valid once the layer is bound.
struct FusableConv {
    ConvGeometry geometry;
    const float* weight = nullptr;
    const float* bias = nullptr;  // null without bias
    float* weightGradient = nullptr;
    float* biasGradient = nullptr;  // null without bias
};
struct FusableBatchNorm {
    BatchNormGeometry geometry;
    const float *gamma = nullptr, *beta = nullptr, *runningMean = nullptr, *runningVar = nullptr;
};

// Pointers a layer's op calls read and write, for one batch.
struct LayerIo {
    std::vector<const float*> inputs;   // each input's output buffer
    std::vector<TensorShape> inputShapes;
    float* output = nullptr;
    TensorShape outputShape;
};

class Layer {
public:
    virtual ~Layer() = default;

    virtual std::vector<BufferRequest> parameterRequests() const { return {}; }
    virtual std::vector<BufferRequest> stateRequests() const { return {}; }
    // Called once after the flat buffers exist, in the order of the requests above.
    virtual void bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
                      const std::vector<float*>& state) {}

    virtual void forward(Phase phase, const LayerIo& io, const StepScalars* step) = 0;
    // True when backward() must write every input gradient even where nothing needs it (the
    // network input): ops such as batch-norm backward produce it together with the others.
    virtual bool alwaysWritesInputGradients() const { return false; }
    // inputGradients[i] is null where input i needs no gradient (the network input), unless
    // alwaysWritesInputGradients().
    // Writes (overwrites) every non-null input gradient and every parameter gradient.
    virtual void backward(const LayerIo& io, const float* outputGradient,
                          const std::vector<float*>& inputGradients) = 0;
    // The input gradients of forward(Phase::Inference), for explaining a prediction
    // (Network::explainLogits). The same as backward() except where inference computes another
    // function: batch norm (its running statistics) and dropout (the identity). Parameter
    // gradients may be written or not.
    virtual void backwardInference(const LayerIo& io, const float* outputGradient,
                                   const std::vector<float*>& inputGradients) {
        backward(io, outputGradient, inputGradients);
    }

    // Set by the layers the network can fuse at inference.
    virtual std::optional<FusableConv> fusableConv() const { return std::nullopt; }
    virtual std::optional<FusableBatchNorm> fusableBatchNorm() const { return std::nullopt; }
    // Set by max pooling, which training fuses after a batch norm and its ReLU.
    virtual std::optional<PoolGeometry> fusableMaxPool() const { return std::nullopt; }

    // Training fusion with the ReLU that alone reads this layer's output, for the types whose
    // record says absorbsFollowingRelu (batch norm): forward writes the ReLU's output
    // `reluOutput` (io.output is room for the inner tensor); backward takes the ReLU's output
    // gradient, with `innerGradient` room for the gradient between.
    virtual void forwardWithRelu(const LayerIo&, float* /*reluOutput*/) {}
    virtual void backwardWithRelu(const LayerIo&, const float* /*reluOutput*/,
                                  const float* /*reluOutputGradient*/, float* /*innerGradient*/,
                                  const std::vector<float*>& /*inputGradients*/) {}
    // The same with the convolution `conv` before it, which alone reads the network's input
    // `convInput` and is alone read by this layer (io.inputs[0] is the convolution's output,
    // `convOutput` the same as writable room): forward writes the ReLU's output; backward also
    // writes the convolution's weight gradients, with `convOutputGradient` room for the gradient
    // of its output, and no gradient for the network's input.
    virtual void forwardWithConvRelu(const LayerIo&, const FusableConv& /*conv*/,
                                     const float* /*convInput*/, float* /*convOutput*/,
                                     float* /*reluOutput*/) {}
    virtual void backwardWithConvRelu(const LayerIo&, const FusableConv& /*conv*/,
                                      const float* /*convInput*/, const float* /*reluOutput*/,
                                      const float* /*reluOutputGradient*/,
                                      float* /*innerGradient*/, float* /*convOutputGradient*/) {}
    // The same with the max pooling `pool` that alone reads the ReLU's output: forward writes
    // the pooling's output `poolOutput` (reluOutput is room for the tensor between); backward
    // takes the pooling's output and output gradient, with `reluOutputGradient` room too.
    virtual void forwardWithReluMaxPool(const LayerIo&, float* /*reluOutput*/,
                                        const PoolGeometry& /*pool*/, float* /*poolOutput*/) {}
    virtual void backwardWithReluMaxPool(const LayerIo&, const float* /*reluOutput*/,
                                         const PoolGeometry& /*pool*/,
                                         const float* /*poolOutput*/,
                                         const float* /*poolOutputGradient*/,
                                         float* /*reluOutputGradient*/, float* /*innerGradient*/,
                                         const std::vector<float*>& /*inputGradients*/) {}
};

// Creates the layer for a node that shape inference accepted, through its type's registry
// record (layer_registry.cpp). `inputShapes` and `outputShape`
// carry the batch; `init` is the weight initialisation; `seed` seeds the layer's dropout masks.
std::unique_ptr<Layer> createLayer(Backend& backend, const NodeSpec& node,
                                   const std::vector<TensorShape>& inputShapes,
                                   const TensorShape& outputShape, Initialisation init,
                                   std::uint64_t seed);

}  // namespace cnnstudio
