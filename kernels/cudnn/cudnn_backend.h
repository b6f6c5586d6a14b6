// CudnnBackend: the "cudnn" backend. It is the cuda backend (our kernels, stream, memory pool and
// CUDA-graph capture) with cuDNN and cuBLAS where they are faster. Where each op runs:
//
//   op                               fp32 / tf32                      bf16 (channels-last)
//   ------------------------------   ------------------------------   -------------------------------
//   uploadActivations, download...,  Backend default (copies)         ours, inherited from CudaBackend
//     flattenForward/Backward                                           (kernels/cuda/activation_layout.cpp)
//   convForward, convBackwardData,   cuDNN legacy API (conv.cpp)      cuDNN graph API (conv_channels_last
//     convBackwardFilter                                                .cpp, conv_engine.cpp); input
//                                                                       layers' (< 8 channels) forward
//                                                                       and backward filter: ours,
//                                                                       kernels/cuda/small_input_conv.cu
//   convBatchNormReluInference       ours folds the batch norm into the weights (fold_batch_norm.cu),
//                                    then cuDNN's fused convolution + bias + ReLU (conv.cpp)
//   poolForward, poolBackward        cuDNN (pool.cpp)                 ours: kernels/cuda/pool.cu
//   batchNormForwardTraining,        cuDNN (batchnorm.cpp)            cuDNN's persistent *Ex kernels
//     ...Inference, ...Backward
//   batchNormReluForwardTraining,    Backend default: the two ops     ours (kernels/cuda/batchnorm
//     batchNormReluBackward            above, in turn                   _channels_last.cu)
//   convBatchNormReluForward-        Backend default: the ops above   inputs of < 8 channels: ours
//     Training, ...Backward            in turn                          (kernels/cuda/small_input
//                                                                       _conv.cu), else the default
//   batchNormReluMaxPoolForward-     Backend default: the fused pair  2x2 windows of stride 2: ours
//     Training, ...Backward            above, then the pooling op       (kernels/cuda/batchnorm_channels
//                                                                       _last.cu), else the default
//   activationForward/Backward       relu: cuDNN (activation.cpp);    ours (kernels/cuda/activation.cu)
//                                    leaky relu, elu, silu: ours
//   denseForward, ...BackwardData,   cuBLAS GEMMs, cuDNN bias         cuBLAS GEMMs, our channels-last
//     ...BackwardWeights               (dense.cpp)                      bias kernels (cuda/layout.cu)
//   fill, axpy, add, multiply,       ours, inherited from CudaBackend (kernels/cuda/elementwise.cu,
//     scale, dropoutMask,              dropout.cu, concat.cu, loss.cu, metrics.cu, optimizer.cu,
//     copyChannels, softmax cross-     augment.cu); they read activationFormat(), so they run on
//     entropy, accumulateMetrics,      bf16 channels-last too
//     sgdUpdate, adamUpdate,
//     augmentImages
//
// The class below overrides what runs on cuDNN or cuBLAS in some precision (and falls back to
// CudaBackend::do<Op> by name where ours runs instead); the using-declarations at its end name
// the ops it inherits from CudaBackend unchanged.
//
// Precision (BackendOptions::precision):
//   fp32  strict: TF32 is off everywhere (cuDNN FMA math, cuBLAS fp32 compute).
//   tf32  convolutions and GEMMs on the tensor cores with TF32 inputs, fp32 accumulation.
//   bf16  mixed: activations are stored bf16 and channels last (NHWC, activationFormat()), what
//         the tensor cores read fastest; every op reads and writes them directly and computes
//         in fp32 registers (convolutions and GEMMs accumulate in fp32). Weights, gradients and
//         optimiser state stay fp32 (master weights): each convolution and GEMM converts its
//         weights to a bf16 copy (KRSC for convolutions) in scratch memory, and weight
//         gradients come back to fp32 the same way. Activations cross to and from fp32 NCHW
//         only at the plan's edges: uploadActivations, downloadActivations, flatten.
//
// Steady state never allocates and never searches: the first call with a new geometry builds its
// descriptors, benchmarks cuDNN's convolution algorithms (cudnnFind*AlgorithmEx on scratch
// buffers) and caches both; later calls only enqueue work. When a new geometry first appears
// while a step is being captured, benchmarking is impossible (it synchronises), so cuDNN's
// heuristics choose instead. Each op file (conv.cpp, pool.cpp, batchnorm.cpp, activation.cpp,
// dense.cpp) holds that op's plans and calls.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cudnn.h>

