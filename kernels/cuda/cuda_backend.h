// CudaBackend: the "cuda" backend, our own CUDA kernels for every op of the Backend table
// (no cuDNN, cuBLAS or cuBLASLt). The cuDNN backend derives from it and overrides the ops where
// cuDNN is faster; the rest, the memory pool, the stream and step capture it inherits (the table
// at the top of cudnn/cudnn_backend.h shows where each op runs).
//
// Precision (BackendOptions::precision):
//   fp32  activations fp32 NCHW; convolutions and dense layers multiply on the TF32 tensor cores
//         with fp32 accuracy (3xTF32, gemm.cuh).
//   bf16  mixed, as the cudnn backend's bf16: activations bf16 and channels-last (NHWC,
//         activationFormat()), math in fp32 registers; weights, gradients and optimiser state
//         stay fp32. Convolutions whose channels fill 16-byte vectors run as implicit GEMMs on
//         the bf16 tensor cores (tensor_core_conv.h), input layers on direct kernels
//         (small_input_conv.h), the rest (grouped, ragged channels) on direct kernels
//         (direct_conv_channels_last.h); dense layers are 1x1 convolutions of 1x1 images, so
//         they take the same paths; batch norm runs on batchnorm_channels_last.h, and an input
//         layer's Conv2D -> BatchNorm -> ReLU in training as one op (small_input_conv.h).
//         Activations cross to and from fp32 NCHW at uploads, downloads and Flatten
//         (activation_layout.cpp, layout.h).
// Every op reads activationFormat(); those that run in both formats say so in their file.
//
// Threading and ordering: one non-blocking stream per backend; every op is enqueued on it and
// returns without waiting for the device (only download() and synchronize() wait), so a whole
// training step can be captured as one CUDA graph. The exception is a side stream that forks
// from the first at each use and joins it later: inside a weight-gradient overlap
// (Backend::beginWeightGradientOverlap, the network's backward pass) convolution weight
// gradients go to it and join at awaitWeightGradients(), filling the GPU beside the data
// gradients and batch norms the step waits on; the cudnn backend also stages held weights on it
// as a hold begins (enqueueBeside). The graph holds both branches. Memory comes from a
// stream-ordered pool that keeps freed blocks for reuse, so a step loop never reaches
// cudaMalloc/cudaFree.
//
// Backend's public ops check their arguments and call the do<Op> implementations below; each
// lives in the file named for the op (kernels/cuda/conv.cu defines doConvForward,
// doConvBackwardData and doConvBackwardFilter), next to its kernels. What they check themselves
// is the kernels' 32-bit indexing limit (index_limits.h) and the activation formats they read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cnnstudio/backend.h"

namespace cnnstudio::kernels {

class CudaBackend : public Backend {
public:
    // Makes options.device current, creates the stream and the memory pool. Throws Error when
    // the device index is out of range or options.precision is tf32 (only cudnn runs tf32).
    explicit CudaBackend(const BackendOptions& options);
    ~CudaBackend() override;
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    std::string name() const override;         // "cuda"
    std::string description() const override;  // "NVIDIA H200 (device 0), own kernels, fp32"
    bool isDevice() const override { return true; }
    Precision precision() const override { return precision_; }
    ActivationFormat activationFormat() const override;  // bf16 channels-last in bf16
    std::optional<std::size_t> freeMemoryBytes() const override;  // cudaMemGetInfo on this device

    // ---- memory --------------------------------------------------------------------------
    void* allocateBytes(std::size_t bytes) override;
    void freeBytes(void* pointer) noexcept override;
    void synchronize() override;

    // ---- step capture ---------------------------------------------------------------------
    // Captures what recordStep enqueues on stream() (thread-local capture mode) into a CUDA
    // graph; replay() launches it on stream(). The graph must not outlive the backend.
    std::unique_ptr<StepGraph> captureStep(const std::function<void()>& recordStep) override;

    // ---- weight gradients beside the backward pass (see the top of this file) -------------
    void beginWeightGradientOverlap() override;
    void awaitWeightGradients() override;
    void endWeightGradientOverlap() noexcept override;

