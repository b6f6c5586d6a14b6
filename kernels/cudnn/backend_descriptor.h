// cuDNN's graph (backend) API descriptors as owning handles, and the attribute setters every graph
// built on them repeats: conv_engine.cpp's convolutions and bench/fusion_bench.cpp's fused graphs.
// Failures throw cnnstudio::Error (cudnn_check.h).
#pragma once

#include <cstdint>
#include <memory>

#include <cudnn.h>

#include "cudnn/cudnn_check.h"

namespace cnnstudio::kernels {

struct BackendDescriptorDeleter {
    void operator()(void* descriptor) const noexcept {
        cudnnBackendDestroyDescriptor(static_cast<cudnnBackendDescriptor_t>(descriptor));
    }
};
using BackendDescriptor = std::unique_ptr<void, BackendDescriptorDeleter>;

inline cudnnBackendDescriptor_t raw(const BackendDescriptor& descriptor) {
    return static_cast<cudnnBackendDescriptor_t>(descriptor.get());
}

inline BackendDescriptor makeDescriptor(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t created = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &created));
    return BackendDescriptor(created);
}

// Sets attribute `name` of `descriptor` to `count` values of `type`.
template <typename T>
void set(const BackendDescriptor& descriptor, cudnnBackendAttributeName_t name,
         cudnnBackendAttributeType_t type, const T* values, std::int64_t count = 1) {
    CNNSTUDIO_CUDNN_CHECK(cudnnBackendSetAttribute(raw(descriptor), name, type, count, values));
}

inline void setDescriptor(const BackendDescriptor& descriptor, cudnnBackendAttributeName_t name,
                          const BackendDescriptor& value) {
    cudnnBackendDescriptor_t handle = raw(value);
    set(descriptor, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &handle);
}

}  // namespace cnnstudio::kernels
