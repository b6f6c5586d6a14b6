// Network: a spec built for one backend and batch size. Building it is the "compile" step
// (docs/architecture.md): layers are created from the spec, every parameter lives in one flat
// buffer and every gradient in another (layers hold views into them), and every activation,
// gradient and scratch buffer is allocated up front. forward/computeLoss/backward then only
// issue op calls, which is what lets a GPU backend capture a whole step as one CUDA graph (see
// TrainingStep).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_buffer.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio {

enum class Phase { Training, Inference };

struct LossOptions {
    std::vector<float> classWeights;  // empty: unweighted
    float labelSmoothing = 0.0f;
    float temperature = 1.0f;  // probabilities = softmax(logits / T): above 1 for a teacher's soft targets
};

// One layer's share of a training step, from Network::profileTrainingPass.
struct LayerTime {
    std::string name, type;  // the node's name and layer type ("conv1", "Conv2D")
    double forwardMs = 0, backwardMs = 0;
};

// A named slice of a flat buffer: "conv1.weight" at offset 0 with shape {64, 1, 3, 3}.
struct ParameterInfo {
    std::string name;
    std::size_t offset = 0;
    std::vector<std::int64_t> shape;
    std::size_t count() const;
};

// What a network is built for. Training holds a gradient beside every activation, allocated
// up front (a training step may be captured as a CUDA graph, where nothing may be allocated);
// Inference leaves them out, about half of what the network allocates (device memory on a GPU;
// on the CPU the gradients' pages were never touched by inference anyway), and refuses
// backward(), explainLogits() and activationGradient(). Evaluation, prediction and
// distillation's teachers only infer.
enum class NetworkUse { Training, Inference };

class Network {
public:
    // Throws Error naming the node when the spec is invalid. Parameters are initialised with
    // He (layers followed by ReLU-like activations) or Glorot (others) from `seed`.
    Network(const NetworkSpec& spec, Backend& backend, int batch, std::uint64_t seed,
            NetworkUse use = NetworkUse::Training);
    ~Network();
    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;

    const NetworkSpec& spec() const { return spec_; }
    const ShapeReport& shapes() const { return shapes_; }
    Backend& backend() const { return backend_; }
    int batch() const { return batch_; }
    TensorShape inputShape() const;  // (batch, C, H, W)
    int classes() const;

    // Filled by the caller before forward(): input (batch, C, H, W), labels (batch) int32.
    Tensor& input();
    std::int32_t* labels() { return labels_; }
    void setLossOptions(const LossOptions& options);
    // Mixed targets (mixup, cutmix; backend.h LabelMix): sample i trains towards labelWeights[i]
    // of labels()[i] and the rest of secondLabels[i]. Host arrays of batch() elements, uploaded
    // here; from the first call on every step's loss reads them (a captured step keeps reading
    // the same buffers), so a trainer that mixes calls this before every step.
    void setMixedLabels(std::span<const std::int32_t> secondLabels,
                        std::span<const float> labelWeights);

    // Distillation (distillation.h): from the next computeLoss() on, the loss also learns these
    // soft targets (backend.h SoftTargets), whose table the caller fills before each step; a
    // captured step keeps reading the same table. SoftTargets{} turns them off.
    void setSoftTargets(const SoftTargets& soft);

    // Values read by the ops of a step (dropout seed, learning rate): the caller uploads them.
    StepScalars* stepScalars() { return stepScalars_; }

    // Inference runs each Conv2D -> BatchNorm2D -> ReLU chain as one fused op
    // (Backend::convBatchNormReluInference), training each BatchNorm2D -> ReLU pair
    // (batchNormReluForwardTraining / Backward) and each BatchNorm2D -> ReLU -> MaxPool2D chain
    // (batchNormReluMaxPoolForwardTraining / Backward), and a Conv2D reading the network's input
    // -> BatchNorm2D -> ReLU chain (convBatchNormReluForwardTraining / Backward); the chains'
    // inner tensors may then go unwritten.
    void forward(Phase phase);
    void computeLoss();  // softmax cross-entropy of logits() against labels()
    void backward();     // after forward(Training) and computeLoss(); overwrites gradients()

