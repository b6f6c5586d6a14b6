// Backend's default activation movers, for backends that store activations as fp32 NCHW.
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

}  // namespace cnnstudio
