// cpu-ref: the plain-loop, single-thread reference of every Backend op — the definition of
// correct that every other backend is tested against, and the honest "naive" baseline of the
// speedup charts. Semantics are PyTorch's unless backend.h says otherwise. Pointers are host
// memory. Backward ops overwrite their outputs. Each function checks its arguments
// (cnnstudio/op_checks.h) and throws cnnstudio::Error on a bad geometry, setting or label.
// One op family per file: elementwise.cpp, conv.cpp, pool.cpp, batchnorm.cpp, activation.cpp,
// dropout.cpp, dense.cpp, concat.cpp, loss.cpp, optimizer.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cnnstudio/backend.h"

namespace cnnstudio::cpu_ref {

// ---- elementwise.cpp: every array holds `count` floats ------------------------------------
void fill(float* y /* (count) */, float value, std::size_t count);
void axpy(float alpha, const float* x /* (count) */, float* y /* (count), y += alpha x */,
          std::size_t count);
void add(const float* a /* (count) */, const float* b /* (count) */,
         float* y /* (count) = a + b */, std::size_t count);
void multiply(const float* a /* (count) */, const float* b /* (count) */,
              float* y /* (count) = a * b */, std::size_t count);
void scale(float* y /* (count), y *= alpha */, float alpha, std::size_t count);

// ---- conv.cpp: cross-correlation with groups and symmetric zero padding --------------------
void convForward(const ConvGeometry& g,
                 const float* x /* (batch, inChannels, inHeight, inWidth) */,
                 const float* w /* (outChannels, inChannels/groups, kernelHeight, kernelWidth) */,
                 const float* bias /* (outChannels) or null */,
                 float* y /* (batch, outChannels, outHeight, outWidth) */);
void convBackwardData(const ConvGeometry& g,
                      const float* dy /* (batch, outChannels, outHeight, outWidth) */,
                      const float* w /* (outChannels, inChannels/groups, kernelHeight, kernelWidth) */,
                      float* dx /* (batch, inChannels, inHeight, inWidth) */);
void convBackwardFilter(const ConvGeometry& g,
                        const float* x /* (batch, inChannels, inHeight, inWidth) */,
                        const float* dy /* (batch, outChannels, outHeight, outWidth) */,
                        float* dw /* (outChannels, inChannels/groups, kernelHeight, kernelWidth) */,
                        float* dbias /* (outChannels) or null */);

// ---- pool.cpp: padding never wins a max and is not counted by the average -----------------
void poolForward(const PoolGeometry& g, const float* x /* (batch, channels, inHeight, inWidth) */,
                 float* y /* (batch, channels, outHeight, outWidth) */);
// Max: the gradient goes to the FIRST maximum of x in each window (row-major order).
void poolBackward(const PoolGeometry& g,
                  const float* x /* (batch, channels, inHeight, inWidth) */,
                  const float* y /* (batch, channels, outHeight, outWidth), unused */,
                  const float* dy /* (batch, channels, outHeight, outWidth) */,
                  float* dx /* (batch, channels, inHeight, inWidth) */);

// ---- batchnorm.cpp: statistics per channel over (batch, spatial), summed in double ---------
void batchNormForwardTraining(const BatchNormGeometry& g,
                              const float* x /* (batch, channels, spatial) */,
                              const float* gamma /* (channels) */, const float* beta /* (channels) */,
                              float* y /* (batch, channels, spatial) */,
                              float* runningMean /* (channels), updated */,
                              float* runningVar /* (channels), updated with the unbiased var */,
                              float* savedMean /* (channels) */,
                              float* savedInvStd /* (channels) = 1/sqrt(biased var + eps) */);
void batchNormForwardInference(const BatchNormGeometry& g,
                               const float* x /* (batch, channels, spatial) */,
                               const float* gamma /* (channels) */, const float* beta /* (channels) */,
                               const float* runningMean /* (channels) */,
                               const float* runningVar /* (channels) */,
                               float* y /* (batch, channels, spatial) */);
void batchNormBackward(const BatchNormGeometry& g, const float* x /* (batch, channels, spatial) */,
                       const float* dy /* (batch, channels, spatial) */,
                       const float* gamma /* (channels) */, const float* savedMean /* (channels) */,
                       const float* savedInvStd /* (channels) */,
                       float* dx /* (batch, channels, spatial) */, float* dgamma /* (channels) */,
                       float* dbeta /* (channels) */);

// ---- activation.cpp -------------------------------------------------------------------------
void activationForward(Activation kind, float alpha, const float* x /* (count) */,
                       float* y /* (count) */, std::size_t count);
void activationBackward(Activation kind, float alpha, const float* x /* (count) */,
                        const float* y /* (count), unused: derivatives are taken from x */,
                        const float* dy /* (count) */, float* dx /* (count) */, std::size_t count);

// ---- dropout.cpp ----------------------------------------------------------------------------
void dropoutMask(float probability, std::uint64_t seed, const StepScalars* step /* one struct */,
                 float* mask /* (count) = keep ? 1 / (1 - probability) : 0 */, std::size_t count);

// ---- dense.cpp: w as PyTorch's Linear ----------------------------------------------------
void denseForward(const DenseGeometry& g, const float* x /* (batch, inFeatures) */,
                  const float* w /* (outFeatures, inFeatures) */,
                  const float* bias /* (outFeatures) or null */,
                  float* y /* (batch, outFeatures) */);
void denseBackwardData(const DenseGeometry& g, const float* dy /* (batch, outFeatures) */,
                       const float* w /* (outFeatures, inFeatures) */,
                       float* dx /* (batch, inFeatures) */);
void denseBackwardWeights(const DenseGeometry& g, const float* x /* (batch, inFeatures) */,
                          const float* dy /* (batch, outFeatures) */,
                          float* dw /* (outFeatures, inFeatures) */,
                          float* dbias /* (outFeatures) or null */);

// ---- concat.cpp -----------------------------------------------------------------------------
void copyChannels(int batch, int spatial, int channels,
                  const float* src /* (batch, srcChannels, spatial) */, int srcChannels,
                  int srcOffset, float* dst /* (batch, dstChannels, spatial) */, int dstChannels,
                  int dstOffset);

// ---- loss.cpp: log-softmax and the loss in double ------------------------------------------
void softmaxCrossEntropyForward(const LossGeometry& g, const float* logits /* (batch, classes) */,
                                const std::int32_t* labels /* (batch) */,
                                const float* classWeights /* (classes) or null */,
                                float* probabilities /* (batch, classes) */,
                                float* loss /* one float */);
void softmaxCrossEntropyBackward(const LossGeometry& g,
                                 const float* probabilities /* (batch, classes) */,
                                 const std::int32_t* labels /* (batch) */,
                                 const float* classWeights /* (classes) or null */,
                                 float* dlogits /* (batch, classes) */);

// ---- optimizer.cpp: torch.optim.SGD, torch.optim.Adam / AdamW ------------------------------
void sgdUpdate(const SgdSettings& s, const StepScalars* step /* one struct */,
               float* params /* (count) */, const float* grads /* (count) */,
               float* velocity /* (count); may be null when momentum is 0 */, std::size_t count);
void adamUpdate(const AdamSettings& s, const StepScalars* step /* one struct */,
                float* params /* (count) */, const float* grads /* (count) */,
                float* m /* (count) first moment */, float* v /* (count) second moment */,
                std::size_t count);

}  // namespace cnnstudio::cpu_ref