    // ---- explaining a prediction (Grad-CAM: Selvaraju et al. 2017) --------------------------
    // An inference forward that writes every node's output (fused chains run node by node),
    // then the gradient of logit classPerImage[i] of each image i with respect to the output of
    // `node`, with inference semantics: batch norm scales by its running statistics, dropout
    // passes gradients through. Only the nodes after `node` are differentiated. Afterwards
    // activation(node) and activationGradient(node) hold the pair Grad-CAM weighs. Overwrites
    // gradients() of the layers it passes. Throws Error naming the node or the class at fault.
    void explainLogits(const std::vector<int>& classPerImage, const std::string& node);
    // A node's output from the last forward: forward() may leave the inner tensors of fused
    // chains unwritten, explainLogits() does not.
    const Tensor& activation(const std::string& node) const;
    // The gradient of a node's output written by the last backward() or explainLogits().
    // Throws Error for the network input, which gets none.
    const Tensor& activationGradient(const std::string& node) const;
    // The last layer with weights (Conv2D, SeparableConv2D) whose output is a map of more than
    // one position: the layer Grad-CAM usually explains. Throws Error when there is none.
    std::string lastConvolutionalLayer() const;
    // Adds the first `rows` rows of logits() against labels() into `sums` (backend memory,
    // metricsGeometry(rows).sumCount() doubles; Backend::accumulateMetrics): with the step's
    // loss() when withLoss (training), else each row's own cross-entropy (evaluation).
    MetricsGeometry metricsGeometry(int rows) const { return {rows, classes()}; }
    void accumulateMetrics(int rows, bool withLoss, double* sums);

    const Tensor& logits() const;         // (batch, classes, 1, 1)
    const Tensor& probabilities() const;  // after computeLoss()
    const float* loss() const { return loss_; }  // one float in backend memory
    float downloadLoss() const;

    // One training forward, loss and backward, the backend synchronised around every layer so
    // each call's time is its own: what a profile of where a step's time goes reports (it is
    // slower than an unsynchronised step). One entry per node that ran, in forward order, then
    // the loss as a node "loss" of type "SoftmaxCrossEntropy". A batch norm that absorbs its
    // ReLU in training carries the ReLU's time too. The gradients-ready hook is not called.
    std::vector<LayerTime> profileTrainingPass();

    // The flat buffers: trainable parameters and their gradients, and non-trained state
    // (batch-norm running statistics). Each slice starts on a 256-byte boundary; the padding
    // between slices is zero, and counts include it.
    float* parameters() { return parameters_.data(); }
    float* gradients() { return gradients_.data(); }
    float* state() { return state_.empty() ? nullptr : state_.data(); }
    std::size_t parameterCount() const { return std::size_t(parameters_.count()); }
    std::size_t stateCount() const { return state_.empty() ? 0 : std::size_t(state_.count()); }
    const std::vector<ParameterInfo>& parameterInfo() const { return parameterInfo_; }
    const std::vector<ParameterInfo>& stateInfo() const { return stateInfo_; }

    // Called during backward() each time a layer's parameter gradients are enqueued, with the
    // slice [offset, offset + count) of gradients(); last layers come first. Parameters are laid
    // out in reverse topological order, so the slices arrive front to back. backward() overlaps
    // weight gradients with the rest of the pass (Backend::beginWeightGradientOverlap): work that
    // reads the slice before backward() returns calls backend().awaitWeightGradients() first.
    void setGradientsReadyHook(std::function<void(std::size_t offset, std::size_t count)> hook);

private:
    struct Node;
    void build(std::uint64_t seed);
    void allocateActivationGradients();
    void requireActivationGradients(const char* operation) const;  // Error for NetworkUse::Inference
    void findFusions();
    bool runsInForward(const Node& node, Phase phase) const;
    void forwardNode(Node& node, Phase phase);
    void backwardNode(Node& node);
    void announceGradients(const Node& node);  // calls the gradients-ready hook for its slice
    int nodeIndex(const std::string& name) const;  // Error naming `name` when absent

    NetworkSpec spec_;
    ShapeReport shapes_;
    Backend& backend_;
    int batch_;
    NetworkUse use_;
    std::vector<std::unique_ptr<Node>> nodes_;  // topological order
    Tensor parameters_, gradients_, state_;
    std::vector<ParameterInfo> parameterInfo_, stateInfo_;
    LossGeometry lossGeometry() const;
    LabelMix labelMix() const;

    Tensor probabilities_, lossStorage_, classWeights_;
    BackendBuffer<std::int32_t> labelStorage_, secondLabelStorage_;
    BackendBuffer<float> labelWeightStorage_;  // with secondLabelStorage_: empty until mixing
    BackendBuffer<StepScalars> stepStorage_;
    std::int32_t* labels_ = nullptr;
    float* loss_ = nullptr;
    StepScalars* stepScalars_ = nullptr;
    LossOptions lossOptions_;
    SoftTargets softTargets_;
    std::function<void(std::size_t, std::size_t)> gradientsReady_;
};

}  // namespace cnnstudio
