// Backend's public ops: each checks its arguments once (cnnstudio/op_checks.h), labelled
// "<backend> <op>", skips work over zero elements, then calls the backend's do<Op>. Below them,
// the default implementations: activation movers for backends that store activations as fp32
// NCHW, and the unfused chains (inference conv + batch norm + ReLU, training batch norm + ReLU),
// which call the implementations directly because their arguments were checked on the way in.
#include "cnnstudio/backend.h"

#include "cnnstudio/host_memory.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio {

using ops::requirePointer;
using ops::requirePointers;

std::string OpLabel::text() const { return backend_->name() + " " + op_; }

std::optional<std::size_t> Backend::freeMemoryBytes() const { return availableHostMemoryBytes(); }

// ---- memory -----------------------------------------------------------------------------------

void Backend::upload(void* destination, const void* hostSource, std::size_t bytes) {
    if (bytes == 0) return;
    requirePointers({{destination, "destination"}, {hostSource, "hostSource"}}, opLabel("upload"));
    doUpload(destination, hostSource, bytes);
}

void Backend::download(void* hostDestination, const void* source, std::size_t bytes) {
    if (bytes == 0) return;
    requirePointers({{hostDestination, "hostDestination"}, {source, "source"}},
                    opLabel("download"));
    ++downloadCount_;
    doDownload(hostDestination, source, bytes);
}

void Backend::copy(void* destination, const void* source, std::size_t bytes) {
    if (bytes == 0) return;
    requirePointers({{destination, "destination"}, {source, "source"}}, opLabel("copy"));
    doCopy(destination, source, bytes);
}

// ---- activations in and out -------------------------------------------------------------------

void Backend::uploadActivations(const TensorShape& shape, const float* hostSource,
                                float* destination) {
    requirePointers({{hostSource, "hostSource"}, {destination, "destination"}},
                    opLabel("uploadActivations"));
    doUploadActivations(shape, hostSource, destination);
}

void Backend::downloadActivations(const TensorShape& shape, const float* source,
                                  float* hostDestination) {
    requirePointers({{source, "source"}, {hostDestination, "hostDestination"}},
                    opLabel("downloadActivations"));
    doDownloadActivations(shape, source, hostDestination);
}

void Backend::flattenForward(const TensorShape& shape, const float* x, float* y) {
    requirePointers({{x, "x"}, {y, "y"}}, opLabel("flattenForward"));
    doFlattenForward(shape, x, y);
}

void Backend::flattenBackward(const TensorShape& shape, const float* dy, float* dx) {
    requirePointers({{dy, "dy"}, {dx, "dx"}}, opLabel("flattenBackward"));
    doFlattenBackward(shape, dy, dx);
}

// ---- elementwise ------------------------------------------------------------------------------

void Backend::fill(float* y, float value, std::size_t count) {
    if (count == 0) return;
    requirePointer(y, "y", opLabel("fill"));
    doFill(y, value, count);
}

void Backend::axpy(float alpha, const float* x, float* y, std::size_t count) {
    if (count == 0) return;
    requirePointers({{x, "x"}, {y, "y"}}, opLabel("axpy"));
    doAxpy(alpha, x, y, count);
}

void Backend::add(const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    requirePointers({{a, "a"}, {b, "b"}, {y, "y"}}, opLabel("add"));
    doAdd(a, b, y, count);
}

void Backend::multiply(const float* a, const float* b, float* y, std::size_t count) {
    if (count == 0) return;
    requirePointers({{a, "a"}, {b, "b"}, {y, "y"}}, opLabel("multiply"));
    doMultiply(a, b, y, count);
}

void Backend::scale(float* y, float alpha, std::size_t count) {
    if (count == 0) return;
    requirePointer(y, "y", opLabel("scale"));
    doScale(y, alpha, count);
}

// ---- convolution ------------------------------------------------------------------------------

void Backend::convForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                          float* y) {
    const OpLabel op = opLabel("convForward");
    ops::checkConvGeometry(g, op);
    requirePointers({{x, "x"}, {w, "w"}, {y, "y"}}, op);
    doConvForward(g, x, w, bias, y);
}

void Backend::convBackwardData(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
    const OpLabel op = opLabel("convBackwardData");
    ops::checkConvGeometry(g, op);
    requirePointers({{dy, "dy"}, {w, "w"}, {dx, "dx"}}, op);
    doConvBackwardData(g, dy, w, dx);
}

