// cpu-ref: the plain-loop, single-thread reference of every Backend op — the definition of
// correct that every other backend is tested against, and the honest "naive" baseline of the
// speedup charts. Semantics are PyTorch's unless backend.h says otherwise. Host memory, one
// thread, fp32 only. Backward ops overwrite their outputs. Arguments arrive checked (Backend's
// public ops); the loss checks its labels here because only a host backend can read them.
// One op family per file, as in every backend folder: elementwise.cpp, conv.cpp, pool.cpp,
// batchnorm.cpp, activation.cpp, dropout.cpp, dense.cpp, concat.cpp, loss.cpp, optimizer.cpp;
// memory and the factory in cpu_ref_backend.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cnnstudio/backend.h"

namespace cnnstudio::cpu_ref {

class CpuRefBackend final : public Backend {
public:
    std::string name() const override { return "cpu-ref"; }
    std::string description() const override;
    bool isDevice() const override { return false; }

    // ---- cpu_ref_backend.cpp: 64-byte aligned host memory ------------------------------------
    void* allocateBytes(std::size_t bytes) override;
    void freeBytes(void* pointer) noexcept override;
    void synchronize() override {}

protected:
    void doUpload(void* destination, const void* hostSource, std::size_t bytes) override;
    void doDownload(void* hostDestination, const void* source, std::size_t bytes) override;
    void doCopy(void* destination, const void* source, std::size_t bytes) override;

    // ---- elementwise.cpp: every array holds `count` floats ------------------------------------
    void doFill(float* y /* (count) */, float value, std::size_t count) override;
    void doAxpy(float alpha, const float* x /* (count) */, float* y /* (count), y += alpha x */,
                std::size_t count) override;
    void doAdd(const float* a /* (count) */, const float* b /* (count) */,
               float* y /* (count) = a + b */, std::size_t count) override;
    void doMultiply(const float* a /* (count) */, const float* b /* (count) */,
                    float* y /* (count) = a * b */, std::size_t count) override;
    void doScale(float* y /* (count), y *= alpha */, float alpha, std::size_t count) override;

    // ---- conv.cpp: cross-correlation with groups and symmetric zero padding --------------------
    void doConvForward(const ConvGeometry& g,
                       const float* x /* (batch, inChannels, inHeight, inWidth) */,
                       const float* w /* (outChannels, inChannels/groups, kernelHeight, kernelWidth) */,
                       const float* bias /* (outChannels) or null */,
                       float* y /* (batch, outChannels, outHeight, outWidth) */) override;
    void doConvBackwardData(const ConvGeometry& g,
                            const float* dy /* (batch, outChannels, outHeight, outWidth) */,
                            const float* w /* (outChannels, inChannels/groups, kernelHeight, kernelWidth) */,
                            float* dx /* (batch, inChannels, inHeight, inWidth) */) override;
    void doConvBackwardFilter(const ConvGeometry& g,
                              const float* x /* (batch, inChannels, inHeight, inWidth) */,
                              const float* dy /* (batch, outChannels, outHeight, outWidth) */,
                              float* dw /* (outChannels, inChannels/groups, kernelHeight, kernelWidth) */,
                              float* dbias /* (outChannels) or null */) override;

    // ---- pool.cpp: padding never wins a max and is not counted by the average -----------------
    void doPoolForward(const PoolGeometry& g, const float* x /* (batch, channels, inHeight, inWidth) */,
                       float* y /* (batch, channels, outHeight, outWidth) */) override;
    // Max: the gradient goes to the FIRST maximum of x in each window (row-major order).
    void doPoolBackward(const PoolGeometry& g,
                        const float* x /* (batch, channels, inHeight, inWidth) */,
                        const float* y /* (batch, channels, outHeight, outWidth), unused */,
                        const float* dy /* (batch, channels, outHeight, outWidth) */,
                        float* dx /* (batch, channels, inHeight, inWidth) */) override;

    // ---- batchnorm.cpp: statistics per channel over (batch, spatial), summed in double ---------
    void doBatchNormForwardTraining(const BatchNormGeometry& g,
                                    const float* x /* (batch, channels, spatial) */,
                                    const float* gamma /* (channels) */, const float* beta /* (channels) */,
                                    float* y /* (batch, channels, spatial) */,
                                    float* runningMean /* (channels), updated */,
                                    float* runningVar /* (channels), updated with the unbiased var */,
                                    float* savedMean /* (channels) */,
                                    float* savedInvStd /* (channels) = 1/sqrt(biased var + eps) */) override;
    void doBatchNormForwardInference(const BatchNormGeometry& g,
                                     const float* x /* (batch, channels, spatial) */,
                                     const float* gamma /* (channels) */, const float* beta /* (channels) */,
                                     const float* runningMean /* (channels) */,
                                     const float* runningVar /* (channels) */,
                                     float* y /* (batch, channels, spatial) */) override;
    void doBatchNormBackward(const BatchNormGeometry& g, const float* x /* (batch, channels, spatial) */,
                             const float* dy /* (batch, channels, spatial) */,
                             const float* gamma /* (channels) */, const float* savedMean /* (channels) */,
                             const float* savedInvStd /* (channels) */,
                             float* dx /* (batch, channels, spatial) */, float* dgamma /* (channels) */,
                             float* dbeta /* (channels) */) override;

