// cuDNN batch normalisation, per channel (CUDNN_BATCHNORM_SPATIAL): x, y (N,C,S) with S the
// spatial size, viewed as (N,C,S,1); gamma, beta, running and saved statistics (C).
//
// The Backend interface's conventions map onto cuDNN's directly: momentum is cuDNN's
// exponentialAverageFactor (running = (1 - m) running + m batch), cuDNN updates the running
// variance with the unbiased batch variance and normalises with the biased one, as PyTorch
// does, and its saved mean and saved inverse variance are the batch mean and 1/sqrt(var + eps)
// that savedMean and savedInvStd hold.

#include "cuda/geometry_checks.h"
#include "cudnn/cudnn_backend.h"

namespace cnnstudio::kernels {

BatchNormPlan& CudnnBackend::batchNormPlan(const BatchNormGeometry& g, const char* op) {
    if (auto found = batchNormPlans_.find(g); found != batchNormPlans_.end()) return found->second;

    validateBatchNorm(g, op);
    BatchNormPlan plan;
    plan.batchStatistics = std::int64_t(g.batch) * g.spatial > 1;
    plan.data = makeTensorDescriptor(CUDNN_DATA_FLOAT, g.batch, g.channels, g.spatial, 1);
    cudnnTensorDescriptor_t raw = nullptr;
    CNNSTUDIO_CUDNN_CHECK(cudnnCreateTensorDescriptor(&raw));
    plan.parameters.reset(raw);
    CNNSTUDIO_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(raw, plan.data.get(), CUDNN_BATCHNORM_SPATIAL));
    return batchNormPlans_.emplace(g, std::move(plan)).first->second;
}

void CudnnBackend::batchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                            const float* gamma, const float* beta, float* y,
                                            float* runningMean, float* runningVar,
                                            float* savedMean, float* savedInvStd) {
    activateDevice();
    const BatchNormPlan& plan = batchNormPlan(g, "batchNormForwardTraining");
    if (!plan.batchStatistics) {  // one value per channel: the unbiased variance is undefined
        CudaBackend::batchNormForwardTraining(g, x, gamma, beta, y, runningMean, runningVar,
                                              savedMean, savedInvStd);
        return;
    }
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
        cudnn_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, plan.data.get(), x, plan.data.get(), y,
        plan.parameters.get(), gamma, beta, double(g.momentum), runningMean, runningVar,
        double(g.epsilon), savedMean, savedInvStd));
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
        CudaBackend::batchNormBackward(g, x, dy, gamma, savedMean, savedInvStd, dx, dgamma, dbeta);
        return;
    }
    // Zero blend factors: dx, dgamma and dbeta are overwritten, never accumulated.
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnBatchNormalizationBackward(
        cudnn_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, plan.data.get(), x,
        plan.data.get(), dy, plan.data.get(), dx, plan.parameters.get(), gamma, dgamma, dbeta,
        double(g.epsilon), savedMean, savedInvStd));
}

}  // namespace cnnstudio::kernels
