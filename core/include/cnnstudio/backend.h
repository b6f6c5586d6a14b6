// Backend: the op table every layer calls. A backend owns its memory; every pointer an op takes
// is backend memory (host memory on CPU backends, device memory on GPU backends) unless the
// name says "host". Shapes on this interface are NCHW. Every backward op OVERWRITES its outputs
// (no accumulation): the network sums fan-out gradients itself with axpy().
//
// Activations — what layers pass to one another: x, y, dx, dy of every layer op, logits and
// dlogits, dropout masks — are stored in the backend's activationFormat(), which may differ from
// fp32 NCHW (cudnn's bf16 mode keeps them bf16 and channels-last, what its tensor cores read
// fastest). Their buffers are sized for fp32; a narrower format uses the front of the buffer.
// Code outside a backend never reads activation memory itself: it moves activations with
// uploadActivations / downloadActivations, and a layer that needs the NCHW element order
// (Flatten) asks for it with flattenForward. Everything else — parameters, their gradients,
// optimiser and batch-norm state, biases, class weights, probabilities, the loss — is fp32.
//
// Checks once, at the interface: each public op below is non-virtual. It checks the geometry,
// the settings and the pointers (cnnstudio/op_checks.h), skips an op over zero elements, and
// only then calls the backend's protected implementation, named do<Op> (convForward ->
// doConvForward). A failed check throws cnnstudio::Error whose where() is "<backend> <op>"
// ("cudnn convForward"). An implementation checks only its backend's own limits (the CUDA
// kernels' 32-bit indexing, an activation format an op does not read), with opLabel(op) so that
// they carry the same label. Labels are built only when an error is thrown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cnnstudio/error.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio {

enum class Precision { Fp32, Tf32, Bf16 };

inline std::string toString(Precision precision) {
    switch (precision) {
    case Precision::Tf32: return "tf32";
    case Precision::Bf16: return "bf16";
    default: return "fp32";
    }
}

// "fp32" | "tf32" | "bf16"; throws Error otherwise.
inline Precision parsePrecision(const std::string& text) {
    if (text == "fp32") return Precision::Fp32;
    if (text == "tf32") return Precision::Tf32;
    if (text == "bf16") return Precision::Bf16;
    throw Error("unknown precision '" + text + "'", "", "use fp32, tf32 or bf16");
}

// Relu, LeakyRelu and Elu read alpha; Silu (PyTorch's nn.SiLU) has none and ignores it.
enum class Activation { Relu, LeakyRelu, Elu, Silu };
enum class PoolKind { Max, Average };  // Average divides by the count of non-padding elements

// One 2-D convolution (cross-correlation, as in PyTorch). x (batch, inChannels, inHeight, inWidth),
// w (outChannels, inChannels/groups, kernelHeight, kernelWidth), bias (outChannels),
// y (batch, outChannels, outHeight, outWidth). Zero padding, the same on both sides.
struct ConvGeometry {
    int batch = 1, inChannels = 1, inHeight = 1, inWidth = 1;
    int outChannels = 1, outHeight = 1, outWidth = 1;
    int kernelHeight = 1, kernelWidth = 1;
    int strideHeight = 1, strideWidth = 1;
    int padHeight = 0, padWidth = 0;
    int groups = 1;

    std::int64_t inputCount() const { return std::int64_t(batch) * inChannels * inHeight * inWidth; }
    std::int64_t outputCount() const { return std::int64_t(batch) * outChannels * outHeight * outWidth; }
    std::int64_t weightCount() const {
        return std::int64_t(outChannels) * (inChannels / groups) * kernelHeight * kernelWidth;
    }
    bool operator==(const ConvGeometry&) const = default;
};

// x (batch, channels, inHeight, inWidth) -> y (batch, channels, outHeight, outWidth).
struct PoolGeometry {
    PoolKind kind = PoolKind::Max;
    int batch = 1, channels = 1, inHeight = 1, inWidth = 1, outHeight = 1, outWidth = 1;
    int kernelHeight = 1, kernelWidth = 1;
    int strideHeight = 1, strideWidth = 1;
    int padHeight = 0, padWidth = 0;

    std::int64_t inputCount() const { return std::int64_t(batch) * channels * inHeight * inWidth; }
    std::int64_t outputCount() const { return std::int64_t(batch) * channels * outHeight * outWidth; }
    bool operator==(const PoolGeometry&) const = default;
};

// x, y (batch, channels, spatial); per-channel gamma, beta, running and saved statistics.
// Running statistics follow PyTorch: running = (1 - momentum) * running + momentum * batch,
// with the unbiased batch variance; normalisation uses the biased one.
struct BatchNormGeometry {
    int batch = 1, channels = 1, spatial = 1;
    float epsilon = 1e-5f;
    float momentum = 0.1f;

