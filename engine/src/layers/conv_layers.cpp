// Conv2D and SeparableConv2D (a depthwise convolution followed by a 1x1 pointwise one).
#include "layers/layer_makers.h"
#include "spec/layer_params.h"

namespace cnnstudio {
namespace {

ConvGeometry convGeometry(const TensorShape& in, const TensorShape& out, SpatialPair kernel,
                          SpatialPair stride, SpatialPair padding, int groups) {
    ConvGeometry g;
    g.batch = in.batch;
    g.inChannels = in.channels, g.inHeight = in.height, g.inWidth = in.width;
    g.outChannels = out.channels, g.outHeight = out.height, g.outWidth = out.width;
    g.kernelHeight = kernel.height, g.kernelWidth = kernel.width;
    g.strideHeight = stride.height, g.strideWidth = stride.width;
    g.padHeight = padding.height, g.padWidth = padding.width;
    g.groups = groups;
    return g;
}

std::vector<BufferRequest> convRequests(const ConvGeometry& g, bool bias, const std::string& prefix,
                                        Initialisation init) {
    std::int64_t receptive = std::int64_t(g.kernelHeight) * g.kernelWidth;
    std::int64_t fanIn = receptive * (g.inChannels / g.groups);
    std::int64_t fanOut = receptive * (g.outChannels / g.groups);
    std::vector<BufferRequest> requests{
        {prefix + "weight",
         {g.outChannels, g.inChannels / g.groups, g.kernelHeight, g.kernelWidth},
         init, fanIn, fanOut}};
    if (bias) requests.push_back({prefix + "bias", {g.outChannels}, Initialisation::Zeros});
    return requests;
}

// y = conv(x, weight) + bias. weight (filters, C/groups, kh, kw).
class Conv2DLayer : public Layer {
public:
    Conv2DLayer(Backend& backend, const NodeSpec& node, const TensorShape& in,
                const TensorShape& out, Initialisation init);
    std::vector<BufferRequest> parameterRequests() const override;
    void bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
              const std::vector<float*>& state) override;
    void forward(Phase phase, const LayerIo& io, const StepScalars* step) override;
    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override;
    std::optional<FusableConv> fusableConv() const override {
        return FusableConv{geometry_, weight_, bias_};
    }

private:
    Backend& backend_;
    Initialisation init_;
    ConvGeometry geometry_;
    bool hasBias_ = true;
    float *weight_ = nullptr, *weightGradient_ = nullptr, *bias_ = nullptr, *biasGradient_ = nullptr;
};

// Depthwise (C, 1, kh, kw), no bias, into a middle buffer (N, C, H', W'); then pointwise
// (filters, C, 1, 1) with the optional bias.
class SeparableConv2DLayer : public Layer {
public:
    SeparableConv2DLayer(Backend& backend, const NodeSpec& node, const TensorShape& in,
                         const TensorShape& out, Initialisation init);
    std::vector<BufferRequest> parameterRequests() const override;
    void bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
              const std::vector<float*>& state) override;
    void forward(Phase phase, const LayerIo& io, const StepScalars* step) override;
    void backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) override;

private:
    Backend& backend_;
    Initialisation init_;
    ConvGeometry depthwise_, pointwise_;
    bool hasBias_ = true;
    Tensor middle_, middleGradient_;
    float *depthwiseWeight_ = nullptr, *depthwiseGradient_ = nullptr;
    float *pointwiseWeight_ = nullptr, *pointwiseGradient_ = nullptr;
    float *bias_ = nullptr, *biasGradient_ = nullptr;
};

Conv2DLayer::Conv2DLayer(Backend& backend, const NodeSpec& node, const TensorShape& in,
                         const TensorShape& out, Initialisation init)
    : backend_(backend), init_(init) {
    ConvSettings settings = convSettings(node);
    geometry_ = convGeometry(in, out, settings.kernel, settings.stride, settings.padding, settings.groups);
    hasBias_ = settings.bias;
}

