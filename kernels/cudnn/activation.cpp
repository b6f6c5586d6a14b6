// cuDNN relu, elementwise over `count` floats, forward and backward. Leaky relu (cuDNN has none)
// and ELU stay ours: cuDNN 9.14's ELU backward ignores alpha below zero (it gave dy (y + 1) for
// dy (y + alpha), found by the conformance suite on an H200, 2026-11-30). SiLU stays ours as
// well, like every activation but relu: CUDNN_ACTIVATION_SWISH would be one more descriptor for a
// memory-bound elementwise op our kernel already runs on fp32 and bf16. Counts beyond a cuDNN
// tensor dimension (2^31 - 1) stay ours too, and so do bf16 activations (our kernels read and
// write bf16 directly).

#include <climits>

#include "cudnn/cudnn_backend.h"

namespace cnnstudio::kernels {
namespace {

bool cudnnRuns(Activation kind, std::size_t count, const ActivationFormat& format) {
    return kind == Activation::Relu && count > 0 && count <= std::size_t(INT_MAX) && !format.bf16;
}

}  // namespace

cudnnActivationDescriptor_t CudnnBackend::reluDescriptor() {
    if (!reluDescriptor_) reluDescriptor_ = makeActivationDescriptor(CUDNN_ACTIVATION_RELU, 0.0);
    return reluDescriptor_.get();
}

cudnnTensorDescriptor_t CudnnBackend::flatDescriptor(std::size_t count) {
    auto found = flatDescriptors_.find(count);
    if (found == flatDescriptors_.end())
        found = flatDescriptors_
                    .emplace(count, makeTensorDescriptor(CUDNN_DATA_FLOAT, 1, 1, 1, int(count)))
                    .first;
    return found->second.get();
}

void CudnnBackend::doActivationForward(Activation kind, float alpha, const float* x, float* y,
                                       std::size_t count) {
    if (!cudnnRuns(kind, count, activationFormat())) {
        CudaBackend::doActivationForward(kind, alpha, x, y, count);
        return;
    }
    activateDevice();
    cudnnTensorDescriptor_t data = flatDescriptor(count);
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnActivationForward(cudnn_, reluDescriptor(), &one,
                                                 data, x, &zero, data, y));
}

void CudnnBackend::doActivationBackward(Activation kind, float alpha, const float* x,
                                        const float* y, const float* dy, float* dx,
                                        std::size_t count) {
    if (!cudnnRuns(kind, count, activationFormat())) {
        CudaBackend::doActivationBackward(kind, alpha, x, y, dy, dx, count);
        return;
    }
    activateDevice();
    cudnnTensorDescriptor_t data = flatDescriptor(count);
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnActivationBackward(cudnn_, reluDescriptor(), &one,
                                                  data, y, data, dy, data, x, &zero, data, dx));
}

}  // namespace cnnstudio::kernels
