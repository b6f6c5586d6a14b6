// The cuda backend's convolutions in bf16 precision (activations bf16 channels-last; the fp32
// master weights read as they are): which kernels take which geometry.
//   forward, backward filter   input layers (fewer than 8 channels: small_input_conv.h), then
//                              the bf16 tensor cores where the channels fill 16-byte vectors
//                              (tensor_core_conv.h), then direct kernels for the rest: grouped
//                              and depthwise convolutions, ragged channel counts
//                              (direct_conv_channels_last.h)
//   backward data              the tensor cores where they take it, else the direct kernels
// Dense layers arrive here as 1x1 convolutions of 1x1 images (dense.cu).

#include <cuda_bf16.h>

#include "cuda/bf16_convert.h"
#include "cuda/cuda_backend.h"
#include "cuda/direct_conv_channels_last.h"
#include "cuda/small_input_conv.h"
#include "cuda/tensor_core_conv.h"

namespace cnnstudio::kernels {

void CudaBackend::convForwardChannelsLast(const ConvGeometry& g, const float* x, const float* w,
                                          const float* bias, float* y) {
    const int multiprocessors = deviceProperties().multiProcessorCount;
    if (isSmallInputConv(g)) {
        smallInputConvForward(g, asBf16(x), w, bias, asBf16(y), multiprocessors, stream());
    } else if (tensorCoreConvSupports(g, ConvPass::Forward)) {
        void* scratch = workspace(tensorCoreConvWorkspaceBytes(g, ConvPass::Forward, multiprocessors));
        tensorCoreConvForward(g, asBf16(x), w, bias, asBf16(y), scratch, multiprocessors, stream());
    } else {
        directConvForwardChannelsLast(g, asBf16(x), w, bias, asBf16(y), multiprocessors, stream());
    }
}

void CudaBackend::convBackwardDataChannelsLast(const ConvGeometry& g, const float* dy,
                                               const float* w, float* dx) {
    const int multiprocessors = deviceProperties().multiProcessorCount;
    if (tensorCoreConvSupports(g, ConvPass::BackwardData)) {
        void* scratch =
            workspace(tensorCoreConvWorkspaceBytes(g, ConvPass::BackwardData, multiprocessors));
        tensorCoreConvBackwardData(g, asBf16(dy), w, asBf16(dx), scratch, multiprocessors, stream());
    } else {
        directConvBackwardDataChannelsLast(g, asBf16(dy), w, asBf16(dx), multiprocessors, stream());
    }
}

void CudaBackend::convBackwardFilterChannelsLast(const ConvGeometry& g, const float* x,
                                                 const float* dy, float* dw, float* dbias) {
    const int multiprocessors = deviceProperties().multiProcessorCount;
    if (isSmallInputConv(g)) {
        void* scratch = workspace(smallInputConvBackwardFilterWorkspaceBytes(g));
        smallInputConvBackwardFilter(g, asBf16(x), asBf16(dy), dw, dbias, scratch, stream());
    } else if (tensorCoreConvSupports(g, ConvPass::BackwardFilter)) {
        void* scratch =
            workspace(tensorCoreConvWorkspaceBytes(g, ConvPass::BackwardFilter, multiprocessors));
        tensorCoreConvBackwardFilter(g, asBf16(x), asBf16(dy), dw, dbias, scratch, multiprocessors,
                                     stream());
    } else {
        void* scratch = workspace(directConvBackwardFilterWorkspaceBytes(g));
        directConvBackwardFilterChannelsLast(g, asBf16(x), asBf16(dy), dw, dbias, scratch,
                                             multiprocessors, stream());
    }
}

}  // namespace cnnstudio::kernels