#include "cnnstudio/backend_buffer.h"

#include "cnnstudio/kernels/cudnn_stats.h"
#include "cuda/cuda_backend.h"
#include "cudnn/conv_engine.h"
#include "cudnn/cudnn_descriptors.h"
#include "cudnn/held_weights.h"

namespace cnnstudio::kernels {

// One convolution algorithm chosen for one direction of one geometry.
struct ConvAlgorithmChoice {
    int algorithm = -1;  // a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
    cudnnMathType_t mathType = CUDNN_DEFAULT_MATH;
    std::size_t workspaceBytes = 0;
    bool benchmarked = false;  // false: picked by heuristics during capture
    bool chosen() const { return algorithm >= 0; }
};

// bf16: zero-padded copies for a convolution whose input channels do not fill whole 16-byte
// vectors (conv.cpp): w, and once needed x and dx, with inChannels rounded up to 8. An input
// layer (fewer than 8 channels) runs forward and backward filter on our direct kernels
// (small_input_conv.h), so only its backward data, on cuDNN, pads (w and dx).
struct ChannelPadding {
    static constexpr int kChannelVector = 8;  // bf16 channels in 16 bytes
    ChannelPadding(Backend& memory, const ConvGeometry& g);
    void* input(Backend& memory);          // allocated on first use
    void* inputGradient(Backend& memory);  // likewise

    ConvGeometry geometry;  // the padded convolution the engines run
    BackendBuffer<__nv_bfloat16> filter;

private:
    BackendBuffer<__nv_bfloat16> input_, inputGradient_;
};

// Everything cuDNN needs for one convolution geometry, built on its first use.
struct ConvPlan {
    TensorDescriptor input, output;  // x/dx and y/dy as the backend stores activations
    FilterDescriptor filter;         // w/dw in the compute type (KRSC with bf16)
    TensorDescriptor outputFloat;    // y/dy in fp32, for the bias (fp32 and tf32 only)
    TensorDescriptor bias;           // (1, outChannels, 1, 1) fp32 (fp32 and tf32 only)
    ConvolutionDescriptor convolution;
    ConvAlgorithmChoice forward, backwardData, backwardFilter;
    // bf16: one graph-API engine per direction (ConvDirection order), chosen on first use.
    std::array<std::unique_ptr<ConvEngine>, 3> engines;
    std::unique_ptr<ChannelPadding> padding;  // bf16, input channels not a multiple of 8
    TensorDescriptor fusedBias;  // (1, outChannels, 1, 1) in the compute type, once fused
    std::size_t fusedWorkspaceBytes = 0;
};

struct PoolPlan {
    TensorDescriptor input, output;
    PoolingDescriptor pooling;
};

struct BatchNormPlan {
    cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL;  // _PERSISTENT for bf16 NHWC
    TensorDescriptor data;        // (batch, channels, spatial, 1) in the activation format
    TensorDescriptor parameters;  // (1, channels, 1, 1), derived by cuDNN
    // Of the *Ex calls (bf16 NHWC), the larger of plain and ReLU-fused batch norm.
    std::size_t workspaceBytes = 0, reserveBytes = 0;
};

struct DensePlan {
    TensorDescriptor output;  // y/dy as (batch, outFeatures, 1, 1), for the bias (fp32 only)
    TensorDescriptor bias;    // (1, outFeatures, 1, 1) (fp32 only)
};

struct ConvKey {
    ConvGeometry geometry;
    Precision precision = Precision::Fp32;
    bool operator==(const ConvKey&) const = default;
};
struct ConvKeyHash {
    std::size_t operator()(const ConvKey& key) const noexcept;
};
struct PoolGeometryHash {
    std::size_t operator()(const PoolGeometry& g) const noexcept;
};
struct BatchNormGeometryHash {
    std::size_t operator()(const BatchNormGeometry& g) const noexcept;
};
struct DenseGeometryHash {
    std::size_t operator()(const DenseGeometry& g) const noexcept;
};

class CudnnBackend : public CudaBackend {
public:
    // Creates the cuDNN and cuBLAS handles on the backend's device and stream and sets the math
    // modes of options.precision. Throws Error when no usable device exists.
    explicit CudnnBackend(const BackendOptions& options);
    ~CudnnBackend() override;

