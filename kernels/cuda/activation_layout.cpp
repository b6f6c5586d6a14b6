// Where the activations of the GPU backends cross to and from fp32 NCHW: uploads, downloads and
// Flatten. In bf16 precision activations are bf16 NHWC (see cuda_backend.h), so each crossing is
// one transposing conversion kernel; where a layout is the same either way (one channel, or one
// pixel per image) it is a plain conversion or copy. fp32 and tf32 store fp32 NCHW and use the
// Backend defaults.

#include <cuda_bf16.h>

#include "cuda/bf16_convert.h"
#include "cuda/cuda_backend.h"
#include "cuda/layout.h"

namespace cnnstudio::kernels {
namespace {

int spatialOf(const TensorShape& shape) { return shape.height * shape.width; }

// NHWC and NCHW hold the same element order.
bool layoutsCoincide(const TensorShape& shape) {
    return shape.channels == 1 || spatialOf(shape) == 1;
}

}  // namespace

ActivationFormat CudaBackend::activationFormat() const {
    return storesBf16() ? ActivationFormat{true, true} : ActivationFormat{};
}

void CudaBackend::toBf16(const float* source, void* destination, std::size_t count) {
    narrowToBf16(source, static_cast<__nv_bfloat16*>(destination), count, stream());
}

void CudaBackend::fromBf16(const void* source, float* destination, std::size_t count) {
    widenFromBf16(static_cast<const __nv_bfloat16*>(source), destination, count, stream());
}

void CudaBackend::doUploadActivations(const TensorShape& shape, const float* hostSource,
                                       float* destination) {
    if (!storesBf16()) {
        Backend::doUploadActivations(shape, hostSource, destination);
        return;
    }
    activateDevice();
    const std::size_t count = std::size_t(shape.count());
    auto* staged = static_cast<float*>(workspace(count * sizeof(float)));
    upload(staged, hostSource, count * sizeof(float));
    if (layoutsCoincide(shape))
        toBf16(staged, destination, count);
    else  // per image (C, H*W) -> (H*W, C)
        transposeImages(staged, asBf16(destination), shape.batch, shape.channels, spatialOf(shape),
                        stream());
}

void CudaBackend::doDownloadActivations(const TensorShape& shape, const float* source,
                                         float* hostDestination) {
    if (!storesBf16()) {
        Backend::doDownloadActivations(shape, source, hostDestination);
        return;
    }
    activateDevice();
    const std::size_t count = std::size_t(shape.count());
    auto* staged = static_cast<float*>(workspace(count * sizeof(float)));
    if (layoutsCoincide(shape))
        fromBf16(source, staged, count);
    else  // per image (H*W, C) -> (C, H*W)
        transposeImages(asBf16(source), staged, shape.batch, spatialOf(shape), shape.channels,
                        stream());
    download(hostDestination, staged, count * sizeof(float));
}

void CudaBackend::doFlattenForward(const TensorShape& shape, const float* x, float* y) {
    if (!storesBf16() || layoutsCoincide(shape)) {
        Backend::doFlattenForward(shape, x, y);
        return;
    }
    activateDevice();
    transposeImages(asBf16(x), asBf16(y), shape.batch, spatialOf(shape), shape.channels, stream());
}

void CudaBackend::doFlattenBackward(const TensorShape& shape, const float* dy, float* dx) {
    if (!storesBf16() || layoutsCoincide(shape)) {
        Backend::doFlattenBackward(shape, dy, dx);
        return;
    }
    activateDevice();
    transposeImages(asBf16(dy), asBf16(dx), shape.batch, shape.channels, spatialOf(shape), stream());
}

}  // namespace cnnstudio::kernels
