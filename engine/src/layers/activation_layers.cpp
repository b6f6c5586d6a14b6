// ReLU, LeakyReLU, ELU and Dropout: elementwise layers.
#include "layers/layer_makers.h"
#include "spec/layer_params.h"

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

// Training: y = x * mask, mask = keep ? 1 / (1 - rate) : 0 (inverted dropout); evaluation: y = x.
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

private:
    Backend& backend_;
    float rate_;
    std::uint64_t seed_;
    std::size_t count_;
    Tensor mask_;
};

}  // namespace

std::unique_ptr<Layer> makeActivation(Backend& backend, const NodeSpec& node, const Shapes& in) {
    std::size_t count = std::size_t(in[0].count());
    if (node.type == "ReLU") return std::make_unique<ActivationLayer>(backend, Activation::Relu, 0.0f, count);
    if (node.type == "LeakyReLU")
        return std::make_unique<ActivationLayer>(backend, Activation::LeakyRelu,
                                                 float(floatParam(node, "alpha")), count);
    return std::make_unique<ActivationLayer>(backend, Activation::Elu, float(floatParam(node, "alpha")),
                                             count);
}

std::unique_ptr<Layer> makeDropout(Backend& backend, const NodeSpec& node, const Shapes& in,
                                   std::uint64_t seed) {
    return std::make_unique<DropoutLayer>(backend, float(floatParam(node, "rate")), in[0], seed);
}

}  // namespace cnnstudio