    std::int64_t count() const { return std::int64_t(batch) * channels * spatial; }
    bool operator==(const BatchNormGeometry&) const = default;
};

// x (batch, inFeatures), w (outFeatures, inFeatures) as PyTorch's Linear, bias (outFeatures),
// y (batch, outFeatures).
struct DenseGeometry {
    int batch = 1, inFeatures = 1, outFeatures = 1;
    bool operator==(const DenseGeometry&) const = default;
};

// Classification metrics summed where the step runs, so that training reads them with one small
// download at its log points instead of a host synchronisation per step. logits (batch, classes)
// are an activation, labels (batch) int32; the sums are sumCount() doubles in backend memory
// (doubles: counts stay exact to 2^53 and a long run's loss sum does not drift):
//   sums[kLossSum]      += added, where added = *batchLoss when a batch loss is given (the loss
//                          op's output: training), else sum_i (logsumexp(z_i) - z_i[y_i]) (the
//                          unsmoothed, unweighted cross-entropy: evaluation)
//   sums[kLargestLoss]   = max(sums[kLargestLoss], *batchLoss or the largest loss of one sample);
//                          once NaN it stays NaN (the divergence guard reads it)
//   sums[kLatestLoss]    = added (the latest call's value; the trainer's step events report it)
//   sums[kConfusion + y_i * classes + p_i] += 1, p_i the first index of the largest logit of row i
// A label outside [0, classes) makes the loss sums NaN and its row is not counted (no backend
// can throw from inside a captured step). With mixed labels (mixup/cutmix) `labels` is the first
// label set: a prediction counts as correct against it.
struct MetricsGeometry {
    int batch = 1, classes = 1;
    static constexpr int kLossSum = 0, kLargestLoss = 1, kLatestLoss = 2, kConfusion = 3;
    std::size_t sumCount() const { return std::size_t(kConfusion) + std::size_t(classes) * classes; }
    bool operator==(const MetricsGeometry&) const = default;
};

// Softmax cross-entropy over logits (batch, classes) and labels (batch) of int32.
// Per sample: loss_i = -sum_k q_ik log p_ik with q = (1 - smoothing) onehot + smoothing / classes.
// With class weights (classes), loss = sum_i w[y_i] loss_i / sum_i w[y_i]; without, the mean.
// With a LabelMix (a = labels, b = secondLabels, l = labelWeights), each sample counts twice:
//   loss = sum_i (l_i w[a_i] loss_i(a_i) + (1 - l_i) w[b_i] loss_i(b_i))
//          / sum_i (l_i w[a_i] + (1 - l_i) w[b_i])
// (w = 1 without class weights, so the denominator is the batch size), as mixup and cutmix
// train: the mixed image's loss is the lambda-weighted sum of its two images' losses.
// With SoftTargets (distillation; t_i the mean of its sets' rows for sample i, a its weight)
// every sample also learns t_i, with the weight W_i = l_i w[a_i] + (1 - l_i) w[b_i] it has in
// the denominator:
//   loss = sum_i ((1 - a) (the label terms above) + a W_i soft_i) / sum_i W_i,
//   soft_i = -sum_k t_ik log p_ik
// A temperature T divides the logits before the softmax: p = softmax(z / T). It is 1 for
// training; a teacher's probabilities at T > 1 are the softer targets of Hinton et al. (2015).
struct LossGeometry {
    int batch = 1, classes = 1;
    float labelSmoothing = 0.0f;
    float temperature = 1.0f;
};

// Training-time augmentation of a batch of images, on the device (Backend::augmentImages).
// Each image gets its own ImageAugmentation, drawn on the host from the run's seeded generator
// (datasets/augmentation.h) so that every backend applies the same transform. Pixel centres sit
// at integer coordinates: (0, 0) is the top-left pixel, (width-1, height-1) the bottom-right.
enum class AugmentBorder : std::int32_t {
    Constant = 0,   // taps outside the image read 0 (after normalisation: the training mean)
    Replicate = 1,  // taps outside the image read the nearest edge pixel
};
enum class EraseFill : std::int32_t {
    Zero = 0,   // the erased rectangle reads 0 (the training mean, after normalisation)
    Noise = 1,  // uniform noise in [-sqrt(3), sqrt(3)) (unit variance): augmentNoise()
};