    std::string name() const override;         // "cudnn"
    std::string description() const override;  // "NVIDIA H200 (device 0), cuDNN 9.14.0, tf32"

    CudnnStats stats() const;

    // bf16: a hold keeps the staged copies of convolution filters and dense weights from the
    // forward pass for the backward pass (held_weights.h). As it begins, it stages those of the
    // hold before again on the side stream, beside the ops that follow until the first reads
    // one (in fer-cnn, the input layer's, which reads the fp32 weights).
    void beginWeightsHeld(std::span<const float> weights) override;
    void endWeightsHeld() noexcept override;

protected:
    // Points the cuDNN handle at the stream ops go to (CudaBackend::enqueueWeightGradient).
    // cuBLAS has a handle per stream instead (cublas()).
    void bindStream(cudaStream_t stream) override;

    // ---- convolution (conv.cpp) -----------------------------------------------------------
    void doConvForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                       float* y) override;
    void doConvBackwardData(const ConvGeometry& g, const float* dy, const float* w, float* dx) override;
    void doConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw,
                              float* dbias) override;

    // Inference: the batch norm folded into the weights and a bias, then cuDNN's fused
    // convolution + bias + ReLU.
    void doConvBatchNormReluInference(const ConvGeometry& g, const float* x, const float* w,
                                      const float* bias, const BatchNormGeometry& bn,
                                      const float* gamma, const float* beta, const float* runningMean,
                                      const float* runningVar, float* y) override;

    // ---- pooling (pool.cpp) ---------------------------------------------------------------
    void doPoolForward(const PoolGeometry& g, const float* x, float* y) override;
    void doPoolBackward(const PoolGeometry& g, const float* x, const float* y, const float* dy,
                        float* dx) override;

    // ---- batch normalisation (batchnorm.cpp) -----------------------------------------------
    void doBatchNormForwardTraining(const BatchNormGeometry& g, const float* x, const float* gamma,
                                    const float* beta, float* y, float* runningMean, float* runningVar,
                                    float* savedMean, float* savedInvStd) override;
    void doBatchNormForwardInference(const BatchNormGeometry& g, const float* x, const float* gamma,
                                     const float* beta, const float* runningMean,
                                     const float* runningVar, float* y) override;
    void doBatchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                             const float* gamma, const float* savedMean, const float* savedInvStd,
                             float* dx, float* dgamma, float* dbeta) override;

    // ---- activations (activation.cpp): relu through cuDNN in fp32/tf32, the rest ours ------
    void doActivationForward(Activation kind, float alpha, const float* x, float* y,
                             std::size_t count) override;
    void doActivationBackward(Activation kind, float alpha, const float* x, const float* y,
                              const float* dy, float* dx, std::size_t count) override;

    // ---- dense (dense.cpp) ----------------------------------------------------------------
    void doDenseForward(const DenseGeometry& g, const float* x, const float* w, const float* bias,
                        float* y) override;
    void doDenseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                             float* dx) override;
    void doDenseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy, float* dw,
                                float* dbias) override;

    // ---- ours, inherited from CudaBackend unchanged (kernels/cuda/<op>.cu) -----------------
    using CudaBackend::doUploadActivations;
    using CudaBackend::doDownloadActivations;
    using CudaBackend::doFlattenForward;
    using CudaBackend::doFlattenBackward;
    using CudaBackend::doFill;
    using CudaBackend::doAxpy;
    using CudaBackend::doAdd;
    using CudaBackend::doMultiply;
    using CudaBackend::doScale;
    using CudaBackend::doDropoutMask;
    using CudaBackend::doCopyChannels;
    using CudaBackend::doSoftmaxCrossEntropyForward;
    using CudaBackend::doSoftmaxCrossEntropyBackward;
    using CudaBackend::doAugmentImages;
    using CudaBackend::doAccumulateMetrics;
    using CudaBackend::doSgdUpdate;
    using CudaBackend::doAdamUpdate;
    using CudaBackend::doBatchNormReluForwardTraining;
    using CudaBackend::doBatchNormReluBackward;
    using CudaBackend::doBatchNormReluMaxPoolForwardTraining;
    using CudaBackend::doBatchNormReluMaxPoolBackward;
    using CudaBackend::doConvBatchNormReluForwardTraining;
    using CudaBackend::doConvBatchNormReluBackward;

