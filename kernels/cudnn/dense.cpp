// Dense layers on cuBLAS: x (N,F), w (O,F) as PyTorch's Linear, bias (O) -> y (N,O).
//   forward          y  = x w^T + bias
//   backward data    dx = dy w
//   backward weights dw = dy^T x,  dbias = sum over N of dy
// cuBLAS is column-major, so a row-major (rows, cols) matrix is read as its (cols, rows)
// transpose; every GEMM below is written for those transposes (comments give the column-major
// product). The bias is added and reduced by cuDNN in fp32 ((N,O,1,1) against (1,O,1,1)).
//
// Precision: fp32 computes in fp32 (no TF32), tf32 lets cuBLAS round inputs to TF32 on the
// tensor cores, bf16 converts the two operands to bf16 in the workspace and accumulates and
// writes fp32.

#include <cuda_bf16.h>

#include "cuda/geometry_checks.h"
#include "cudnn/cudnn_backend.h"

namespace cnnstudio::kernels {
namespace {

constexpr std::size_t kScratchAlignment = 256;

std::size_t alignUp(std::size_t bytes) {
    return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

std::size_t bf16Bytes(std::size_t count) { return count * sizeof(__nv_bfloat16); }

}  // namespace

DensePlan& CudnnBackend::densePlan(const DenseGeometry& g, const char* op) {
    if (auto found = densePlans_.find(g); found != densePlans_.end()) return found->second;
    validateDense(g, op);
    DensePlan plan;
    plan.output = makeTensorDescriptor(CUDNN_DATA_FLOAT, g.batch, g.outFeatures, 1, 1);
    plan.bias = makeTensorDescriptor(CUDNN_DATA_FLOAT, 1, g.outFeatures, 1, 1);
    return densePlans_.emplace(g, std::move(plan)).first->second;
}

cublasComputeType_t CudnnBackend::gemmComputeType() const {
    return precision() == Precision::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

void CudnnBackend::denseForward(const DenseGeometry& g, const float* x, const float* w,
                                const float* bias, float* y) {
    activateDevice();
    const DensePlan& plan = densePlan(g, "denseForward");
    const std::size_t xCount = std::size_t(g.batch) * g.inFeatures;
    const std::size_t wCount = std::size_t(g.outFeatures) * g.inFeatures;
    const void* a = w;
    const void* b = x;
    cudaDataType_t operandType = CUDA_R_32F;
    if (precision() == Precision::Bf16) {
        char* scratch = static_cast<char*>(workspace(alignUp(bf16Bytes(wCount)) + bf16Bytes(xCount)));
        toBf16(w, scratch, wCount);
        toBf16(x, scratch + alignUp(bf16Bytes(wCount)), xCount);
        a = scratch;
        b = scratch + alignUp(bf16Bytes(wCount));
        operandType = CUDA_R_16BF;
    }
    // y^T (O x N) = W^T (O x F) * X (F x N), with W = w read column-major as (F x O).
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, g.outFeatures, g.batch,
                                        g.inFeatures, &one, a, operandType, g.inFeatures, b,
                                        operandType, g.inFeatures, &zero, y, CUDA_R_32F,
                                        g.outFeatures, gemmComputeType(), CUBLAS_GEMM_DEFAULT));
    if (bias != nullptr)
        CNNSTUDIO_CUDNN_CHECK(
            cudnnAddTensor(cudnn_, &one, plan.bias.get(), bias, &one, plan.output.get(), y));
}

void CudnnBackend::denseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                                     float* dx) {
    activateDevice();
    densePlan(g, "denseBackwardData");
    const std::size_t dyCount = std::size_t(g.batch) * g.outFeatures;
    const std::size_t wCount = std::size_t(g.outFeatures) * g.inFeatures;
    const void* a = w;
    const void* b = dy;
    cudaDataType_t operandType = CUDA_R_32F;
    if (precision() == Precision::Bf16) {
        char* scratch = static_cast<char*>(workspace(alignUp(bf16Bytes(wCount)) + bf16Bytes(dyCount)));
        toBf16(w, scratch, wCount);
        toBf16(dy, scratch + alignUp(bf16Bytes(wCount)), dyCount);
        a = scratch;
        b = scratch + alignUp(bf16Bytes(wCount));
        operandType = CUDA_R_16BF;
    }
    // dx^T (F x N) = W (F x O) * dY (O x N), with dY = dy read column-major.
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, g.inFeatures, g.batch,
                                        g.outFeatures, &one, a, operandType, g.inFeatures, b,
                                        operandType, g.outFeatures, &zero, dx, CUDA_R_32F,
                                        g.inFeatures, gemmComputeType(), CUBLAS_GEMM_DEFAULT));
}

void CudnnBackend::denseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy,
                                        float* dw, float* dbias) {
    activateDevice();
    const DensePlan& plan = densePlan(g, "denseBackwardWeights");
    const std::size_t xCount = std::size_t(g.batch) * g.inFeatures;
    const std::size_t dyCount = std::size_t(g.batch) * g.outFeatures;
    const void* a = x;
    const void* b = dy;
    cudaDataType_t operandType = CUDA_R_32F;
    if (precision() == Precision::Bf16) {
        char* scratch = static_cast<char*>(workspace(alignUp(bf16Bytes(xCount)) + bf16Bytes(dyCount)));
        toBf16(x, scratch, xCount);
        toBf16(dy, scratch + alignUp(bf16Bytes(xCount)), dyCount);
        a = scratch;
        b = scratch + alignUp(bf16Bytes(xCount));
        operandType = CUDA_R_16BF;
    }
    // dw^T (F x O) = X (F x N) * dY^T (N x O), with X = x and dY = dy read column-major.
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_N, CUBLAS_OP_T, g.inFeatures,
                                        g.outFeatures, g.batch, &one, a, operandType, g.inFeatures,
                                        b, operandType, g.outFeatures, &zero, dw, CUDA_R_32F,
                                        g.inFeatures, gemmComputeType(), CUBLAS_GEMM_DEFAULT));
    if (dbias != nullptr)
        CNNSTUDIO_CUDNN_CHECK(cudnnConvolutionBackwardBias(cudnn_, &one, plan.output.get(), dy,
                                                           &zero, plan.bias.get(), dbias));
}

}  // namespace cnnstudio::kernels
