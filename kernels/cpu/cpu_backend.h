// The `cpu` backend: fast and multithreaded. oneDNN primitives for convolution, pooling,
// dense and activations (one plan per geometry, built on first use and replayed); OpenMP
// loops for batch normalisation (and its ReLU and ReLU + max-pool chains, one pass each way),
// max-pool backward, the elementwise ops, dropout, concat, the loss and the optimisers. Results
// match `cpu-ref` (the definition of correct) to float rounding in fp32, and to bf16's rounding
// in bf16 (where the CPU has bf16 instructions, AVX512-BF16 or AMX).
// Precision (BackendOptions::precision):
//   fp32  activations fp32 NCHW; convolutions may run Winograd (conv.cpp).
//   bf16  mixed, as the GPU backends' bf16: activations bf16 and channels-last (NHWC,
//         activationFormat()), which oneDNN's convolutions, pooling, inner products and
//         eltwise primitives read and write as they are (nhwc) and our loops widen to fp32 and
//         round back to nearest even (activation_storage.h); weights, gradients, biases,
//         batch-norm and optimiser state stay fp32 (convolutions and dense layers stage bf16
//         copies of their weights). Batch norm and its chains run on
//         batchnorm_channels_last.h. Activations cross to and from fp32 NCHW only at uploads,
//         downloads and Flatten (activation_layout.cpp, oneDNN reorders).
// Each op family lives in its own file of this folder, named as in every backend folder
// (elementwise.cpp, conv.cpp, pool.cpp, batchnorm.cpp, activation.cpp, dropout.cpp, dense.cpp,
// concat.cpp, loss.cpp, optimizer.cpp, augment.cpp, activation_layout.cpp); memory and the
// factory in cpu_backend.cpp.
// Ops share the plan caches and work buffers, so one thread at a time drives a backend;
// allocate, free, upload, download and copy touch no shared state and may run beside them
// (in bf16, uploadActivations, downloadActivations and flatten are ops: they use the plans).
#pragma once

#include <vector>

#include "cnnstudio/backend.h"
#include "cpu/dnnl_support.h"

namespace cnnstudio::cpu {

// Loops over fewer elements than this run on one thread: forking costs a few microseconds,
// about what one core needs for 16k floats.
inline constexpr std::int64_t parallelThreshold = std::int64_t(1) << 14;

// ---- plans, one per geometry ------------------------------------------------------------------

struct ConvKey {
    ConvGeometry geometry;
    bool withBias = false;  // backward data: always false
    bool operator==(const ConvKey&) const = default;
};
struct ConvKeyHash {
    std::size_t operator()(const ConvKey& key) const;
};
struct ConvForwardPlan {
    Plan plan;
    Operand x, w, bias, y;
};
struct ConvBackwardDataPlan {
    Plan plan;
    Operand dy, w, dx;
};
struct ConvBackwardFilterPlan {
    Plan plan;
    Operand x, dy, dw, dbias;
};

struct PoolKeyHash {
    std::size_t operator()(const PoolGeometry& g) const;
};
struct PoolForwardPlan {
    Plan plan;
    Operand x, y;
};
struct PoolBackwardPlan {  // average pooling only: max pooling backward is our own loop
    Plan plan;
    Operand dy, dx;
};

struct DenseKey {
    DenseGeometry geometry;
    bool withBias = false;  // backward data: always false
    bool operator==(const DenseKey&) const = default;
};
struct DenseKeyHash {
    std::size_t operator()(const DenseKey& key) const;
};
struct DenseForwardPlan {
    Plan plan;
    Operand x, w, bias, y;
};
struct DenseBackwardDataPlan {
    Plan plan;
    Operand dy, w, dx;
};
struct DenseBackwardWeightsPlan {
    Plan plan;
    Operand x, dy, dw, dbias;
};

struct ActivationKey {
    Activation kind = Activation::Relu;
    std::uint32_t alphaBits = 0;  // bits, so that any alpha (NaN too) finds its plan again
    std::size_t count = 0;
    bool operator==(const ActivationKey&) const = default;
};
struct ActivationKeyHash {
    std::size_t operator()(const ActivationKey& key) const;
};
struct ActivationPlan {
    Plan plan;
    Operand in, out, dy;  // forward: in = x, out = y; backward: in = x, out = dx
};

// bf16 precision: a reorder of an activation tensor between two layouts.
enum class LayoutChange { Upload, Download, FlattenForward, FlattenBackward };
struct LayoutKey {
    TensorShape shape;
    LayoutChange change = LayoutChange::Upload;
    bool operator==(const LayoutKey&) const = default;
};
struct LayoutKeyHash {
    std::size_t operator()(const LayoutKey& key) const;
};
struct LayoutPlan {
    Plan plan;
    Operand from, to;
};

// ---- the backend ----------------------------------------------------------------------------------

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(const BackendOptions& options);