// What happens to image i, in this order, for every channel:
//   1. warp:  w_i(x, y) = bilinear sample of image i at (sx, sy) with
//             sx = m[0] x + m[1] y + m[2],  sy = m[3] x + m[4] y + m[5]   (m = sourceFromOutput),
//             the four taps read through `border` (rotation, scale, shift and flip are all one m;
//             the identity leaves the image bit for bit).
//   2. mix:   with partner j >= 0 (another image of the batch, warped by its own m):
//             out = w_j inside the paste rectangle (cutmix), mixKeep w_i + (1 - mixKeep) w_j
//             elsewhere (mixup; mixKeep 1 leaves w_i). Partners are read before any image is
//             written, so the result does not depend on the order images are done in.
//   3. erase: inside the erase rectangle, `eraseFill`.
// Rectangles are [top, top + height) x [left, left + width), clipped to the image; a height or
// width of 0 means none.
struct ImageAugmentation {
    float sourceFromOutput[6] = {1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f};
    AugmentBorder border = AugmentBorder::Constant;
    std::int32_t partner = -1;  // -1: no mixing
    float mixKeep = 1.0f;
    std::int32_t pasteTop = 0, pasteLeft = 0, pasteHeight = 0, pasteWidth = 0;
    EraseFill eraseFill = EraseFill::Zero;
    std::int32_t eraseTop = 0, eraseLeft = 0, eraseHeight = 0, eraseWidth = 0;
    std::uint32_t noiseSeed = 0;  // the erased pixels' noise (augmentNoise)
};

// images (batch, channels, height, width), augmented in place.
struct AugmentGeometry {
    int batch = 1, channels = 1, height = 1, width = 1;
    std::int64_t count() const { return std::int64_t(batch) * channels * height * width; }
    bool operator==(const AugmentGeometry&) const = default;
};

// Mixed targets (mixup, cutmix): sample i's target is labelWeights[i] of labels[i] and
// 1 - labelWeights[i] of secondLabels[i]. Both pointers are backend memory of (batch) elements.
struct LabelMix {
    const std::int32_t* secondLabels = nullptr;
    const float* labelWeights = nullptr;
};

// Soft targets (knowledge distillation): `sets` probability tables, each (batch, classes) fp32 in
// backend memory, back to back (one per teacher network); sample i's soft target is the mean of
// their rows i. `weight` (in [0, 1]) is the share of the loss that learns them (LossGeometry).
struct SoftTargets {
    const float* probabilities = nullptr;
    int sets = 0;
    float weight = 0.0f;
    bool active() const { return probabilities != nullptr && sets > 0; }
};

// Values that change from one training step to the next. They live in backend memory so that
// a captured step (a CUDA graph) reads the current values each time it is replayed.
struct StepScalars {
    float learningRate = 0.0f;
    float adamCorrection1 = 1.0f;  // 1 - beta1^t, t = step + 1
    float adamCorrection2 = 1.0f;  // 1 - beta2^t
    std::uint32_t step = 0;        // 0-based; seeds the dropout masks
};

struct SgdSettings {
    float momentum = 0.0f;
    bool nesterov = false;
    float weightDecay = 0.0f;  // L2, added to the gradient (PyTorch's SGD)
};

struct AdamSettings {
    float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
    float weightDecay = 0.0f;
    bool decoupledWeightDecay = false;  // true: AdamW (params -= lr * wd * params)
};

// A training step recorded once and replayed (a CUDA graph on GPU backends).
class StepGraph {
public:
    virtual ~StepGraph() = default;
    virtual void replay() = 0;
};

// How a backend stores activations (see the top of this file).
struct ActivationFormat {
    bool bf16 = false;          // bf16 elements instead of fp32
    bool channelsLast = false;  // 4-D tensors as (N, H, W, C) instead of (N, C, H, W)
    bool operator==(const ActivationFormat&) const = default;
};

// The most threads a CPU backend runs: libgomp crashed creating 100000. The backend refuses more;
// the programs check their --threads against it too, to name the option.
inline constexpr int kMaxCpuThreads = 4096;

struct BackendOptions {
    int threads = 0;  // CPU backends: 0 = every core, at most kMaxCpuThreads
    Precision precision = Precision::Fp32;
    int device = 0;   // GPU backends: CUDA device index
    // GPU backends: only deterministic algorithms, so that a run and its resumption give the
    // same weights bit for bit; otherwise the fastest (as PyTorch without cudnn.deterministic).
    bool deterministic = false;
};

class Backend;

// Names one op of one backend in its errors: Error::where() becomes "<backend> <op>". It holds a
// pointer and a string literal; the text is built only when a check fails, so a passing check
// costs a comparison (the cudnn backend calls ops many times per step while capturing it).
class OpLabel {
public:
    OpLabel(const Backend& backend, const char* op) : backend_(&backend), op_(op) {}
    std::string text() const;  // "cudnn convForward"

private:
    const Backend* backend_;
    const char* op_;
};

