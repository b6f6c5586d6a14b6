// Dense layers on cuBLAS: x (N,F), w (O,F) as PyTorch's Linear, bias (O) -> y (N,O).
//   forward          y  = x w^T + bias
//   backward data    dx = dy w
//   backward weights dw = dy^T x,  dbias = sum over N of dy; inside a weight-gradient overlap
//                    beside the ops after it (CudaBackend::enqueueWeightGradient)
// cuBLAS is column-major, so a row-major (rows, cols) matrix is read as its (cols, rows)
// transpose; every GEMM below is written for those transposes (comments give the column-major
// product). The bias is added and reduced by cuDNN in fp32 ((N,O,1,1) against (1,O,1,1)).
//
// Precision: fp32 computes in fp32 (no TF32), tf32 lets cuBLAS round inputs to TF32 on the
// tensor cores. bf16: x, y, dx, dy are the backend's bf16 activations (a 2-D tensor's layout is
// the same channels-last or not); the fp32 weights are converted to a bf16 copy in the
// workspace, GEMMs accumulate in fp32, dw is written in fp32 and biases are added and reduced
// by our channels-last kernels in fp32 registers.

#include <cuda_bf16.h>

#include "cuda/bf16_convert.h"
#include "cuda/index_limits.h"
#include "cuda/layout.h"
#include "cudnn/cudnn_backend.h"

namespace cnnstudio::kernels {
namespace {

std::size_t bf16Bytes(std::size_t count) { return count * sizeof(__nv_bfloat16); }

}  // namespace

DensePlan& CudnnBackend::densePlan(const DenseGeometry& g, const OpLabel& op) {
    if (auto found = densePlans_.find(g); found != densePlans_.end()) return found->second;
    requireIndexable(g, op);
    DensePlan plan;
    if (!storesBf16()) {  // bf16 adds and reduces biases with our channels-last kernels
        plan.output = makeTensorDescriptor(CUDNN_DATA_FLOAT, g.batch, g.outFeatures, 1, 1);
        plan.bias = makeTensorDescriptor(CUDNN_DATA_FLOAT, 1, g.outFeatures, 1, 1);
    }
    return densePlans_.emplace(g, std::move(plan)).first->second;
}

cublasComputeType_t CudnnBackend::gemmComputeType() const {
    return precision() == Precision::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

cudaDataType_t CudnnBackend::activationDataType() const {
    return storesBf16() ? CUDA_R_16BF : CUDA_R_32F;
}

const void* CudnnBackend::stageDenseWeights(const float* w, std::size_t count) {
    if (!storesBf16()) return w;
    if (heldWeights_.holding())
        return heldCopy(w, {std::int64_t(count), 1, 1}, bf16Bytes(count),
                        [this, w, count](void* room) { toBf16(w, room, count); });
    void* room = workspace(bf16Bytes(count));
    toBf16(w, room, count);
    return room;
}

void CudnnBackend::doDenseForward(const DenseGeometry& g, const float* x, const float* w,
                                  const float* bias, float* y) {
    activateDevice();
    const DensePlan& plan = densePlan(g, opLabel("denseForward"));
    const void* weights = stageDenseWeights(w, std::size_t(g.outFeatures) * g.inFeatures);
    const cudaDataType_t type = activationDataType();
    // y^T (O x N) = W^T (O x F) * X (F x N), with W = w read column-major as (F x O).
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUBLAS_CHECK(cublasGemmEx(cublas(), CUBLAS_OP_T, CUBLAS_OP_N, g.outFeatures, g.batch,
                                        g.inFeatures, &one, weights, type, g.inFeatures, x, type,
                                        g.inFeatures, &zero, y, type, g.outFeatures,
                                        gemmComputeType(), CUBLAS_GEMM_DEFAULT));
    if (bias == nullptr) return;
    if (storesBf16())
        addChannelBiasChannelsLast(asBf16(y), bias, g.batch,
                                   g.outFeatures, stream());
    else
        CNNSTUDIO_CUDNN_CHECK(
            cudnnAddTensor(cudnn_, &one, plan.bias.get(), bias, &one, plan.output.get(), y));
}

void CudnnBackend::doDenseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                                       float* dx) {
    activateDevice();
    densePlan(g, opLabel("denseBackwardData"));
    const void* weights = stageDenseWeights(w, std::size_t(g.outFeatures) * g.inFeatures);
    const cudaDataType_t type = activationDataType();
    // dx^T (F x N) = W (F x O) * dY (O x N), with dY = dy read column-major.
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUBLAS_CHECK(cublasGemmEx(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, g.inFeatures, g.batch,
                                        g.outFeatures, &one, weights, type, g.inFeatures, dy,
                                        type, g.outFeatures, &zero, dx, type, g.inFeatures,
                                        gemmComputeType(), CUBLAS_GEMM_DEFAULT));
}

void CudnnBackend::doDenseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy,
                                          float* dw, float* dbias) {
    activateDevice();
    const DensePlan& plan = densePlan(g, opLabel("denseBackwardWeights"));
    const cudaDataType_t type = activationDataType();
    const bool sumsOurs = dbias != nullptr && storesBf16();
    const std::size_t sumsBytes = sumsOurs ? channelSumsChannelsLastWorkspaceBytes(g.batch, g.outFeatures) : 0;
    // Beside the backward pass's next ops, as the convolutions' weight gradients (conv.cpp), on
    // the side stream's cuBLAS handle and workspace.
    enqueueWeightGradient([&] {
        void* sums = sumsOurs ? workspace(sumsBytes) : nullptr;  // before anything is enqueued
        // dw^T (F x O) = X (F x N) * dY^T (N x O), with X = x and dY = dy read column-major; dw
        // is fp32 whatever the activations are.
        const float one = 1.0f, zero = 0.0f;
        CNNSTUDIO_CUBLAS_CHECK(cublasGemmEx(cublas(), CUBLAS_OP_N, CUBLAS_OP_T, g.inFeatures,
                                            g.outFeatures, g.batch, &one, x, type, g.inFeatures,
                                            dy, type, g.outFeatures, &zero, dw, CUDA_R_32F,
                                            g.inFeatures, gemmComputeType(), CUBLAS_GEMM_DEFAULT));
        if (dbias == nullptr) return;
        if (sumsOurs)
            channelSumsChannelsLast(asBf16(dy), dbias, g.batch, g.outFeatures, sums, stream());
        else
            CNNSTUDIO_CUDNN_CHECK(cudnnConvolutionBackwardBias(cudnn_, &one, plan.output.get(), dy,
                                                               &zero, plan.bias.get(), dbias));
    });
}

}  // namespace cnnstudio::kernels
