// cuDNN batch normalisation, per channel: x, y (N,C,S) with S the spatial size, viewed as
// (N,C,S,1) in the backend's activation format; gamma, beta, running and saved statistics (C),
// always fp32.
//
// fp32/tf32 (NCHW) run cuDNN's plain spatial mode. bf16 NHWC runs its persistent kernels
// (CUDNN_BATCHNORM_SPATIAL_PERSISTENT through the *Ex calls, what PyTorch uses for
// channels-last), which keep a reserve buffer from each layer's forward to its backward.
//
// The Backend interface's conventions map onto cuDNN's directly: momentum is cuDNN's
// exponentialAverageFactor (running = (1 - m) running + m batch), cuDNN updates the running
// variance with the unbiased batch variance and normalises with the biased one, as PyTorch
// does, and its saved mean and saved inverse variance are the batch mean and 1/sqrt(var + eps)
// that savedMean and savedInvStd hold.
//
// One value per channel (N*S == 1) has no unbiased variance: our fp32 kernels handle it, in bf16
// through fp32 copies of the (C-element) activations.

#include <algorithm>

#include "cnnstudio/backend_buffer.h"
#include "cuda/geometry_checks.h"
#include "cudnn/cudnn_backend.h"

namespace cnnstudio::kernels {
namespace {

constexpr cudnnBatchNormOps_t kNormaliseOnly = CUDNN_BATCHNORM_OPS_BN;

}  // namespace

BatchNormPlan& CudnnBackend::batchNormPlan(const BatchNormGeometry& g, const char* op) {
    if (auto found = batchNormPlans_.find(g); found != batchNormPlans_.end()) return found->second;

    validateBatchNorm(g, op);
    BatchNormPlan plan;
    plan.batchStatistics = std::int64_t(g.batch) * g.spatial > 1;
    plan.mode = storesBf16() ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT : CUDNN_BATCHNORM_SPATIAL;
    plan.data = makeTensorDescriptor(computeType(), g.batch, g.channels, g.spatial, 1,
                                     activationLayout());
    cudnnTensorDescriptor_t raw = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnCreateTensorDescriptor(&raw));
    plan.parameters.reset(raw);
    CNNSTUDIO_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(raw, plan.data.get(), plan.mode));
    if (storesBf16() && plan.batchStatistics) {
        const cudnnTensorDescriptor_t data = plan.data.get();
        std::size_t forwardBytes = 0, backwardBytes = 0;
        CNNSTUDIO_CUDNN_CHECK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
            cudnn_, plan.mode, kNormaliseOnly, data, nullptr, data, raw, nullptr, &forwardBytes));
        CNNSTUDIO_CUDNN_CHECK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(
            cudnn_, plan.mode, kNormaliseOnly, data, data, data, nullptr, data, raw, nullptr,
            &backwardBytes));
        CNNSTUDIO_CUDNN_CHECK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
            cudnn_, plan.mode, kNormaliseOnly, nullptr, data, &plan.reserveBytes));
        plan.workspaceBytes = std::max(forwardBytes, backwardBytes);
    }
    return batchNormPlans_.emplace(g, std::move(plan)).first->second;
}

void* CudnnBackend::batchNormReserve(const BatchNormPlan& plan, const float* savedMean) {
    if (plan.reserveBytes == 0) return nullptr;
    void*& reserve = batchNormReserves_[savedMean];
    if (reserve == nullptr) reserve = allocateBytes(plan.reserveBytes);
    return reserve;
}

