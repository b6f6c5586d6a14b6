// cuDNN batch normalisation, per channel: x, y (N,C,S) with S the spatial size, viewed as
// (N,C,S,1) in the backend's activation format; gamma, beta, running and saved statistics (C),
// always fp32.
//
// fp32/tf32 (NCHW) run cuDNN's plain spatial mode. bf16 NHWC runs its persistent kernels
// (CUDNN_BATCHNORM_SPATIAL_PERSISTENT through the *Ex calls, what PyTorch uses for
// channels-last), which keep a reserve buffer from each layer's forward to its backward. A batch
// norm followed by a ReLU runs ours in bf16 (CudaBackend's batchNormReluForwardTraining and
// Backward: the statistics pass, one normalising pass, and a backward that recomputes the ReLU's
// gate from x), faster than cuDNN's fused persistent kernels on fer-cnn's layers
// (docs/measurements.md, "Batch norm + ReLU on our kernels").
//
// The Backend interface's conventions map onto cuDNN's directly: momentum is cuDNN's
// exponentialAverageFactor (running = (1 - m) running + m batch), cuDNN updates the running
// variance with the unbiased batch variance and normalises with the biased one, as PyTorch
// does, and its saved mean and saved inverse variance are the batch mean and 1/sqrt(var + eps)
// that savedMean and savedInvStd hold.
// Training needs more than one value per channel (the unbiased variance), as on every backend.

#include <algorithm>

#include "cuda/index_limits.h"
#include "cudnn/cudnn_backend.h"

namespace cnnstudio::kernels {
namespace {

constexpr cudnnBatchNormOps_t kNormaliseOnly = CUDNN_BATCHNORM_OPS_BN;

}  // namespace

BatchNormPlan& CudnnBackend::batchNormPlan(const BatchNormGeometry& g) {
    if (auto found = batchNormPlans_.find(g); found != batchNormPlans_.end()) return found->second;

    BatchNormPlan plan;
    plan.mode = storesBf16() ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT : CUDNN_BATCHNORM_SPATIAL;
    plan.data = makeTensorDescriptor(computeType(), g.batch, g.channels, g.spatial, 1,
                                     activationLayout());
    cudnnTensorDescriptor_t raw = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnCreateTensorDescriptor(&raw));
    plan.parameters.reset(raw);
    CNNSTUDIO_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(raw, plan.data.get(), plan.mode));
    if (storesBf16() && std::int64_t(g.batch) * g.spatial > 1) {  // can train: the *Ex sizes
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

void CudnnBackend::doBatchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                              const float* gamma, const float* beta, float* y,
                                              float* runningMean, float* runningVar,
                                              float* savedMean, float* savedInvStd) {
    requireIndexable(g, opLabel("batchNormForwardTraining"));
    activateDevice();
    const BatchNormPlan& plan = batchNormPlan(g);
    const float one = 1.0f, zero = 0.0f;
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

void CudnnBackend::doBatchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                               const float* gamma, const float* beta,
                                               const float* runningMean, const float* runningVar,
                                               float* y) {
    requireIndexable(g, opLabel("batchNormForwardInference"));
    activateDevice();
    const BatchNormPlan& plan = batchNormPlan(g);
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
        cudnn_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, plan.data.get(), x, plan.data.get(), y,
        plan.parameters.get(), gamma, beta, runningMean, runningVar, double(g.epsilon)));
}

void CudnnBackend::doBatchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                       const float* gamma, const float* savedMean,
                                       const float* savedInvStd, float* dx, float* dgamma,
                                       float* dbeta) {
    requireIndexable(g, opLabel("batchNormBackward"));
    activateDevice();
    const BatchNormPlan& plan = batchNormPlan(g);
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
