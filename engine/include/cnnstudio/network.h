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
};

// A named slice of a flat buffer: "conv1.weight" at offset 0 with shape {64, 1, 3, 3}.
struct ParameterInfo {
    std::string name;
    std::size_t offset = 0;
    std::vector<std::int64_t> shape;
    std::size_t count() const;
};

class Network {
public:
    // Throws Error naming the node when the spec is invalid. Parameters are initialised with
    // He (layers followed by ReLU-like activations) or Glorot (others) from `seed`.
    Network(const NetworkSpec& spec, Backend& backend, int batch, std::uint64_t seed);
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

    // Values read by the ops of a step (dropout seed, learning rate): the caller uploads them.
    StepScalars* stepScalars() { return stepScalars_; }

    // Inference runs each Conv2D -> BatchNorm2D -> ReLU chain as one fused op
    // (Backend::convBatchNormReluInference), training each BatchNorm2D -> ReLU pair
    // (batchNormReluForwardTraining / Backward); the chains' inner tensors may then go unwritten.
    void forward(Phase phase);
    void computeLoss();  // softmax cross-entropy of logits() against labels()
    void backward();     // after forward(Training) and computeLoss(); overwrites gradients()

    // Adds the first `rows` rows of logits() against labels() into `sums` (backend memory,
    // metricsGeometry(rows).sumCount() doubles; Backend::accumulateMetrics): with the step's
    // loss() when withLoss (training), else each row's own cross-entropy (evaluation).
    MetricsGeometry metricsGeometry(int rows) const { return {rows, classes()}; }
    void accumulateMetrics(int rows, bool withLoss, double* sums);

    const Tensor& logits() const;         // (batch, classes, 1, 1)
    const Tensor& probabilities() const;  // after computeLoss()
    const float* loss() const { return loss_; }  // one float in backend memory
    float downloadLoss() const;

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

    // Called during backward() each time a layer's parameter gradients are complete, with the
    // slice [offset, offset + count) of gradients(); last layers come first. Parameters are laid
    // out in reverse topological order, so the slices arrive front to back.
    void setGradientsReadyHook(std::function<void(std::size_t offset, std::size_t count)> hook);

private:
    struct Node;
    void build(std::uint64_t seed);
    void findFusions();

    NetworkSpec spec_;
    ShapeReport shapes_;
    Backend& backend_;
    int batch_;
    std::vector<std::unique_ptr<Node>> nodes_;  // topological order
    Tensor parameters_, gradients_, state_;
    std::vector<ParameterInfo> parameterInfo_, stateInfo_;
    LossGeometry lossGeometry() const;

    Tensor probabilities_, lossStorage_, classWeights_;
    BackendBuffer<std::int32_t> labelStorage_;
    BackendBuffer<StepScalars> stepStorage_;
    std::int32_t* labels_ = nullptr;
    float* loss_ = nullptr;
    StepScalars* stepScalars_ = nullptr;
    LossOptions lossOptions_;
    std::function<void(std::size_t, std::size_t)> gradientsReady_;
};

}  // namespace cnnstudio