void Backend::convBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw,
                                 float* dbias) {
    const OpLabel op = opLabel("convBackwardFilter");
    ops::checkConvGeometry(g, op);
    requirePointers({{x, "x"}, {dy, "dy"}, {dw, "dw"}}, op);
    doConvBackwardFilter(g, x, dy, dw, dbias);
}

void Backend::convBatchNormReluInference(const ConvGeometry& g, const float* x, const float* w,
                                         const float* bias, const BatchNormGeometry& bn,
                                         const float* gamma, const float* beta,
                                         const float* runningMean, const float* runningVar,
                                         float* y) {
    const OpLabel op = opLabel("convBatchNormReluInference");
    ops::checkConvGeometry(g, op);
    ops::checkBatchNormGeometry(bn, false, op);
    ops::checkConvBatchNormChain(g, bn, op);
    requirePointers({{x, "x"}, {w, "w"}, {gamma, "gamma"}, {beta, "beta"},
                     {runningMean, "runningMean"}, {runningVar, "runningVar"}, {y, "y"}}, op);
    doConvBatchNormReluInference(g, x, w, bias, bn, gamma, beta, runningMean, runningVar, y);
}

// ---- pooling ----------------------------------------------------------------------------------

void Backend::poolForward(const PoolGeometry& g, const float* x, float* y) {
    const OpLabel op = opLabel("poolForward");
    ops::checkPoolGeometry(g, op);
    requirePointers({{x, "x"}, {y, "y"}}, op);
    doPoolForward(g, x, y);
}

void Backend::poolBackward(const PoolGeometry& g, const float* x, const float* y, const float* dy,
                           float* dx) {
    const OpLabel op = opLabel("poolBackward");
    ops::checkPoolGeometry(g, op);
    requirePointers({{x, "x"}, {y, "y"}, {dy, "dy"}, {dx, "dx"}}, op);
    doPoolBackward(g, x, y, dy, dx);
}

// ---- batch normalisation ----------------------------------------------------------------------

void Backend::batchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                       const float* gamma, const float* beta, float* y,
                                       float* runningMean, float* runningVar, float* savedMean,
                                       float* savedInvStd) {
    const OpLabel op = opLabel("batchNormForwardTraining");
    ops::checkBatchNormGeometry(g, true, op);
    requirePointers({{x, "x"}, {gamma, "gamma"}, {beta, "beta"}, {y, "y"},
                     {runningMean, "runningMean"}, {runningVar, "runningVar"},
                     {savedMean, "savedMean"}, {savedInvStd, "savedInvStd"}}, op);
    doBatchNormForwardTraining(g, x, gamma, beta, y, runningMean, runningVar, savedMean,
                               savedInvStd);
}

void Backend::batchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                        const float* gamma, const float* beta,
                                        const float* runningMean, const float* runningVar,
                                        float* y) {
    const OpLabel op = opLabel("batchNormForwardInference");
    ops::checkBatchNormGeometry(g, false, op);
    requirePointers({{x, "x"}, {gamma, "gamma"}, {beta, "beta"}, {runningMean, "runningMean"},
                     {runningVar, "runningVar"}, {y, "y"}}, op);
    doBatchNormForwardInference(g, x, gamma, beta, runningMean, runningVar, y);
}

void Backend::batchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                const float* gamma, const float* savedMean,
                                const float* savedInvStd, float* dx, float* dgamma, float* dbeta) {
    const OpLabel op = opLabel("batchNormBackward");
    ops::checkBatchNormGeometry(g, true, op);
    requirePointers({{x, "x"}, {dy, "dy"}, {gamma, "gamma"}, {savedMean, "savedMean"},
                     {savedInvStd, "savedInvStd"}, {dx, "dx"}, {dgamma, "dgamma"},
                     {dbeta, "dbeta"}}, op);
    doBatchNormBackward(g, x, dy, gamma, savedMean, savedInvStd, dx, dgamma, dbeta);
}

