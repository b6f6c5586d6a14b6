// Backend's default implementations: activation movers for backends that store activations as
// fp32 NCHW, and the unfused inference chain.
#include "cnnstudio/backend.h"

namespace cnnstudio {

void Backend::uploadActivations(const TensorShape& shape, const float* hostSource,
                                float* destination) {
    upload(destination, hostSource, std::size_t(shape.count()) * sizeof(float));
}

void Backend::downloadActivations(const TensorShape& shape, const float* source,
                                  float* hostDestination) {
    download(hostDestination, source, std::size_t(shape.count()) * sizeof(float));
}

void Backend::flattenForward(const TensorShape& shape, const float* x, float* y) {
    copy(y, x, activationBytes(std::size_t(shape.count())));
}

void Backend::flattenBackward(const TensorShape& shape, const float* dy, float* dx) {
    copy(dx, dy, activationBytes(std::size_t(shape.count())));
}

void Backend::convBatchNormReluInference(const ConvGeometry& g, const float* x, const float* w,
                                         const float* bias, const BatchNormGeometry& bn,
                                         const float* gamma, const float* beta,
                                         const float* runningMean, const float* runningVar,
                                         float* y) {
    convForward(g, x, w, bias, y);
    batchNormForwardInference(bn, y, gamma, beta, runningMean, runningVar, y);
    activationForward(Activation::Relu, 0.0f, y, y, std::size_t(g.outputCount()));
}

}  // namespace cnnstudio
