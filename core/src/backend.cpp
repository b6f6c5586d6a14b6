// Backend's default implementations: activation movers for backends that store activations as
// fp32 NCHW, and the unfused chains (inference conv + batch norm + ReLU, training batch norm +
// ReLU).
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

void Backend::batchNormReluForwardTraining(const BatchNormGeometry& g, const float* x,
                                           const float* gamma, const float* beta, float* z,
                                           float* y, float* runningMean, float* runningVar,
                                           float* savedMean, float* savedInvStd) {
    batchNormForwardTraining(g, x, gamma, beta, z, runningMean, runningVar, savedMean, savedInvStd);
    activationForward(Activation::Relu, 0.0f, z, y, std::size_t(g.count()));
}

void Backend::batchNormReluBackward(const BatchNormGeometry& g, const float* x, const float* y,
                                    const float* dy, const float* gamma, const float*,
                                    const float* savedMean, const float* savedInvStd, float* dz,
                                    float* dx, float* dgamma, float* dbeta) {
    activationBackward(Activation::Relu, 0.0f, y, y, dy, dz, std::size_t(g.count()));
    batchNormBackward(g, x, dz, gamma, savedMean, savedInvStd, dx, dgamma, dbeta);
}

}  // namespace cnnstudio
