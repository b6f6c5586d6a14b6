// Dense (fully connected, as PyTorch's Linear): x (B, I), w (O, I), bias (O), y (B, O)
//   forward           y[b][o] = bias[o] + sum_i x[b][i] * w[o][i]
//   backward data     dx[b][i] = sum_o dy[b][o] * w[o][i]
//   backward weights  dw[o][i] = sum_b dy[b][o] * x[b][i];   dbias[o] = sum_b dy[b][o]
// A dense layer is a 1x1 convolution of 1x1 images (x as (B, I, 1, 1), w as (O, I, 1, 1)), so
// each op runs the matching convolution op of conv.cu: the same GEMM core (gemm.cuh), with
// K split across blocks when the batch alone gives too few output tiles to fill the GPU.
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"

namespace cnnstudio::kernels {
namespace {

ConvGeometry asConvolution(const DenseGeometry& g) {
    ConvGeometry conv{};
    conv.batch = g.batch;
    conv.inChannels = g.inFeatures;
    conv.outChannels = g.outFeatures;
    conv.inHeight = conv.inWidth = conv.outHeight = conv.outWidth = 1;
    conv.kernelHeight = conv.kernelWidth = 1;
    conv.strideHeight = conv.strideWidth = 1;
    conv.padHeight = conv.padWidth = 0;
    conv.groups = 1;
    return conv;
}

}  // namespace

// The calls name CudaBackend explicitly: a subclass that replaces the convolutions keeps these
// dense ops on our kernels unless it replaces them as well.
void CudaBackend::doDenseForward(const DenseGeometry& g, const float* x, const float* w,
                                 const float* bias, float* y) {
    requireIndexable(g, opLabel("denseForward"));
    CudaBackend::doConvForward(asConvolution(g), x, w, bias, y);
}

void CudaBackend::doDenseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                                      float* dx) {
    requireIndexable(g, opLabel("denseBackwardData"));
    CudaBackend::doConvBackwardData(asConvolution(g), dy, w, dx);
}

void CudaBackend::doDenseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy,
                                         float* dw, float* dbias) {
    requireIndexable(g, opLabel("denseBackwardWeights"));
    CudaBackend::doConvBackwardFilter(asConvolution(g), x, dy, dw, dbias);
}

}  // namespace cnnstudio::kernels