void Backend::batchNormReluForwardTraining(const BatchNormGeometry& g, const float* x,
                                           const float* gamma, const float* beta, float* z,
                                           float* y, float* runningMean, float* runningVar,
                                           float* savedMean, float* savedInvStd) {
    const OpLabel op = opLabel("batchNormReluForwardTraining");
    ops::checkBatchNormGeometry(g, true, op);
    requirePointers({{x, "x"}, {gamma, "gamma"}, {beta, "beta"}, {z, "z"}, {y, "y"},
                     {runningMean, "runningMean"}, {runningVar, "runningVar"},
                     {savedMean, "savedMean"}, {savedInvStd, "savedInvStd"}}, op);
    doBatchNormReluForwardTraining(g, x, gamma, beta, z, y, runningMean, runningVar, savedMean,
                                   savedInvStd);
}

void Backend::batchNormReluBackward(const BatchNormGeometry& g, const float* x, const float* y,
                                    const float* dy, const float* gamma, const float* beta,
                                    const float* savedMean, const float* savedInvStd, float* dz,
                                    float* dx, float* dgamma, float* dbeta) {
    const OpLabel op = opLabel("batchNormReluBackward");
    ops::checkBatchNormGeometry(g, true, op);
    requirePointers({{x, "x"}, {y, "y"}, {dy, "dy"}, {gamma, "gamma"}, {beta, "beta"},
                     {savedMean, "savedMean"}, {savedInvStd, "savedInvStd"}, {dz, "dz"},
                     {dx, "dx"}, {dgamma, "dgamma"}, {dbeta, "dbeta"}}, op);
    doBatchNormReluBackward(g, x, y, dy, gamma, beta, savedMean, savedInvStd, dz, dx, dgamma,
                            dbeta);
}

void Backend::convBatchNormReluForwardTraining(const ConvGeometry& g, const float* x,
                                               const float* w, const float* bias,
                                               const BatchNormGeometry& bn, const float* gamma,
                                               const float* beta, float* c, float* z, float* y,
                                               float* runningMean, float* runningVar,
                                               float* savedMean, float* savedInvStd) {
    const OpLabel op = opLabel("convBatchNormReluForwardTraining");
    ops::checkConvGeometry(g, op);
    ops::checkBatchNormGeometry(bn, true, op);
    ops::checkConvBatchNormChain(g, bn, op);
    requirePointers({{x, "x"}, {w, "w"}, {gamma, "gamma"}, {beta, "beta"}, {c, "c"}, {z, "z"},
                     {y, "y"}, {runningMean, "runningMean"}, {runningVar, "runningVar"},
                     {savedMean, "savedMean"}, {savedInvStd, "savedInvStd"}}, op);
    doConvBatchNormReluForwardTraining(g, x, w, bias, bn, gamma, beta, c, z, y, runningMean,
                                       runningVar, savedMean, savedInvStd);
}

void Backend::convBatchNormReluBackward(const ConvGeometry& g, const float* x, const float* w,
                                        const float* bias, const BatchNormGeometry& bn,
                                        const float* c, const float* y, const float* dy,
                                        const float* gamma, const float* beta,
                                        const float* savedMean, const float* savedInvStd,
                                        float* dz, float* dc, float* dw, float* dbias,
                                        float* dgamma, float* dbeta) {
    const OpLabel op = opLabel("convBatchNormReluBackward");
    ops::checkConvGeometry(g, op);
    ops::checkBatchNormGeometry(bn, true, op);
    ops::checkConvBatchNormChain(g, bn, op);
    requirePointers({{x, "x"}, {w, "w"}, {c, "c"}, {y, "y"}, {dy, "dy"}, {gamma, "gamma"},
                     {beta, "beta"}, {savedMean, "savedMean"}, {savedInvStd, "savedInvStd"},
                     {dz, "dz"}, {dc, "dc"}, {dw, "dw"}, {dgamma, "dgamma"}, {dbeta, "dbeta"}},
                    op);
    doConvBatchNormReluBackward(g, x, w, bias, bn, c, y, dy, gamma, beta, savedMean, savedInvStd,
                                dz, dc, dw, dbias, dgamma, dbeta);
}

