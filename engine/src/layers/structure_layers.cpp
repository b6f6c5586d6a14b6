// Layers that move data without arithmetic on it: Input and Flatten (a copy; NCHW is already
// flat per image), Add (residual sums) and Concat (channel concatenation).
#include "layers/layer_makers.h"

namespace cnnstudio {
namespace {

class CopyLayer : public Layer {
public:
    CopyLayer(Backend& backend, std::size_t count) : backend_(backend), bytes_(count * sizeof(float)) {}

    void forward(Phase, const LayerIo& io, const StepScalars*) override {
        if (!io.inputs.empty()) backend_.copy(io.output, io.inputs[0], bytes_);
    }

    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override {
        if (!dx.empty() && dx[0]) backend_.copy(dx[0], dy, bytes_);
    }

private:
    Backend& backend_;
    std::size_t bytes_;
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
            if (gradient) backend_.copy(gradient, dy, count_ * sizeof(float));
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

std::unique_ptr<Layer> makeCopy(Backend& backend, const Shapes& in) {
    return std::make_unique<CopyLayer>(backend, in.empty() ? 0 : std::size_t(in[0].count()));
}

std::unique_ptr<Layer> makeAdd(Backend& backend, const Shapes& in) {
    return std::make_unique<AddLayer>(backend, std::size_t(in[0].count()), in.size());
}

std::unique_ptr<Layer> makeConcat(Backend& backend, const Shapes& in, const TensorShape& out) {
    return std::make_unique<ConcatLayer>(backend, in, out);
}

}  // namespace cnnstudio