    // ---- for code that enqueues its own work in order with the ops (NCCL collectives) ------
    // The stream ops are enqueued on (the side stream only while enqueueWeightGradient or
    // enqueueBeside runs), and this backend's device index.
    cudaStream_t stream() const {
        return onSideStream_ ? sideStream_ : stream_;
    }
    int device() const { return device_; }
    // Makes this backend's device current on the calling thread. Every entry point calls it
    // first, so several backends on several devices can share one thread.
    void activateDevice() const;

protected:
    // ---- the ops, arguments checked by Backend; each defined in the file named for it -------
    // (memory in cuda_backend.cpp)
    void doUpload(void* destination, const void* hostSource, std::size_t bytes) override;
    void doDownload(void* hostDestination, const void* source, std::size_t bytes) override;
    void doCopy(void* destination, const void* source, std::size_t bytes) override;

    // ---- activations in and out, flatten (activation_layout.cpp) ----------------------------
    void doUploadActivations(const TensorShape& shape, const float* hostSource,
                             float* destination) override;
    void doDownloadActivations(const TensorShape& shape, const float* source,
                               float* hostDestination) override;
    void doFlattenForward(const TensorShape& shape, const float* x, float* y) override;
    void doFlattenBackward(const TensorShape& shape, const float* dy, float* dx) override;

    // ---- elementwise (elementwise.cu) -----------------------------------------------------
    void doFill(float* y, float value, std::size_t count) override;
    void doAxpy(float alpha, const float* x, float* y, std::size_t count) override;
    void doAdd(const float* a, const float* b, float* y, std::size_t count) override;
    void doMultiply(const float* a, const float* b, float* y, std::size_t count) override;
    void doScale(float* y, float alpha, std::size_t count) override;