class Backend {
public:
    virtual ~Backend() = default;

    virtual std::string name() const = 0;         // "cpu-ref", "cpu", "cuda", "cudnn"
    virtual std::string description() const = 0;  // "oneDNN 2.6, 16 threads", "NVIDIA H200, fp32"
    virtual bool isDevice() const = 0;            // true: memory is not host-addressable
    virtual Precision precision() const { return Precision::Fp32; }
    virtual ActivationFormat activationFormat() const { return {}; }
    // Memory free for this backend's allocations now: a GPU backend's device memory; by default
    // the host's (availableHostMemoryBytes, cnnstudio/host_memory.h), what host backends take.
    // None when unknown.
    virtual std::optional<std::size_t> freeMemoryBytes() const;
    // Bytes `count` activations occupy in activationFormat().
    std::size_t activationBytes(std::size_t count) const {
        return count * (activationFormat().bf16 ? 2 : sizeof(float));
    }

    // ---- memory: allocate, free and synchronize have nothing to check and stay virtual ------
    virtual void* allocateBytes(std::size_t bytes) = 0;  // throws Error when out of memory
    virtual void freeBytes(void* pointer) noexcept = 0;
    // upload may return before the copy lands, but hostSource may be reused as soon as it returns.
    void upload(void* destination, const void* hostSource, std::size_t bytes);
    void download(void* hostDestination, const void* source, std::size_t bytes);
    // How many download() calls this backend has served (downloadActivations goes through
    // download on every backend): each is a host synchronisation on a GPU backend, so tests
    // count them to prove a training step makes none.
    std::uint64_t downloadCount() const { return downloadCount_; }
    void copy(void* destination, const void* source, std::size_t bytes);
    virtual void synchronize() = 0;

    // ---- activations in and out: host side fp32 NCHW, backend side activationFormat() ------
    void uploadActivations(const TensorShape& shape, const float* hostSource, float* destination);
    void downloadActivations(const TensorShape& shape, const float* source, float* hostDestination);
    // Flatten: y (batch, C*H*W) holds x (shape) in NCHW element order; backward the inverse.
    void flattenForward(const TensorShape& shape, const float* x, float* y);
    void flattenBackward(const TensorShape& shape, const float* dy, float* dx);

    // ---- elementwise over `count` elements. fill and scale work on fp32 buffers (parameters,
    //      gradients, state); axpy, add and multiply on activations.
    void fill(float* y, float value, std::size_t count);
    void axpy(float alpha, const float* x, float* y, std::size_t count);  // y += alpha x
    void add(const float* a, const float* b, float* y, std::size_t count);  // y = a + b
    void multiply(const float* a, const float* b, float* y, std::size_t count);
    void scale(float* y, float alpha, std::size_t count);  // y *= alpha