void Backend::batchNormReluMaxPoolForwardTraining(const BatchNormGeometry& g,
                                                  const PoolGeometry& pool, const float* x,
                                                  const float* gamma, const float* beta, float* z,
                                                  float* r, float* y, float* runningMean,
                                                  float* runningVar, float* savedMean,
                                                  float* savedInvStd) {
    const OpLabel op = opLabel("batchNormReluMaxPoolForwardTraining");
    ops::checkBatchNormGeometry(g, true, op);
    ops::checkPoolGeometry(pool, op);
    ops::checkBatchNormMaxPoolChain(g, pool, op);
    requirePointers({{x, "x"}, {gamma, "gamma"}, {beta, "beta"}, {z, "z"}, {r, "r"}, {y, "y"},
                     {runningMean, "runningMean"}, {runningVar, "runningVar"},
                     {savedMean, "savedMean"}, {savedInvStd, "savedInvStd"}}, op);
    doBatchNormReluMaxPoolForwardTraining(g, pool, x, gamma, beta, z, r, y, runningMean,
                                          runningVar, savedMean, savedInvStd);
}

void Backend::batchNormReluMaxPoolBackward(const BatchNormGeometry& g, const PoolGeometry& pool,
                                           const float* x, const float* r, const float* y,
                                           const float* dy, const float* gamma, const float* beta,
                                           const float* savedMean, const float* savedInvStd,
                                           float* dr, float* dz, float* dx, float* dgamma,
                                           float* dbeta) {
    const OpLabel op = opLabel("batchNormReluMaxPoolBackward");
    ops::checkBatchNormGeometry(g, true, op);
    ops::checkPoolGeometry(pool, op);
    ops::checkBatchNormMaxPoolChain(g, pool, op);
    requirePointers({{x, "x"}, {r, "r"}, {y, "y"}, {dy, "dy"}, {gamma, "gamma"}, {beta, "beta"},
                     {savedMean, "savedMean"}, {savedInvStd, "savedInvStd"}, {dr, "dr"},
                     {dz, "dz"}, {dx, "dx"}, {dgamma, "dgamma"}, {dbeta, "dbeta"}}, op);
    doBatchNormReluMaxPoolBackward(g, pool, x, r, y, dy, gamma, beta, savedMean, savedInvStd, dr,
                                   dz, dx, dgamma, dbeta);
}

// ---- activations ------------------------------------------------------------------------------

void Backend::activationForward(Activation kind, float alpha, const float* x, float* y,
                                std::size_t count) {
    if (count == 0) return;
    const OpLabel op = opLabel("activationForward");
    ops::checkActivationKind(kind, op);
    requirePointers({{x, "x"}, {y, "y"}}, op);
    doActivationForward(kind, alpha, x, y, count);
}

void Backend::activationBackward(Activation kind, float alpha, const float* x, const float* y,
                                 const float* dy, float* dx, std::size_t count) {
    if (count == 0) return;
    const OpLabel op = opLabel("activationBackward");
    ops::checkActivationKind(kind, op);
    requirePointers({{x, "x"}, {y, "y"}, {dy, "dy"}, {dx, "dx"}}, op);
    doActivationBackward(kind, alpha, x, y, dy, dx, count);
}

// ---- dropout ----------------------------------------------------------------------------------

void Backend::dropoutMask(float probability, std::uint64_t seed, const StepScalars* step,
                          float* mask, std::size_t count) {
    const OpLabel op = opLabel("dropoutMask");
    ops::checkDropoutProbability(probability, op);
    if (count == 0) return;
    requirePointers({{step, "step"}, {mask, "mask"}}, op);
    doDropoutMask(probability, seed, step, mask, count);
}

// ---- dense ------------------------------------------------------------------------------------

void Backend::denseForward(const DenseGeometry& g, const float* x, const float* w,
                           const float* bias, float* y) {
    const OpLabel op = opLabel("denseForward");
    ops::checkDenseGeometry(g, op);
    requirePointers({{x, "x"}, {w, "w"}, {y, "y"}}, op);
    doDenseForward(g, x, w, bias, y);
}

void Backend::denseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                                float* dx) {
    const OpLabel op = opLabel("denseBackwardData");
    ops::checkDenseGeometry(g, op);
    requirePointers({{dy, "dy"}, {w, "w"}, {dx, "dx"}}, op);
    doDenseBackwardData(g, dy, w, dx);
}

void Backend::denseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy,
                                   float* dw, float* dbias) {
    const OpLabel op = opLabel("denseBackwardWeights");
    ops::checkDenseGeometry(g, op);
    requirePointers({{x, "x"}, {dy, "dy"}, {dw, "dw"}}, op);
    doDenseBackwardWeights(g, x, dy, dw, dbias);
}