    // ---- convolution (conv.cu) ------------------------------------------------------------
    void doConvForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                       float* y) override;
    void doConvBackwardData(const ConvGeometry& g, const float* dy, const float* w, float* dx) override;
    void doConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw,
                              float* dbias) override;

    // ---- pooling (pool.cu) ----------------------------------------------------------------
    void doPoolForward(const PoolGeometry& g, const float* x, float* y) override;
    void doPoolBackward(const PoolGeometry& g, const float* x, const float* y, const float* dy,
                        float* dx) override;

    // ---- batch normalisation (batchnorm.cu) -----------------------------------------------
    void doBatchNormForwardTraining(const BatchNormGeometry& g, const float* x, const float* gamma,
                                    const float* beta, float* y, float* runningMean, float* runningVar,
                                    float* savedMean, float* savedInvStd) override;
    void doBatchNormForwardInference(const BatchNormGeometry& g, const float* x, const float* gamma,
                                     const float* beta, const float* runningMean,
                                     const float* runningVar, float* y) override;
    void doBatchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                             const float* gamma, const float* savedMean, const float* savedInvStd,
                             float* dx, float* dgamma, float* dbeta) override;
    // bf16: the ReLU fused into the batch norm's passes; z and dz stay unwritten. fp32: the
    // Backend default.
    void doBatchNormReluForwardTraining(const BatchNormGeometry& g, const float* x, const float* gamma,
                                        const float* beta, float* z, float* y, float* runningMean,
                                        float* runningVar, float* savedMean,
                                        float* savedInvStd) override;
    void doBatchNormReluBackward(const BatchNormGeometry& g, const float* x, const float* y,
                                 const float* dy, const float* gamma, const float* beta,
                                 const float* savedMean, const float* savedInvStd, float* dz, float* dx,
                                 float* dgamma, float* dbeta) override;
    // bf16 with 2x2 windows of stride 2 over an even image: one normalising and pooling pass,
    // r recomputed in backward; z, r, dr and dz stay unwritten. Otherwise the Backend default.
    void doBatchNormReluMaxPoolForwardTraining(const BatchNormGeometry& g, const PoolGeometry& pool,
                                               const float* x, const float* gamma,
                                               const float* beta, float* z, float* r, float* y,
                                               float* runningMean, float* runningVar,
                                               float* savedMean, float* savedInvStd) override;
    void doBatchNormReluMaxPoolBackward(const BatchNormGeometry& g, const PoolGeometry& pool,
                                        const float* x, const float* r, const float* y,
                                        const float* dy, const float* gamma, const float* beta,
                                        const float* savedMean, const float* savedInvStd,
                                        float* dr, float* dz, float* dx, float* dgamma,
                                        float* dbeta) override;

    // bf16 with an input of fewer than 8 channels (small_input_conv.h): the statistics from the
    // moments of x's patches, one pass over x forward and over dy and y backward; c keeps the
    // moments (720 bytes) from forward to backward, z, dz and dc stay unwritten. Otherwise (or
    // when c has less room) the Backend default.
    void doConvBatchNormReluForwardTraining(const ConvGeometry& g, const float* x, const float* w,
                                            const float* bias, const BatchNormGeometry& bn,
                                            const float* gamma, const float* beta, float* c,
                                            float* z, float* y, float* runningMean,
                                            float* runningVar, float* savedMean,
                                            float* savedInvStd) override;
    void doConvBatchNormReluBackward(const ConvGeometry& g, const float* x, const float* w,
                                     const float* bias, const BatchNormGeometry& bn,
                                     const float* c, const float* y, const float* dy,
                                     const float* gamma, const float* beta,
                                     const float* savedMean, const float* savedInvStd, float* dz,
                                     float* dc, float* dw, float* dbias, float* dgamma,
                                     float* dbeta) override;

    // ---- activations (activation.cu) ------------------------------------------------------
    void doActivationForward(Activation kind, float alpha, const float* x, float* y,
                             std::size_t count) override;
    void doActivationBackward(Activation kind, float alpha, const float* x, const float* y,
                              const float* dy, float* dx, std::size_t count) override;

    // ---- dropout (dropout.cu) -------------------------------------------------------------
    void doDropoutMask(float probability, std::uint64_t seed, const StepScalars* step, float* mask,
                       std::size_t count) override;

    // ---- dense (dense.cu) -----------------------------------------------------------------
    void doDenseForward(const DenseGeometry& g, const float* x, const float* w, const float* bias,
                        float* y) override;
    void doDenseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                             float* dx) override;
    void doDenseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy, float* dw,
                                float* dbias) override;

    // ---- concat (concat.cu) ---------------------------------------------------------------
    void doCopyChannels(int batch, int spatial, int channels, const float* src, int srcChannels,
                        int srcOffset, float* dst, int dstChannels, int dstOffset) override;

    // ---- loss (loss.cu) -------------------------------------------------------------------
    void doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                      const std::int32_t* labels, const float* classWeights,
                                      float* probabilities, float* loss,
                                      const LabelMix& mix, const SoftTargets& soft) override;
    void doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                       const std::int32_t* labels, const float* classWeights,
                                       float* dlogits, const LabelMix& mix, const SoftTargets& soft) override;

    void doAugmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                         float* images) override;  // augment.cu

    // ---- metrics (metrics.cu) -------------------------------------------------------------
    void doAccumulateMetrics(const MetricsGeometry& g, const float* logits,
                             const std::int32_t* labels, const float* batchLoss,
                             double* sums) override;

    // ---- optimisers (optimizer.cu) --------------------------------------------------------
    void doSgdUpdate(const SgdSettings& s, const StepScalars* step, float* params, const float* grads,
                     float* velocity, std::size_t count) override;
    void doAdamUpdate(const AdamSettings& s, const StepScalars* step, float* params, const float* grads,
                      float* m, float* v, std::size_t count) override;

    // For backends built on this one (cudnn): accepts every precision; the subclass checks it.
    struct AnyPrecision {};
    CudaBackend(const BackendOptions& options, AnyPrecision);

    const cudaDeviceProp& deviceProperties() const { return properties_; }

    // bf16 precision keeps activations bf16 channels-last (activationFormat()).
    bool storesBf16() const { return precision_ == Precision::Bf16; }
    // Converts `count` floats to bf16 at `destination` on the stream, and back.
    void toBf16(const float* source, void* destination, std::size_t count);
    void fromBf16(const void* source, float* destination, std::size_t count);

    // True while captureStep is recording on this backend's stream.
    bool isCapturing() const { return capturing_; }

    // Runs `enqueue` with stream() and workspace() switched to the side stream and its own
    // scratch, after everything enqueued so far, while an overlap is open; otherwise, or when
    // the device has no room for that scratch, runs it as it is. `enqueue` asks for its
    // workspace() before it enqueues anything, and only enqueues device work: anything that
    // allocates otherwise, searches or synchronises belongs before it.
    void enqueueWeightGradient(const std::function<void()>& enqueue);
    // Called with the stream ops go to whenever it changes, for library handles bound to it.
    virtual void bindStream(cudaStream_t /*stream*/) {}
    // The stream work enqueued beside the step runs on, for a subclass's library handles that
    // keep one per stream.
    cudaStream_t sideStream() const { return sideStream_; }

    // Scratch device memory of at least `bytes`, for use by work enqueued on stream() until
    // the next workspace() call; an op that needs several scratch regions asks once for their
    // sum. The buffer only grows, and outgrown buffers stay allocated until the backend is
    // destroyed, because kernels enqueued earlier and captured graphs may still use them. It
    // may grow during capture (outside the graph), so ops need not be run eagerly first.
    void* workspace(std::size_t bytes);

    // Runs `enqueue` with stream() switched to the side stream, after everything enqueued on the
    // step's stream so far, to run beside what is enqueued next; the step's stream waits for it
    // at awaitBeside(). `enqueue` only enqueues device work and asks for no workspace().
    void enqueueBeside(const std::function<void()>& enqueue);
    // Whatever is enqueued after this sees everything enqueued beside before it. Does not
    // throw: a device error it meets surfaces at the next op that checks.
    void awaitBeside() noexcept;