    // ---- convolution -------------------------------------------------------------------
    void convForward(const ConvGeometry& g, const float* x, const float* w,
                     const float* bias /* nullable */, float* y);
    void convBackwardData(const ConvGeometry& g, const float* dy, const float* w, float* dx);
    void convBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw,
                            float* dbias /* nullable */);

    // ---- inference fusion: y = relu(batchNorm(conv(x) + bias)) with the running statistics;
    //      bn describes the convolution's output. The network uses it for every Conv2D ->
    //      BatchNorm2D -> ReLU chain at inference. Default: the three ops, in place in y; cudnn
    //      folds the batch norm into the convolution and runs cuDNN's fused
    //      convolution-bias-activation.
    void convBatchNormReluInference(const ConvGeometry& g, const float* x, const float* w,
                                    const float* bias /* nullable */, const BatchNormGeometry& bn,
                                    const float* gamma, const float* beta,
                                    const float* runningMean, const float* runningVar, float* y);

    // ---- pooling: backward is given x and y, as cuDNN reads both --------------------------
    void poolForward(const PoolGeometry& g, const float* x, float* y);
    void poolBackward(const PoolGeometry& g, const float* x, const float* y, const float* dy,
                      float* dx);

    // ---- batch normalisation -----------------------------------------------------------
    // savedMean, savedInvStd (channels): the batch mean and 1/sqrt(var + eps) for backward.
    void batchNormForwardTraining(const BatchNormGeometry& g, const float* x, const float* gamma,
                                  const float* beta, float* y, float* runningMean,
                                  float* runningVar, float* savedMean, float* savedInvStd);
    void batchNormForwardInference(const BatchNormGeometry& g, const float* x, const float* gamma,
                                   const float* beta, const float* runningMean,
                                   const float* runningVar, float* y);
    void batchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                           const float* gamma, const float* savedMean, const float* savedInvStd,
                           float* dx, float* dgamma, float* dbeta);

    // ---- training fusion: y = relu(batchNorm(x)), and its backward from dy (the gradient of
    //      y). The network uses them for every BatchNorm2D -> ReLU chain. z (the batch norm's
    //      output) and dz (its gradient) are the chain's inner tensors, room a backend may use or
    //      leave unwritten. Backward is given x and y as the forward left them. Default: the two
    //      ops through z and dz; cuda and cudnn in bf16 run one normalising pass forward and
    //      backward recompute the ReLU's gate from x rather than read y.
    void batchNormReluForwardTraining(const BatchNormGeometry& g, const float* x,
                                      const float* gamma, const float* beta, float* z, float* y,
                                      float* runningMean, float* runningVar, float* savedMean,
                                      float* savedInvStd);
    void batchNormReluBackward(const BatchNormGeometry& g, const float* x, const float* y,
                               const float* dy, const float* gamma, const float* beta,
                               const float* savedMean, const float* savedInvStd, float* dz,
                               float* dx, float* dgamma, float* dbeta);

    // ---- training fusion of a network's input block: y = relu(batchNorm(conv(x) + bias)) with
    //      the batch's statistics, and its backward from dy (the gradient of y); bn describes the
    //      convolution's output. The network uses them for a Conv2D that reads the network's
    //      input -> BatchNorm2D -> ReLU chain, so backward computes no gradient for x. c and z
    //      (the convolution's and the batch norm's outputs) and dz, dc (their gradients) are the
    //      chain's inner tensors, room a backend may use or leave unwritten; backward is given c
    //      and y as the forward left them. Default: convForward into c and batchNormRelu, then
    //      batchNormReluBackward into dz and dc and convBackwardFilter; cuda and cudnn in bf16,
    //      for inputs of fewer than 8 channels, take the statistics from the moments of x's
    //      patches and never write c, dz or dc (kernels/cuda/small_input_conv.h).
    void convBatchNormReluForwardTraining(const ConvGeometry& g, const float* x, const float* w,
                                          const float* bias /* nullable */,
                                          const BatchNormGeometry& bn, const float* gamma,
                                          const float* beta, float* c, float* z, float* y,
                                          float* runningMean, float* runningVar,
                                          float* savedMean, float* savedInvStd);
    void convBatchNormReluBackward(const ConvGeometry& g, const float* x, const float* w,
                                   const float* bias /* nullable */, const BatchNormGeometry& bn,
                                   const float* c, const float* y, const float* dy,
                                   const float* gamma, const float* beta, const float* savedMean,
                                   const float* savedInvStd, float* dz, float* dc, float* dw,
                                   float* dbias /* nullable */, float* dgamma, float* dbeta);

    // ---- training fusion: y = maxPool(relu(batchNorm(x))), and its backward from dy (the
    //      gradient of y); g describes x, pool (Max) the pooling of relu(batchNorm(x)). The
    //      network uses them for every BatchNorm2D -> ReLU -> MaxPool2D chain. z and r (the batch
    //      norm's and the ReLU's outputs) and dz, dr (their gradients) are the chain's inner
    //      tensors, room a backend may use or leave unwritten; backward is given r and y as the
    //      forward left them. Default: batchNormRelu and the pooling op through z, r and dr, dz;
    //      cuda and cudnn in bf16 pool 2x2 windows of stride 2 in the normalising pass and
    //      recompute r in backward, so that r and dr never reach memory.
    void batchNormReluMaxPoolForwardTraining(const BatchNormGeometry& g, const PoolGeometry& pool,
                                             const float* x, const float* gamma,
                                             const float* beta, float* z, float* r, float* y,
                                             float* runningMean, float* runningVar,
                                             float* savedMean, float* savedInvStd);
    void batchNormReluMaxPoolBackward(const BatchNormGeometry& g, const PoolGeometry& pool,
                                      const float* x, const float* r, const float* y,
                                      const float* dy, const float* gamma, const float* beta,
                                      const float* savedMean, const float* savedInvStd, float* dr,
                                      float* dz, float* dx, float* dgamma, float* dbeta);

    // ---- activations: relu(x) = max(x, 0); leaky(x) = x > 0 ? x : alpha x;
    //      elu(x) = x > 0 ? x : alpha (exp(x) - 1); silu(x) = x sigmoid(x) = x / (1 + exp(-x)).
    //      Backward may read x or y (both given).
    void activationForward(Activation kind, float alpha, const float* x, float* y,
                           std::size_t count);
    void activationBackward(Activation kind, float alpha, const float* x, const float* y,
                            const float* dy, float* dx, std::size_t count);

    // ---- dropout: mask[i] = keep ? 1 / (1 - probability) : 0 (an activation), keep decided by
    //      dropoutKeeps(seed, step->step, i, probability) (ops/dropout_hash.h) for storage
    //      position i, the same on every backend. (On a channels-last backend the mask of an
    //      image tensor therefore drops other elements than on an NCHW one, with the same
    //      statistics.) The layer then multiplies by the mask.
    void dropoutMask(float probability, std::uint64_t seed, const StepScalars* step, float* mask,
                     std::size_t count);

    // ---- dense -------------------------------------------------------------------------
    void denseForward(const DenseGeometry& g, const float* x, const float* w,
                      const float* bias /* nullable */, float* y);
    void denseBackwardData(const DenseGeometry& g, const float* dy, const float* w, float* dx);
    void denseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy, float* dw,
                              float* dbias /* nullable */);

    // ---- concat: copies `channels` channels of every image from src (batch, srcChannels,
    //      spatial) at channel srcOffset to dst (batch, dstChannels, spatial) at dstOffset.
    void copyChannels(int batch, int spatial, int channels, const float* src, int srcChannels,
                      int srcOffset, float* dst, int dstChannels, int dstOffset);

    // ---- loss: logits and dlogits are activations; probabilities (batch, classes) and the
    //      loss (one float) are fp32 in backend memory --------------------------------------
    //      mix: mixed targets (LossGeometry); its two pointers are both set or both null, and
    //      each label weight lies in [0, 1]. soft: the teachers' probabilities (SoftTargets);
    //      the backward pass must be given the same soft targets as the forward one.
    void softmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                    const std::int32_t* labels,
                                    const float* classWeights /* nullable */,
                                    float* probabilities, float* loss, const LabelMix& mix = {},
                                    const SoftTargets& soft = {});
    void softmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                     const std::int32_t* labels,
                                     const float* classWeights /* nullable */, float* dlogits,
                                     const LabelMix& mix = {}, const SoftTargets& soft = {});

    // ---- augmentation: images (an activation tensor (batch, channels, height, width)) are
    //      warped, mixed and erased in place as augmentations (batch, backend memory) say
    //      (ImageAugmentation). Partners lie in [0, batch); rectangles may reach outside the
    //      image (they are clipped). Training batches only: the trainer never augments
    //      validation or test images.
    void augmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                       float* images);

    // ---- metrics: adds a batch's loss and predictions into `sums` (MetricsGeometry above);
    //      batchLoss (one float) is nullable ------------------------------------------------
    void accumulateMetrics(const MetricsGeometry& g, const float* logits,
                           const std::int32_t* labels, const float* batchLoss /* nullable */,
                           double* sums);

    // ---- optimisers: one call over the whole flat parameter buffer ------------------------
    // velocity may be null when s.momentum is 0.
    void sgdUpdate(const SgdSettings& s, const StepScalars* step, float* params,
                   const float* grads, float* velocity, std::size_t count);
    void adamUpdate(const AdamSettings& s, const StepScalars* step, float* params,
                    const float* grads, float* m, float* v, std::size_t count);

    // ---- step capture (nothing to check) --------------------------------------------------
    // Records what recordStep issues and returns something that replays it, or nullptr when
    // this backend does not capture (the caller then runs recordStep every step).
    virtual std::unique_ptr<StepGraph> captureStep(const std::function<void()>& recordStep) {
        return nullptr;
    }

    // ---- weight gradients beside the backward pass (nothing to check) ---------------------
    // While an overlap is open, a backend may compute the dw and dbias of convBackwardFilter and
    // denseBackwardWeights concurrently with the ops called after it (GPU backends: on a second
    // stream, beside the chain of data gradients and batch norms that the step waits on). Until
    // awaitWeightGradients() or the end of the overlap, the caller must not read those dw and
    // dbias nor overwrite the x and dy they were computed from. The network's backward pass is
    // one overlap (WeightGradientOverlap). Default: nothing overlaps, every call is in order.
    virtual void beginWeightGradientOverlap() {}
    // Whatever is called after this sees every weight gradient enqueued before it.
    virtual void awaitWeightGradients() {}
    // awaitWeightGradients(), and later weight gradients run in order again. Does not
    // throw: a device error it meets surfaces at the next op that checks.
    virtual void endWeightGradientOverlap() noexcept {}

    // ---- weights held from forward to backward (nothing to check) -------------------------
    // While a hold is open the caller writes none of the weights that convolutions and dense
    // layers read, so a backend may keep the copy of a weight it stages for the forward pass (a
    // bf16 copy in its own layout) and read it again in the backward pass instead of staging it
    // anew. Ending the hold forgets every such copy. `weights` is the device memory the hold
    // covers, live until it ends: a backend may stage, as the hold begins and beside the ops that
    // follow, the copies of those among them it staged in the hold before (their values as
    // enqueued work leaves them then). The training step holds the network's parameters from its
    // forward pass to the end of its backward pass, before the optimiser writes them
    // (WeightsHeld). Default: nothing is kept.
    virtual void beginWeightsHeld(std::span<const float> /*weights*/) {}
    virtual void endWeightsHeld() noexcept {}

