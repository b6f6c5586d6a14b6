// CpuRefBackend: the Backend op table over the plain-loop reference ops of cpu_ref_ops.h.
// Host memory, one thread, fp32 only (it is the definition of correct).
#pragma once

#include <string>

#include "cnnstudio/backend.h"

namespace cnnstudio::cpu_ref {

class CpuRefBackend final : public Backend {
public:
    std::string name() const override { return "cpu-ref"; }
    std::string description() const override;
    bool isDevice() const override { return false; }

    void* allocateBytes(std::size_t bytes) override;
    void freeBytes(void* pointer) noexcept override;
    void upload(void* destination, const void* hostSource, std::size_t bytes) override;
    void download(void* hostDestination, const void* source, std::size_t bytes) override;
    void copy(void* destination, const void* source, std::size_t bytes) override;
    void synchronize() override {}

    void fill(float* y, float value, std::size_t count) override;
    void axpy(float alpha, const float* x, float* y, std::size_t count) override;
    void add(const float* a, const float* b, float* y, std::size_t count) override;
    void multiply(const float* a, const float* b, float* y, std::size_t count) override;
    void scale(float* y, float alpha, std::size_t count) override;

    void convForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     float* y) override;
    void convBackwardData(const ConvGeometry& g, const float* dy, const float* w, float* dx) override;
    void convBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw,
                            float* dbias) override;

    void poolForward(const PoolGeometry& g, const float* x, float* y) override;
    void poolBackward(const PoolGeometry& g, const float* x, const float* y, const float* dy,
                      float* dx) override;

    void batchNormForwardTraining(const BatchNormGeometry& g, const float* x, const float* gamma,
                                  const float* beta, float* y, float* runningMean,
                                  float* runningVar, float* savedMean,
                                  float* savedInvStd) override;
    void batchNormForwardInference(const BatchNormGeometry& g, const float* x, const float* gamma,
                                   const float* beta, const float* runningMean,
                                   const float* runningVar, float* y) override;
    void batchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                           const float* gamma, const float* savedMean, const float* savedInvStd,
                           float* dx, float* dgamma, float* dbeta) override;

    void activationForward(Activation kind, float alpha, const float* x, float* y,
                           std::size_t count) override;
    void activationBackward(Activation kind, float alpha, const float* x, const float* y,
                            const float* dy, float* dx, std::size_t count) override;

    void dropoutMask(float probability, std::uint64_t seed, const StepScalars* step, float* mask,
                     std::size_t count) override;

    void denseForward(const DenseGeometry& g, const float* x, const float* w, const float* bias,
                      float* y) override;
    void denseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                           float* dx) override;
    void denseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy, float* dw,
                              float* dbias) override;

    void copyChannels(int batch, int spatial, int channels, const float* src, int srcChannels,
                      int srcOffset, float* dst, int dstChannels, int dstOffset) override;

    void softmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                    const std::int32_t* labels, const float* classWeights,
                                    float* probabilities, float* loss) override;
    void softmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                     const std::int32_t* labels, const float* classWeights,
                                     float* dlogits) override;

    void sgdUpdate(const SgdSettings& s, const StepScalars* step, float* params, const float* grads,
                   float* velocity, std::size_t count) override;
    void adamUpdate(const AdamSettings& s, const StepScalars* step, float* params,
                    const float* grads, float* m, float* v, std::size_t count) override;
};

}  // namespace cnnstudio::cpu_ref