    // ---- activation.cpp -------------------------------------------------------------------------
    void doActivationForward(Activation kind, float alpha, const float* x /* (count) */,
                             float* y /* (count) */, std::size_t count) override;
    void doActivationBackward(Activation kind, float alpha, const float* x /* (count) */,
                              const float* y /* (count), unused: derivatives are taken from x */,
                              const float* dy /* (count) */, float* dx /* (count) */, std::size_t count) override;

    // ---- dropout.cpp ----------------------------------------------------------------------------
    void doDropoutMask(float probability, std::uint64_t seed, const StepScalars* step /* one struct */,
                       float* mask /* (count) = keep ? 1 / (1 - probability) : 0 */, std::size_t count) override;

    // ---- dense.cpp: w as PyTorch's Linear ----------------------------------------------------
    void doDenseForward(const DenseGeometry& g, const float* x /* (batch, inFeatures) */,
                        const float* w /* (outFeatures, inFeatures) */,
                        const float* bias /* (outFeatures) or null */,
                        float* y /* (batch, outFeatures) */) override;
    void doDenseBackwardData(const DenseGeometry& g, const float* dy /* (batch, outFeatures) */,
                             const float* w /* (outFeatures, inFeatures) */,
                             float* dx /* (batch, inFeatures) */) override;
    void doDenseBackwardWeights(const DenseGeometry& g, const float* x /* (batch, inFeatures) */,
                                const float* dy /* (batch, outFeatures) */,
                                float* dw /* (outFeatures, inFeatures) */,
                                float* dbias /* (outFeatures) or null */) override;

    // ---- concat.cpp -----------------------------------------------------------------------------
    void doCopyChannels(int batch, int spatial, int channels,
                        const float* src /* (batch, srcChannels, spatial) */, int srcChannels,
                        int srcOffset, float* dst /* (batch, dstChannels, spatial) */, int dstChannels,
                        int dstOffset) override;

    // ---- loss.cpp: log-softmax and the loss in double ------------------------------------------
    void doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits /* (batch, classes) */,
                                      const std::int32_t* labels /* (batch) */,
                                      const float* classWeights /* (classes) or null */,
                                      float* probabilities /* (batch, classes) */,
                                      float* loss /* one float */,
                                      const LabelMix& mix /* (batch) each, or none */,
                                      const SoftTargets& soft /* (sets, batch, classes), or none */) override;
    void doSoftmaxCrossEntropyBackward(const LossGeometry& g,
                                       const float* probabilities /* (batch, classes) */,
                                       const std::int32_t* labels /* (batch) */,
                                       const float* classWeights /* (classes) or null */,
                                       float* dlogits /* (batch, classes) */,
                                       const LabelMix& mix /* (batch) each, or none */,
                                      const SoftTargets& soft /* (sets, batch, classes), or none */) override;

    // augment.cpp
    void doAugmentImages(const AugmentGeometry& g,
                         const ImageAugmentation* augmentations /* (batch) */,
                         float* images /* (batch, channels, height, width), in place */) override;

    // ---- metrics.cpp: argmax and the per-sample loss in double --------------------------------
    void doAccumulateMetrics(const MetricsGeometry& g, const float* logits /* (batch, classes) */,
                             const std::int32_t* labels /* (batch) */,
                             const float* batchLoss /* one float or null */,
                             double* sums /* (g.sumCount()) */) override;

    // ---- optimizer.cpp: torch.optim.SGD, torch.optim.Adam / AdamW ------------------------------
    void doSgdUpdate(const SgdSettings& s, const StepScalars* step /* one struct */,
                     float* params /* (count) */, const float* grads /* (count) */,
                     float* velocity /* (count) override; may be null when momentum is 0 */, std::size_t count) override;
    void doAdamUpdate(const AdamSettings& s, const StepScalars* step /* one struct */,
                      float* params /* (count) */, const float* grads /* (count) */,
                      float* m /* (count) first moment */, float* v /* (count) second moment */,
                      std::size_t count) override;
};

}  // namespace cnnstudio::cpu_ref