private:
    // Device memory that only grows (see workspace()).
    struct Scratch {
        void* data = nullptr;
        std::size_t bytes = 0;
        std::vector<void*> retired;  // outgrown, kept alive
        // The side stream's: when the device has no room for it, the weight gradient
        // runs in order on stream_ instead of failing, and requests of refusedBytes or more
        // are not tried again.
        bool mayBeRefused = false;
        std::size_t refusedBytes = SIZE_MAX;
    };

    void initialise(const BackendOptions& options);
    void* grow(Scratch& scratch, std::size_t bytes);
    // Makes stream_ wait for the work enqueued beside it, if any is pending.
    cudaError_t joinSideStream();
    // Points stream() and workspace() at the side stream's, or back at the step's.
    void switchToSideStream(bool side);

    // doConvBackwardFilter's work, on stream() (conv.cu).
    void enqueueConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                                   float* dw, float* dbias);

    // ---- bf16 channels-last convolution (conv_channels_last.cpp) ----------------------------
    void convForwardChannelsLast(const ConvGeometry& g, const float* x, const float* w,
                                 const float* bias, float* y);
    void convBackwardDataChannelsLast(const ConvGeometry& g, const float* dy, const float* w,
                                      float* dx);
    void convBackwardFilterChannelsLast(const ConvGeometry& g, const float* x, const float* dy,
                                        float* dw, float* dbias);

    int device_ = 0;
    Precision precision_ = Precision::Fp32;
    cudaDeviceProp properties_{};
    cudaStream_t stream_ = nullptr;  // the step's stream: everything but the work beside it
    cudaMemPool_t pool_ = nullptr;
    bool capturing_ = false;
    std::vector<void*> deferredFrees_;  // freed while capturing; released after capture
    Scratch workspace_;

    // The side stream (overlapped weight gradients, staging ahead): its scratch, the events that
    // fork it from stream_ and join it back, whether work is enqueued on it that stream_ has not
    // joined, and whether a weight-gradient overlap is open.
    cudaStream_t sideStream_ = nullptr;
    Scratch sideWorkspace_;
    cudaEvent_t forkEvent_ = nullptr;
    cudaEvent_t joinEvent_ = nullptr;
    bool overlapOpen_ = false;
    bool sidePending_ = false;
    // While work is enqueued beside: stream() and workspace() are the side stream's.
    bool onSideStream_ = false;
};

}  // namespace cnnstudio::kernels