    std::string name() const override { return "cpu"; }
    std::string description() const override;
    Precision precision() const override { return precision_; }
    ActivationFormat activationFormat() const override;  // bf16 channels-last in bf16
    bool isDevice() const override { return false; }

    void* allocateBytes(std::size_t bytes) override;
    void freeBytes(void* pointer) noexcept override;
    void synchronize() override;

protected:
    // ---- the ops, arguments checked by Backend; each in the file named for it --------------
    void doUpload(void* destination, const void* hostSource, std::size_t bytes) override;
    void doDownload(void* hostDestination, const void* source, std::size_t bytes) override;
    void doCopy(void* destination, const void* source, std::size_t bytes) override;

    // bf16: reorders between fp32 NCHW and the stored bf16 NHWC (activation_layout.cpp); fp32:
    // the Backend defaults.
    void doUploadActivations(const TensorShape& shape, const float* hostSource,
                             float* destination) override;
    void doDownloadActivations(const TensorShape& shape, const float* source,
                               float* hostDestination) override;
    void doFlattenForward(const TensorShape& shape, const float* x, float* y) override;
    void doFlattenBackward(const TensorShape& shape, const float* dy, float* dx) override;

    void doFill(float* y, float value, std::size_t count) override;
    void doAxpy(float alpha, const float* x, float* y, std::size_t count) override;
    void doAdd(const float* a, const float* b, float* y, std::size_t count) override;
    void doMultiply(const float* a, const float* b, float* y, std::size_t count) override;
    void doScale(float* y, float alpha, std::size_t count) override;

    void doConvForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                       float* y) override;
    void doConvBackwardData(const ConvGeometry& g, const float* dy, const float* w, float* dx) override;
    void doConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw,
                              float* dbias) override;

    void doPoolForward(const PoolGeometry& g, const float* x, float* y) override;
    void doPoolBackward(const PoolGeometry& g, const float* x, const float* y, const float* dy,
                        float* dx) override;

    void doBatchNormForwardTraining(const BatchNormGeometry& g, const float* x, const float* gamma,
                                    const float* beta, float* y, float* runningMean, float* runningVar,
                                    float* savedMean, float* savedInvStd) override;
    void doBatchNormForwardInference(const BatchNormGeometry& g, const float* x, const float* gamma,
                                     const float* beta, const float* runningMean,
                                     const float* runningVar, float* y) override;
    void doBatchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                             const float* gamma, const float* savedMean, const float* savedInvStd,
                             float* dx, float* dgamma, float* dbeta) override;
    // The chains in one pass each way (z, dz, r and dr left unwritten); pooling only for 2x2
    // windows of stride 2 that tile the image, else Backend's default.
    void doBatchNormReluForwardTraining(const BatchNormGeometry& g, const float* x, const float* gamma,
                                        const float* beta, float* z, float* y, float* runningMean,
                                        float* runningVar, float* savedMean, float* savedInvStd) override;
    void doBatchNormReluBackward(const BatchNormGeometry& g, const float* x, const float* y,
                                 const float* dy, const float* gamma, const float* beta,
                                 const float* savedMean, const float* savedInvStd, float* dz, float* dx,
                                 float* dgamma, float* dbeta) override;
    void doBatchNormReluMaxPoolForwardTraining(const BatchNormGeometry& g, const PoolGeometry& pool,
                                               const float* x, const float* gamma, const float* beta,
                                               float* z, float* r, float* y, float* runningMean,
                                               float* runningVar, float* savedMean,
                                               float* savedInvStd) override;
    void doBatchNormReluMaxPoolBackward(const BatchNormGeometry& g, const PoolGeometry& pool,
                                        const float* x, const float* r, const float* y, const float* dy,
                                        const float* gamma, const float* beta, const float* savedMean,
                                        const float* savedInvStd, float* dr, float* dz, float* dx,
                                        float* dgamma, float* dbeta) override;

    void doActivationForward(Activation kind, float alpha, const float* x, float* y,
                             std::size_t count) override;
    void doActivationBackward(Activation kind, float alpha, const float* x, const float* y,
                              const float* dy, float* dx, std::size_t count) override;

    void doDropoutMask(float probability, std::uint64_t seed, const StepScalars* step, float* mask,
                       std::size_t count) override;

    void doDenseForward(const DenseGeometry& g, const float* x, const float* w, const float* bias,
                        float* y) override;
    void doDenseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                             float* dx) override;
    void doDenseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy, float* dw,
                                float* dbias) override;

    void doCopyChannels(int batch, int spatial, int channels, const float* src, int srcChannels,
                        int srcOffset, float* dst, int dstChannels, int dstOffset) override;

    void doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                      const std::int32_t* labels, const float* classWeights,
                                      float* probabilities, float* loss,
                                      const LabelMix& mix, const SoftTargets& soft) override;
    void doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                       const std::int32_t* labels, const float* classWeights,
                                       float* dlogits, const LabelMix& mix, const SoftTargets& soft) override;

    void doAugmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                         float* images) override;  // augment.cpp

    void doAccumulateMetrics(const MetricsGeometry& g, const float* logits, const std::int32_t* labels,
                             const float* batchLoss, double* sums) override;

    void doSgdUpdate(const SgdSettings& s, const StepScalars* step, float* params, const float* grads,
                     float* velocity, std::size_t count) override;
    void doAdamUpdate(const AdamSettings& s, const StepScalars* step, float* params, const float* grads,
                      float* m, float* v, std::size_t count) override;