// ---- concat -----------------------------------------------------------------------------------

void Backend::copyChannels(int batch, int spatial, int channels, const float* src,
                           int srcChannels, int srcOffset, float* dst, int dstChannels,
                           int dstOffset) {
    const OpLabel op = opLabel("copyChannels");
    ops::checkCopyChannels(batch, spatial, channels, srcChannels, srcOffset, dstChannels,
                           dstOffset, op);
    requirePointers({{src, "src"}, {dst, "dst"}}, op);
    doCopyChannels(batch, spatial, channels, src, srcChannels, srcOffset, dst, dstChannels,
                   dstOffset);
}

// ---- loss -------------------------------------------------------------------------------------

void Backend::softmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                         const std::int32_t* labels, const float* classWeights,
                                         float* probabilities, float* loss, const LabelMix& mix,
                                         const SoftTargets& soft) {
    const OpLabel op = opLabel("softmaxCrossEntropyForward");
    ops::checkLossGeometry(g, op);
    ops::checkLabelMix(mix, op);
    ops::checkSoftTargets(soft, op);
    requirePointers({{logits, "logits"}, {labels, "labels"}, {probabilities, "probabilities"},
                     {loss, "loss"}}, op);
    doSoftmaxCrossEntropyForward(g, logits, labels, classWeights, probabilities, loss, mix, soft);
}

void Backend::softmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                          const std::int32_t* labels, const float* classWeights,
                                          float* dlogits, const LabelMix& mix,
                                          const SoftTargets& soft) {
    const OpLabel op = opLabel("softmaxCrossEntropyBackward");
    ops::checkLossGeometry(g, op);
    ops::checkLabelMix(mix, op);
    ops::checkSoftTargets(soft, op);
    requirePointers({{probabilities, "probabilities"}, {labels, "labels"}, {dlogits, "dlogits"}},
                    op);
    doSoftmaxCrossEntropyBackward(g, probabilities, labels, classWeights, dlogits, mix, soft);
}

// ---- augmentation -----------------------------------------------------------------------------

void Backend::augmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                            float* images) {
    const OpLabel op = opLabel("augmentImages");
    ops::checkAugmentGeometry(g, op);
    requirePointers({{augmentations, "augmentations"}, {images, "images"}}, op);
    doAugmentImages(g, augmentations, images);
}

// ---- metrics ----------------------------------------------------------------------------------

void Backend::accumulateMetrics(const MetricsGeometry& g, const float* logits,
                                const std::int32_t* labels, const float* batchLoss,
                                double* sums) {
    const OpLabel op = opLabel("accumulateMetrics");
    ops::checkMetricsGeometry(g, op);
    requirePointers({{logits, "logits"}, {labels, "labels"}, {sums, "sums"}}, op);
    doAccumulateMetrics(g, logits, labels, batchLoss, sums);
}

// ---- optimisers -------------------------------------------------------------------------------

void Backend::sgdUpdate(const SgdSettings& s, const StepScalars* step, float* params,
                        const float* grads, float* velocity, std::size_t count) {
    const OpLabel op = opLabel("sgdUpdate");
    ops::checkSgdSettings(s, op);
    if (count == 0) return;
    requirePointers({{step, "step"}, {params, "params"}, {grads, "grads"}}, op);
    if (s.momentum > 0.0f) requirePointer(velocity, "velocity", op);
    doSgdUpdate(s, step, params, grads, velocity, count);
}

void Backend::adamUpdate(const AdamSettings& s, const StepScalars* step, float* params,
                         const float* grads, float* m, float* v, std::size_t count) {
    const OpLabel op = opLabel("adamUpdate");
    ops::checkAdamSettings(s, op);
    if (count == 0) return;
    requirePointers({{step, "step"}, {params, "params"}, {grads, "grads"}, {m, "m"}, {v, "v"}},
                    op);
    doAdamUpdate(s, step, params, grads, m, v, count);
}

// ---- default implementations ------------------------------------------------------------------

void Backend::doUploadActivations(const TensorShape& shape, const float* hostSource,
                                  float* destination) {
    upload(destination, hostSource, std::size_t(shape.count()) * sizeof(float));
}

void Backend::doDownloadActivations(const TensorShape& shape, const float* source,
                                    float* hostDestination) {
    download(hostDestination, source, std::size_t(shape.count()) * sizeof(float));
}