std::vector<BufferRequest> Conv2DLayer::parameterRequests() const {
    return convRequests(geometry_, hasBias_, "", init_);
}

void Conv2DLayer::bind(const std::vector<float*>& parameters, const std::vector<float*>& gradients,
                       const std::vector<float*>&) {
    weight_ = parameters[0], weightGradient_ = gradients[0];
    if (hasBias_) bias_ = parameters[1], biasGradient_ = gradients[1];
}

void Conv2DLayer::forward(Phase, const LayerIo& io, const StepScalars*) {
    backend_.convForward(geometry_, io.inputs[0], weight_, bias_, io.output);
}

void Conv2DLayer::backward(const LayerIo& io, const float* dy, const std::vector<float*>& dx) {
    backend_.convBackwardFilter(geometry_, io.inputs[0], dy, weightGradient_, biasGradient_);
    if (dx[0]) backend_.convBackwardData(geometry_, dy, weight_, dx[0]);
}

SeparableConv2DLayer::SeparableConv2DLayer(Backend& backend, const NodeSpec& node,
                                           const TensorShape& in, const TensorShape& out,
                                           Initialisation init)
    : backend_(backend), init_(init) {
    ConvSettings settings = convSettings(node);
    TensorShape middle{in.batch, in.channels, out.height, out.width};
    depthwise_ = convGeometry(in, middle, settings.kernel, settings.stride, settings.padding, in.channels);
    pointwise_ = convGeometry(middle, out, {1, 1}, {1, 1}, {0, 0}, 1);
    hasBias_ = settings.bias;
    middle_ = Tensor::activations(backend, middle);
    middleGradient_ = Tensor::activations(backend, middle);
}

std::vector<BufferRequest> SeparableConv2DLayer::parameterRequests() const {
    auto requests = convRequests(depthwise_, false, "depthwise.", Initialisation::Glorot);
    for (auto& request : convRequests(pointwise_, hasBias_, "pointwise.", init_))
        requests.push_back(request);
    return requests;
}

void SeparableConv2DLayer::bind(const std::vector<float*>& parameters,
                                const std::vector<float*>& gradients, const std::vector<float*>&) {
    depthwiseWeight_ = parameters[0], depthwiseGradient_ = gradients[0];
    pointwiseWeight_ = parameters[1], pointwiseGradient_ = gradients[1];
    if (hasBias_) bias_ = parameters[2], biasGradient_ = gradients[2];
}

void SeparableConv2DLayer::forward(Phase, const LayerIo& io, const StepScalars*) {
    backend_.convForward(depthwise_, io.inputs[0], depthwiseWeight_, nullptr, middle_.data());
    backend_.convForward(pointwise_, middle_.data(), pointwiseWeight_, bias_, io.output);
}

void SeparableConv2DLayer::backward(const LayerIo& io, const float* dy,
                                    const std::vector<float*>& dx) {
    backend_.convBackwardFilter(pointwise_, middle_.data(), dy, pointwiseGradient_, biasGradient_);
    backend_.convBackwardData(pointwise_, dy, pointwiseWeight_, middleGradient_.data());
    backend_.convBackwardFilter(depthwise_, io.inputs[0], middleGradient_.data(),
                                depthwiseGradient_, nullptr);
    if (dx[0])
        backend_.convBackwardData(depthwise_, middleGradient_.data(), depthwiseWeight_, dx[0]);
}

}  // namespace

std::unique_ptr<Layer> makeConv2D(Backend& backend, const NodeSpec& node, const Shapes& in,
                                  const TensorShape& out, Initialisation init) {
    return std::make_unique<Conv2DLayer>(backend, node, in[0], out, init);
}

std::unique_ptr<Layer> makeSeparableConv2D(Backend& backend, const NodeSpec& node, const Shapes& in,
                                           const TensorShape& out, Initialisation init) {
    return std::make_unique<SeparableConv2DLayer>(backend, node, in[0], out, init);
}

}  // namespace cnnstudio
