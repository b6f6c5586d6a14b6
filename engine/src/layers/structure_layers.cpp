// Layers that move data without arithmetic on it: Input (the caller fills its output),
// Flatten (to NCHW element order, which the backend may not store), Add (residual sums) and
// Concat (channel concatenation).
#include "layers/layer_makers.h"

namespace cnnstudio {
namespace {

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

}  // namespace

std::unique_ptr<Layer> makeInput() { return std::make_unique<InputLayer>(); }

std::unique_ptr<Layer> makeFlatten(Backend& backend, const Shapes& in) {
    return std::make_unique<FlattenLayer>(backend, in[0]);
}

std::unique_ptr<Layer> makeAdd(Backend& backend, const Shapes& in) {
    return std::make_unique<AddLayer>(backend, std::size_t(in[0].count()), in.size());
}

std::unique_ptr<Layer> makeConcat(Backend& backend, const Shapes& in, const TensorShape& out) {
    return std::make_unique<ConcatLayer>(backend, in, out);
}

}  // namespace cnnstudio