void Backend::doFlattenForward(const TensorShape& shape, const float* x, float* y) {
    copy(y, x, activationBytes(std::size_t(shape.count())));
}

void Backend::doFlattenBackward(const TensorShape& shape, const float* dy, float* dx) {
    copy(dx, dy, activationBytes(std::size_t(shape.count())));
}

void Backend::doConvBatchNormReluInference(const ConvGeometry& g, const float* x, const float* w,
                                           const float* bias, const BatchNormGeometry& bn,
                                           const float* gamma, const float* beta,
                                           const float* runningMean, const float* runningVar,
                                           float* y) {
    doConvForward(g, x, w, bias, y);
    doBatchNormForwardInference(bn, y, gamma, beta, runningMean, runningVar, y);
    doActivationForward(Activation::Relu, 0.0f, y, y, std::size_t(g.outputCount()));
}

void Backend::doBatchNormReluForwardTraining(const BatchNormGeometry& g, const float* x,
                                             const float* gamma, const float* beta, float* z,
                                             float* y, float* runningMean, float* runningVar,
                                             float* savedMean, float* savedInvStd) {
    doBatchNormForwardTraining(g, x, gamma, beta, z, runningMean, runningVar, savedMean,
                               savedInvStd);
    doActivationForward(Activation::Relu, 0.0f, z, y, std::size_t(g.count()));
}

void Backend::doBatchNormReluBackward(const BatchNormGeometry& g, const float* x, const float* y,
                                      const float* dy, const float* gamma, const float*,
                                      const float* savedMean, const float* savedInvStd, float* dz,
                                      float* dx, float* dgamma, float* dbeta) {
    doActivationBackward(Activation::Relu, 0.0f, y, y, dy, dz, std::size_t(g.count()));
    doBatchNormBackward(g, x, dz, gamma, savedMean, savedInvStd, dx, dgamma, dbeta);
}

void Backend::doConvBatchNormReluForwardTraining(const ConvGeometry& g, const float* x,
                                                 const float* w, const float* bias,
                                                 const BatchNormGeometry& bn, const float* gamma,
                                                 const float* beta, float* c, float* z, float* y,
                                                 float* runningMean, float* runningVar,
                                                 float* savedMean, float* savedInvStd) {
    doConvForward(g, x, w, bias, c);
    doBatchNormReluForwardTraining(bn, c, gamma, beta, z, y, runningMean, runningVar, savedMean,
                                   savedInvStd);
}

void Backend::doConvBatchNormReluBackward(const ConvGeometry& g, const float* x, const float*,
                                          const float*, const BatchNormGeometry& bn,
                                          const float* c, const float* y, const float* dy,
                                          const float* gamma, const float* beta,
                                          const float* savedMean, const float* savedInvStd,
                                          float* dz, float* dc, float* dw, float* dbias,
                                          float* dgamma, float* dbeta) {
    doBatchNormReluBackward(bn, c, y, dy, gamma, beta, savedMean, savedInvStd, dz, dc, dgamma,
                            dbeta);
    doConvBackwardFilter(g, x, dc, dw, dbias);
}

void Backend::doBatchNormReluMaxPoolForwardTraining(const BatchNormGeometry& g,
                                                    const PoolGeometry& pool, const float* x,
                                                    const float* gamma, const float* beta,
                                                    float* z, float* r, float* y,
                                                    float* runningMean, float* runningVar,
                                                    float* savedMean, float* savedInvStd) {
    doBatchNormReluForwardTraining(g, x, gamma, beta, z, r, runningMean, runningVar, savedMean,
                                   savedInvStd);
    doPoolForward(pool, r, y);
}

void Backend::doBatchNormReluMaxPoolBackward(const BatchNormGeometry& g, const PoolGeometry& pool,
                                             const float* x, const float* r, const float* y,
                                             const float* dy, const float* gamma,
                                             const float* beta, const float* savedMean,
                                             const float* savedInvStd, float* dr, float* dz,
                                             float* dx, float* dgamma, float* dbeta) {
    doPoolBackward(pool, r, y, dy, dr);
    doBatchNormReluBackward(g, x, r, dr, gamma, beta, savedMean, savedInvStd, dz, dx, dgamma,
                            dbeta);
}

}  // namespace cnnstudio