protected:
    // The label of this backend's `op` ("convForward"), for the checks of its own limits.
    OpLabel opLabel(const char* op) const { return OpLabel(*this, op); }

    // ---- the implementations: arguments already checked (see the top of this file) ---------
    virtual void doUpload(void* destination, const void* hostSource, std::size_t bytes) = 0;
    virtual void doDownload(void* hostDestination, const void* source, std::size_t bytes) = 0;
    virtual void doCopy(void* destination, const void* source, std::size_t bytes) = 0;

    // Defaults for backends that store activations as fp32 NCHW: plain copies.
    virtual void doUploadActivations(const TensorShape& shape, const float* hostSource,
                                     float* destination);
    virtual void doDownloadActivations(const TensorShape& shape, const float* source,
                                       float* hostDestination);
    virtual void doFlattenForward(const TensorShape& shape, const float* x, float* y);
    virtual void doFlattenBackward(const TensorShape& shape, const float* dy, float* dx);

    virtual void doFill(float* y, float value, std::size_t count) = 0;
    virtual void doAxpy(float alpha, const float* x, float* y, std::size_t count) = 0;
    virtual void doAdd(const float* a, const float* b, float* y, std::size_t count) = 0;
    virtual void doMultiply(const float* a, const float* b, float* y, std::size_t count) = 0;
    virtual void doScale(float* y, float alpha, std::size_t count) = 0;

    virtual void doConvForward(const ConvGeometry& g, const float* x, const float* w,
                               const float* bias, float* y) = 0;
    virtual void doConvBackwardData(const ConvGeometry& g, const float* dy, const float* w,
                                    float* dx) = 0;
    virtual void doConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                                      float* dw, float* dbias) = 0;
    // Default: doConvForward, doBatchNormForwardInference and doActivationForward, in place in y.
    virtual void doConvBatchNormReluInference(const ConvGeometry& g, const float* x,
                                              const float* w, const float* bias,
                                              const BatchNormGeometry& bn, const float* gamma,
                                              const float* beta, const float* runningMean,
                                              const float* runningVar, float* y);

    virtual void doPoolForward(const PoolGeometry& g, const float* x, float* y) = 0;
    virtual void doPoolBackward(const PoolGeometry& g, const float* x, const float* y,
                                const float* dy, float* dx) = 0;

    virtual void doBatchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                            const float* gamma, const float* beta, float* y,
                                            float* runningMean, float* runningVar,
                                            float* savedMean, float* savedInvStd) = 0;
    virtual void doBatchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                             const float* gamma, const float* beta,
                                             const float* runningMean, const float* runningVar,
                                             float* y) = 0;
    virtual void doBatchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                     const float* gamma, const float* savedMean,
                                     const float* savedInvStd, float* dx, float* dgamma,
                                     float* dbeta) = 0;
    // Defaults: the batch norm op and the ReLU through z (forward) and dz (backward).
    virtual void doBatchNormReluForwardTraining(const BatchNormGeometry& g, const float* x,
                                                const float* gamma, const float* beta, float* z,
                                                float* y, float* runningMean, float* runningVar,
                                                float* savedMean, float* savedInvStd);
    virtual void doBatchNormReluBackward(const BatchNormGeometry& g, const float* x,
                                         const float* y, const float* dy, const float* gamma,
                                         const float* beta, const float* savedMean,
                                         const float* savedInvStd, float* dz, float* dx,
                                         float* dgamma, float* dbeta);
    // Defaults: doConvForward into c, then doBatchNormReluForwardTraining; backward
    // doBatchNormReluBackward into dz and dc, then doConvBackwardFilter.
    virtual void doConvBatchNormReluForwardTraining(const ConvGeometry& g, const float* x,
                                                    const float* w, const float* bias,
                                                    const BatchNormGeometry& bn,
                                                    const float* gamma, const float* beta,
                                                    float* c, float* z, float* y,
                                                    float* runningMean, float* runningVar,
                                                    float* savedMean, float* savedInvStd);
    virtual void doConvBatchNormReluBackward(const ConvGeometry& g, const float* x,
                                             const float* w, const float* bias,
                                             const BatchNormGeometry& bn, const float* c,
                                             const float* y, const float* dy, const float* gamma,
                                             const float* beta, const float* savedMean,
                                             const float* savedInvStd, float* dz, float* dc,
                                             float* dw, float* dbias, float* dgamma,
                                             float* dbeta);
    // Defaults: doBatchNormReluForwardTraining into z and r, then doPoolForward; backward
    // doPoolBackward into dr, then doBatchNormReluBackward.
    virtual void doBatchNormReluMaxPoolForwardTraining(const BatchNormGeometry& g,
                                                       const PoolGeometry& pool, const float* x,
                                                       const float* gamma, const float* beta,
                                                       float* z, float* r, float* y,
                                                       float* runningMean, float* runningVar,
                                                       float* savedMean, float* savedInvStd);
    virtual void doBatchNormReluMaxPoolBackward(const BatchNormGeometry& g,
                                                const PoolGeometry& pool, const float* x,
                                                const float* r, const float* y, const float* dy,
                                                const float* gamma, const float* beta,
                                                const float* savedMean,
                                                const float* savedInvStd, float* dr, float* dz,
                                                float* dx, float* dgamma, float* dbeta);

    virtual void doActivationForward(Activation kind, float alpha, const float* x, float* y,
                                     std::size_t count) = 0;
    virtual void doActivationBackward(Activation kind, float alpha, const float* x,
                                      const float* y, const float* dy, float* dx,
                                      std::size_t count) = 0;

    virtual void doDropoutMask(float probability, std::uint64_t seed, const StepScalars* step,
                               float* mask, std::size_t count) = 0;

    virtual void doDenseForward(const DenseGeometry& g, const float* x, const float* w,
                                const float* bias, float* y) = 0;
    virtual void doDenseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                                     float* dx) = 0;
    virtual void doDenseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy,
                                        float* dw, float* dbias) = 0;

    virtual void doCopyChannels(int batch, int spatial, int channels, const float* src,
                                int srcChannels, int srcOffset, float* dst, int dstChannels,
                                int dstOffset) = 0;

    virtual void doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                              const std::int32_t* labels,
                                              const float* classWeights, float* probabilities,
                                              float* loss, const LabelMix& mix,
                                              const SoftTargets& soft) = 0;
    virtual void doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                               const std::int32_t* labels,
                                               const float* classWeights, float* dlogits,
                                               const LabelMix& mix,
                                               const SoftTargets& soft) = 0;

    virtual void doAugmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                                 float* images) = 0;

    virtual void doAccumulateMetrics(const MetricsGeometry& g, const float* logits,
                                     const std::int32_t* labels, const float* batchLoss,
                                     double* sums) = 0;

    virtual void doSgdUpdate(const SgdSettings& s, const StepScalars* step, float* params,
                             const float* grads, float* velocity, std::size_t count) = 0;
    virtual void doAdamUpdate(const AdamSettings& s, const StepScalars* step, float* params,
                              const float* grads, float* m, float* v, std::size_t count) = 0;

private:
    std::uint64_t downloadCount_ = 0;
};

// Opens a weight-gradient overlap for its lifetime, so that it ends on every way out of a scope,
// an exception included (a captured step must join all its work before the capture ends).
class WeightGradientOverlap {
public:
    explicit WeightGradientOverlap(Backend& backend) : backend_(backend) {
        backend_.beginWeightGradientOverlap();
    }
    ~WeightGradientOverlap() { backend_.endWeightGradientOverlap(); }
    WeightGradientOverlap(const WeightGradientOverlap&) = delete;
    WeightGradientOverlap& operator=(const WeightGradientOverlap&) = delete;

private:
    Backend& backend_;
};

// Holds the weights unchanged for its lifetime (Backend::beginWeightsHeld), so that the hold ends
// on every way out of a scope, an exception included.
class WeightsHeld {
public:
    WeightsHeld(Backend& backend, std::span<const float> weights) : backend_(backend) {
        backend_.beginWeightsHeld(weights);
    }
    ~WeightsHeld() { backend_.endWeightsHeld(); }
    WeightsHeld(const WeightsHeld&) = delete;
    WeightsHeld& operator=(const WeightsHeld&) = delete;

private:
    Backend& backend_;
};

}  // namespace cnnstudio
