// Owning handles for cuDNN's legacy descriptors, so that a cached plan releases what it created
// and a throw halfway through building one leaks nothing. Descriptors are host objects: creating
// and setting them never touches the device, so it is legal during stream capture.
#pragma once

#include <memory>

#include <cudnn.h>

#include "cudnn/cudnn_check.h"

namespace cnnstudio::kernels {

struct TensorDescriptorDeleter {
    void operator()(cudnnTensorStruct* d) const noexcept { cudnnDestroyTensorDescriptor(d); }
};
struct FilterDescriptorDeleter {
    void operator()(cudnnFilterStruct* d) const noexcept { cudnnDestroyFilterDescriptor(d); }
};
struct ConvolutionDescriptorDeleter {
    void operator()(cudnnConvolutionStruct* d) const noexcept { cudnnDestroyConvolutionDescriptor(d); }
};
struct PoolingDescriptorDeleter {
    void operator()(cudnnPoolingStruct* d) const noexcept { cudnnDestroyPoolingDescriptor(d); }
};
struct ActivationDescriptorDeleter {
    void operator()(cudnnActivationStruct* d) const noexcept { cudnnDestroyActivationDescriptor(d); }
};

using TensorDescriptor = std::unique_ptr<cudnnTensorStruct, TensorDescriptorDeleter>;
using FilterDescriptor = std::unique_ptr<cudnnFilterStruct, FilterDescriptorDeleter>;
using ConvolutionDescriptor = std::unique_ptr<cudnnConvolutionStruct, ConvolutionDescriptorDeleter>;
using PoolingDescriptor = std::unique_ptr<cudnnPoolingStruct, PoolingDescriptorDeleter>;
using ActivationDescriptor = std::unique_ptr<cudnnActivationStruct, ActivationDescriptorDeleter>;

// A packed tensor (n, c, h, w) of `type`, stored NCHW or, with CUDNN_TENSOR_NHWC, channels last.
inline TensorDescriptor makeTensorDescriptor(cudnnDataType_t type, int n, int c, int h, int w,
                                             cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW) {
    cudnnTensorDescriptor_t raw = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnCreateTensorDescriptor(&raw));
    TensorDescriptor descriptor(raw);
    CNNSTUDIO_CUDNN_CHECK(cudnnSetTensor4dDescriptor(raw, format, type, n, c, h, w));
    return descriptor;
}

// Filters (k, c, r, s): KCRS order, which is PyTorch's (out, in/groups, kh, kw), or with
// CUDNN_TENSOR_NHWC the channels-last KRSC.
inline FilterDescriptor makeFilterDescriptor(cudnnDataType_t type, int k, int c, int r, int s,
                                             cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW) {
    cudnnFilterDescriptor_t raw = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnCreateFilterDescriptor(&raw));
    FilterDescriptor descriptor(raw);
    CNNSTUDIO_CUDNN_CHECK(cudnnSetFilter4dDescriptor(raw, type, format, k, c, r, s));
    return descriptor;
}

inline ConvolutionDescriptor makeConvolutionDescriptor() {
    cudnnConvolutionDescriptor_t raw = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&raw));
    return ConvolutionDescriptor(raw);
}

inline PoolingDescriptor makePoolingDescriptor() {
    cudnnPoolingDescriptor_t raw = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&raw));
    return PoolingDescriptor(raw);
}

inline ActivationDescriptor makeActivationDescriptor(cudnnActivationMode_t mode, double coefficient) {
    cudnnActivationDescriptor_t raw = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnCreateActivationDescriptor(&raw));
    ActivationDescriptor descriptor(raw);
    // NaN propagates, so that a diverging run shows up as a NaN loss rather than being clamped.
    CNNSTUDIO_CUDNN_CHECK(cudnnSetActivationDescriptor(raw, mode, CUDNN_PROPAGATE_NAN, coefficient));
    return descriptor;
}

}  // namespace cnnstudio::kernels
