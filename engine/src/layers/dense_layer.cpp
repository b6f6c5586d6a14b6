// Dense: y (N, units) = x (N, C*H*W) weight^T + bias; the input is read as flattened, in NCHW
// element order. A backend that stores images channels-last flattens them first (into scratch).
#include "layers/layer_makers.h"
#include "spec/layer_params.h"

namespace cnnstudio {
namespace {

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

}  // namespace

std::unique_ptr<Layer> makeDense(Backend& backend, const NodeSpec& node, const Shapes& in,
                                 const TensorShape& out, Initialisation init) {
    return std::make_unique<DenseLayer>(backend, node, in[0], out, init);
}

}  // namespace cnnstudio
