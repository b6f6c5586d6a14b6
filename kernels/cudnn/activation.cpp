// cuDNN activations, elementwise over `count` floats: relu and elu (alpha (exp(x) - 1) below
// zero) forward, and backward from x, y and dy. cuDNN has no leaky relu, so that one stays ours,
// as do counts beyond a cuDNN tensor dimension (2^31 - 1).

#include <bit>
#include <climits>

#include "cudnn/cudnn_backend.h"

namespace cnnstudio::kernels {
namespace {

bool cudnnRuns(Activation kind, std::size_t count) {
    return kind != Activation::LeakyRelu && count > 0 && count <= std::size_t(INT_MAX);
}

}  // namespace

cudnnActivationDescriptor_t CudnnBackend::activationDescriptor(Activation kind, float alpha) {
    // relu ignores alpha, so all relus share one descriptor.
    const float coefficient = kind == Activation::Elu ? alpha : 0.0f;
    const std::uint64_t key =
        (std::uint64_t(kind) << 32) | std::bit_cast<std::uint32_t>(coefficient);
    auto found = activationDescriptors_.find(key);
    if (found == activationDescriptors_.end()) {
        const cudnnActivationMode_t mode =
            kind == Activation::Elu ? CUDNN_ACTIVATION_ELU : CUDNN_ACTIVATION_RELU;
        found = activationDescriptors_.emplace(key, makeActivationDescriptor(mode, coefficient)).first;
    }
    return found->second.get();
}

cudnnTensorDescriptor_t CudnnBackend::flatDescriptor(std::size_t count) {
    auto found = flatDescriptors_.find(count);
    if (found == flatDescriptors_.end())
        found = flatDescriptors_
                    .emplace(count, makeTensorDescriptor(CUDNN_DATA_FLOAT, 1, 1, 1, int(count)))
                    .first;
    return found->second.get();
}

void CudnnBackend::activationForward(Activation kind, float alpha, const float* x, float* y,
                                     std::size_t count) {
    if (!cudnnRuns(kind, count)) {
        CudaBackend::activationForward(kind, alpha, x, y, count);
        return;
    }
    activateDevice();
    cudnnTensorDescriptor_t data = flatDescriptor(count);
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnActivationForward(cudnn_, activationDescriptor(kind, alpha), &one,
                                                 data, x, &zero, data, y));
}

void CudnnBackend::activationBackward(Activation kind, float alpha, const float* x,
                                      const float* y, const float* dy, float* dx,
                                      std::size_t count) {
    if (!cudnnRuns(kind, count)) {
        CudaBackend::activationBackward(kind, alpha, x, y, dy, dx, count);
        return;
    }
    activateDevice();
    cudnnTensorDescriptor_t data = flatDescriptor(count);
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnActivationBackward(cudnn_, activationDescriptor(kind, alpha), &one,
                                                  data, y, data, dy, data, x, &zero, data, dx));
}

}  // namespace cnnstudio::kernels