private:
    // bf16 precision keeps activations bf16 channels-last (activationFormat()).
    bool storesBf16() const { return precision_ == Precision::Bf16; }
    // Runs the reorder of `key` from `from` to `to` (activation_layout.cpp).
    void changeLayout(const LayoutKey& key, const void* from, void* to);

    ConvForwardPlan& convForwardPlan(const ConvKey& key);
    ConvBackwardDataPlan& convBackwardDataPlan(const ConvKey& key);
    ConvBackwardFilterPlan& convBackwardFilterPlan(const ConvKey& key);
    PoolForwardPlan& poolForwardPlan(const PoolGeometry& g);
    PoolBackwardPlan& poolBackwardPlan(const PoolGeometry& g);
    DenseForwardPlan& denseForwardPlan(const DenseKey& key);
    DenseBackwardDataPlan& denseBackwardDataPlan(const DenseKey& key);
    DenseBackwardWeightsPlan& denseBackwardWeightsPlan(const DenseKey& key);
    ActivationPlan& activationForwardPlan(const ActivationKey& key);
    ActivationPlan& activationBackwardPlan(const ActivationKey& key);

    int threads_;
    Precision precision_;
    dnnl::engine engine_;
    dnnl::stream stream_;
    dnnl::primitive_attr attributes_;  // user-managed scratchpad
    SharedBuffers buffers_;
    std::vector<float> augmentSource_;  // augmentImages' copy of the batch, kept between calls
    SharedBuffer downloadStaging_;      // bf16 downloadActivations' fp32 NCHW copy

    PlanCache<ConvKey, ConvForwardPlan, ConvKeyHash> convForwardPlans_;
    PlanCache<ConvKey, ConvBackwardDataPlan, ConvKeyHash> convBackwardDataPlans_;
    PlanCache<ConvKey, ConvBackwardFilterPlan, ConvKeyHash> convBackwardFilterPlans_;
    PlanCache<PoolGeometry, PoolForwardPlan, PoolKeyHash> poolForwardPlans_;
    PlanCache<PoolGeometry, PoolBackwardPlan, PoolKeyHash> poolBackwardPlans_;
    PlanCache<DenseKey, DenseForwardPlan, DenseKeyHash> denseForwardPlans_;
    PlanCache<DenseKey, DenseBackwardDataPlan, DenseKeyHash> denseBackwardDataPlans_;
    PlanCache<DenseKey, DenseBackwardWeightsPlan, DenseKeyHash> denseBackwardWeightsPlans_;
    PlanCache<ActivationKey, ActivationPlan, ActivationKeyHash> activationForwardPlans_;
    PlanCache<ActivationKey, ActivationPlan, ActivationKeyHash> activationBackwardPlans_;
    PlanCache<LayoutKey, LayoutPlan, LayoutKeyHash> layoutPlans_;
};

}  // namespace cnnstudio::cpu