private:
    // ---- shared helpers (cudnn_backend.cpp) ------------------------------------------------
    cudnnTensorFormat_t activationLayout() const;  // CUDNN_TENSOR_NCHW or CUDNN_TENSOR_NHWC
    bool streamIsCapturing() const;
    // Device memory for cuDNN's algorithm benchmark; bounded by what is free on the device.
    std::size_t searchWorkspaceLimit() const;
    cudnnDataType_t computeType() const;       // CUDNN_DATA_FLOAT or CUDNN_DATA_BFLOAT16
    cudnnMathType_t requestedMathType() const;  // by precision

    // ---- convolution (conv.cpp) ------------------------------------------------------------
    ConvPlan& convPlan(const ConvGeometry& g, const OpLabel& op);  // checks the index limit on first use
    // fp32/tf32, on the first call for a plan: benchmark (or, during capture, ask the
    // heuristics) and cache the algorithm. x, w, dy are the caller's operands.
    void chooseForwardAlgorithm(const ConvGeometry& g, ConvPlan& plan, const float* x,
                                const float* w);
    void chooseBackwardDataAlgorithm(const ConvGeometry& g, ConvPlan& plan, const float* dy,
                                     const float* w);
    void chooseBackwardFilterAlgorithm(const ConvGeometry& g, ConvPlan& plan, const float* x,
                                       const float* dy);
    void recordChoice(const ConvGeometry& g, const char* direction, const ConvAlgorithmChoice& choice);
    // ---- bf16 channels-last convolution (conv_channels_last.cpp) ----------------------------
    void convForwardChannelsLast(const ConvGeometry& g, ConvPlan& plan, const float* x,
                                 const float* w, const float* bias, float* y);
    void convBackwardDataChannelsLast(const ConvGeometry& g, ConvPlan& plan, const float* dy,
                                      const float* w, float* dx);
    void convBackwardFilterChannelsLast(const ConvGeometry& g, ConvPlan& plan, const float* x,
                                        const float* dy, float* dw, float* dbias);
    // Runs a direction that reads the filter (forward, backward data): w staged as bf16 KRSC
    // (and padded) in the workspace, next to the engine's own workspace; during a hold, the
    // unpadded filter is staged once into heldWeights_ and read there by both directions.
    void runWithStagedFilter(const ConvGeometry& g, ConvPlan& plan, const ConvEngine& engine,
                             const float* w, ConvOperands operands);
    // The plan's graph-API engine for `direction`, chosen on first use by timing on
    // `operands` (w is staged from the fp32 `w` for the directions that read it).
    ConvEngine& convEngine(const ConvGeometry& g, ConvPlan& plan, ConvDirection direction,
                           ConvOperands operands, const float* w);
    // bf16 with plan.padding: x, or a staged KRSC filter, copied into the zero-padded buffers,
    // which are returned; otherwise the argument itself.
    const void* padInput(const ConvGeometry& g, ConvPlan& plan, const float* x);
    const void* padFilter(const ConvGeometry& g, ConvPlan& plan, const void* staged);
    // The filter in the compute type and layout: w itself in fp32/tf32; in bf16 a KRSC bf16
    // copy written to `room` (filterStagingBytes(g) bytes), which is returned.
    std::size_t filterStagingBytes(const ConvGeometry& g) const;
    const void* stageFilter(const ConvGeometry& g, const float* w, void* room);
    // bf16: the KRSC bf16 filter gradient in `room` back to fp32 KCRS dw.
    void unstageFilterGradient(const ConvGeometry& g, const void* room, float* dw);

    // ---- pooling, batch norm, activation ----------------------------------------------------
    PoolPlan& poolPlan(const PoolGeometry& g, const OpLabel& op);  // checks the index limit on first use
    BatchNormPlan& batchNormPlan(const BatchNormGeometry& g);  // the caller checks the index limit
    // Batch-norm training on bf16 NHWC runs cuDNN's persistent kernels (the *Ex calls), which
    // need a reserve buffer kept from forward to backward: one per layer, found by savedMean.
    void* batchNormReserve(const BatchNormPlan& plan, const float* savedMean);
    cudnnActivationDescriptor_t reluDescriptor();
    cudnnTensorDescriptor_t flatDescriptor(std::size_t count);

    // ---- dense (dense.cpp) -----------------------------------------------------------------
    DensePlan& densePlan(const DenseGeometry& g, const OpLabel& op);  // checks the index limit on first use
    cublasComputeType_t gemmComputeType() const;
    cudaDataType_t activationDataType() const;  // CUDA_R_32F or CUDA_R_16BF
    // The weights in the activations' type: w itself, or a bf16 copy in the workspace (during a
    // hold, in heldWeights_, staged once for forward and backward data).
    const void* stageDenseWeights(const float* w, std::size_t count);

    // heldWeights_.copyOf, once the copies staged ahead as the hold began are there.
    const void* heldCopy(const float* w, const HeldWeights::Shape& shape, std::size_t bytes,
                         HeldWeights::Stage stage);
    // Makes the step's stream wait for the copies staged ahead in this hold, the first time.
    void awaitStagedAhead() noexcept;

    // A cuBLAS handle bound to one stream, with a workspace of its own: dense weight gradients
    // run beside the step's GEMMs, and one workspace cannot serve two streams at once.
    struct CublasOnStream {
        cublasHandle_t handle = nullptr;
        void* workspace = nullptr;
    };
    // Makes `cublas` a handle on `stream` with the math mode of the precision; on a throw, what
    // it made so far is in `cublas` for releaseCublas.
    void createCublas(CublasOnStream& cublas, cudaStream_t stream);
    void releaseCublas(CublasOnStream& cublas) noexcept;
    // The handle bound to stream(): the step's, or the side stream's while work is enqueued beside.
    cublasHandle_t cublas() const;

    bool deterministic_ = false;  // BackendOptions::deterministic
    cudnnHandle_t cudnn_ = nullptr;
    CublasOnStream stepCublas_, sideCublas_;

    std::unordered_map<ConvKey, ConvPlan, ConvKeyHash> convPlans_;
    std::unordered_map<PoolGeometry, PoolPlan, PoolGeometryHash> poolPlans_;
    std::unordered_map<BatchNormGeometry, BatchNormPlan, BatchNormGeometryHash> batchNormPlans_;
    std::unordered_map<const float*, void*> batchNormReserves_;
    ActivationDescriptor reluDescriptor_;
    std::unordered_map<std::size_t, TensorDescriptor> flatDescriptors_;
    std::unordered_map<DenseGeometry, DensePlan, DenseGeometryHash> densePlans_;
    HeldWeights heldWeights_;
    bool awaitingStagedAhead_ = false;  // this hold staged copies ahead that no op waited for yet

    CudnnStats stats_;
};

}  // namespace cnnstudio::kernels