void CudnnBackend::batchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                            const float* gamma, const float* beta, float* y,
                                            float* runningMean, float* runningVar,
                                            float* savedMean, float* savedInvStd) {
    activateDevice();
    const BatchNormPlan& plan = batchNormPlan(g, "batchNormForwardTraining");
    const float one = 1.0f, zero = 0.0f;
    if (!plan.batchStatistics) {
        if (!storesBf16()) {
            CudaBackend::batchNormForwardTraining(g, x, gamma, beta, y, runningMean, runningVar,
                                                  savedMean, savedInvStd);
            return;
        }
        const std::size_t count = std::size_t(g.count());
        BackendBuffer<float> wideX(*this, count), wideY(*this, count);
        fromBf16(x, wideX.data(), count);
        CudaBackend::batchNormForwardTraining(g, wideX.data(), gamma, beta, wideY.data(),
                                              runningMean, runningVar, savedMean, savedInvStd);
        toBf16(wideY.data(), y, count);
        return;
    }
    if (!storesBf16()) {
        CNNSTUDIO_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
            cudnn_, plan.mode, &one, &zero, plan.data.get(), x, plan.data.get(), y,
            plan.parameters.get(), gamma, beta, double(g.momentum), runningMean, runningVar,
            double(g.epsilon), savedMean, savedInvStd));
        return;
    }
    void* reserve = batchNormReserve(plan, savedMean);
    CNNSTUDIO_CUDNN_CHECK(cudnnBatchNormalizationForwardTrainingEx(
        cudnn_, plan.mode, kNormaliseOnly, &one, &zero, plan.data.get(), x, nullptr, nullptr,
        plan.data.get(), y, plan.parameters.get(), gamma, beta, double(g.momentum), runningMean,
        runningVar, double(g.epsilon), savedMean, savedInvStd, nullptr,
        workspace(plan.workspaceBytes), plan.workspaceBytes, reserve, plan.reserveBytes));
}

void CudnnBackend::batchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                             const float* gamma, const float* beta,
                                             const float* runningMean, const float* runningVar,
                                             float* y) {
    activateDevice();
    const BatchNormPlan& plan = batchNormPlan(g, "batchNormForwardInference");
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
        cudnn_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, plan.data.get(), x, plan.data.get(), y,
        plan.parameters.get(), gamma, beta, runningMean, runningVar, double(g.epsilon)));
}

void CudnnBackend::batchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                     const float* gamma, const float* savedMean,
                                     const float* savedInvStd, float* dx, float* dgamma,
                                     float* dbeta) {
    activateDevice();
    const BatchNormPlan& plan = batchNormPlan(g, "batchNormBackward");
    if (!plan.batchStatistics) {
        if (!storesBf16()) {
            CudaBackend::batchNormBackward(g, x, dy, gamma, savedMean, savedInvStd, dx, dgamma,
                                           dbeta);
            return;
        }
        const std::size_t count = std::size_t(g.count());
        BackendBuffer<float> wideX(*this, count), wideDy(*this, count), wideDx(*this, count);
        fromBf16(x, wideX.data(), count);
        fromBf16(dy, wideDy.data(), count);
        CudaBackend::batchNormBackward(g, wideX.data(), wideDy.data(), gamma, savedMean,
                                       savedInvStd, wideDx.data(), dgamma, dbeta);
        toBf16(wideDx.data(), dx, count);
        return;
    }
    // Zero blend factors: dx, dgamma and dbeta are overwritten, never accumulated.
    const float one = 1.0f, zero = 0.0f;
    if (!storesBf16()) {
        CNNSTUDIO_CUDNN_CHECK(cudnnBatchNormalizationBackward(
            cudnn_, plan.mode, &one, &zero, &one, &zero, plan.data.get(), x, plan.data.get(), dy,
            plan.data.get(), dx, plan.parameters.get(), gamma, dgamma, dbeta, double(g.epsilon),
            savedMean, savedInvStd));
        return;
    }
    void* reserve = batchNormReserve(plan, savedMean);
    CNNSTUDIO_CUDNN_CHECK(cudnnBatchNormalizationBackwardEx(
        cudnn_, plan.mode, kNormaliseOnly, &one, &zero, &one, &zero, plan.data.get(), x, nullptr,
        nullptr, plan.data.get(), dy, nullptr, nullptr, plan.data.get(), dx,
        plan.parameters.get(), gamma, nullptr, dgamma, dbeta, double(g.epsilon), savedMean,
        savedInvStd, nullptr, workspace(plan.workspaceBytes), plan.workspaceBytes, reserve,
        plan.reserveBytes));
}

}  // namespace cnnstudio::kernels
