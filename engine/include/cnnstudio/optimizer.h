// Optimisers over the flat parameter buffer (one backend call per step) and learning-rate
// schedules (host side: they produce the learning rate uploaded with each step's StepScalars).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cnnstudio/backend.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio {

struct OptimizerConfig {
    std::string kind = "sgd";  // "sgd" | "adam" | "adamw"
    float learningRate = 0.01f;
    float momentum = 0.9f;     // sgd
    bool nesterov = false;     // sgd
    float weightDecay = 0.0f;
    float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;  // adam, adamw

    void validate() const;     // throws Error naming the bad setting
    nlohmann::json toJson() const;
    static OptimizerConfig fromJson(const nlohmann::json& json);
};

class Optimizer {
public:
    Optimizer(const OptimizerConfig& config, Backend& backend, std::size_t parameterCount);

    const OptimizerConfig& config() const { return config_; }
    // The StepScalars for step `step` (0-based) at learning rate `learningRate`.
    StepScalars stepScalars(float learningRate, std::uint32_t step) const;
    // One launch over the whole buffer; `step` points to backend memory.
    void update(const StepScalars* step, float* parameters, const float* gradients);

    // Momentum / moment buffers, for checkpoints: {"velocity"} or {"m", "v"}.
    std::vector<std::pair<std::string, Tensor*>> stateTensors();

private:
    OptimizerConfig config_;
    Backend& backend_;
    std::size_t count_;
    Tensor first_, second_;  // sgd: velocity; adam: m, v
};

struct ScheduleConfig {
    std::string kind = "constant";  // "constant" | "step" | "cosine" | "plateau" | "onecycle"
    int warmupEpochs = 0;           // linear warm-up from lr/100, any kind but onecycle (its own)
    int stepEpochs = 10;            // step: multiply by gamma every stepEpochs
    float gamma = 0.1f;             // step and plateau factor
    float minimumLearningRate = 0.0f;  // cosine floor
    int patience = 3;               // plateau: epochs without improvement before decaying

    void validate() const;
    nlohmann::json toJson() const;
    static ScheduleConfig fromJson(const nlohmann::json& json);
};

class LearningRateSchedule {
public:
    LearningRateSchedule(const ScheduleConfig& config, float baseLearningRate,
                         std::int64_t stepsPerEpoch, int epochs);
    float at(std::int64_t step) const;              // 0-based global step
    void endEpoch(double validationLoss);          // plateau bookkeeping
    nlohmann::json state() const;                  // for checkpoints
    void restore(const nlohmann::json& state);

private:
    float oneCycleAt(std::int64_t step) const;
    ScheduleConfig config_;
    float base_;
    std::int64_t stepsPerEpoch_;
    int epochs_;
    float plateauScale_ = 1.0f;
    double bestLoss_ = 1e300;
    int epochsWithoutImprovement_ = 0;
};

// A training step as an execution plan: upload the step's scalars, forward, loss, metrics, backward
// (with the gradient all-reduce of data-parallel runs overlapping it), optimiser update. The
// first run is eager; later runs replay a captured CUDA graph on backends that capture.
class Network;
class GradientSync;
class TrainingStep {
public:
    // gradientSync: null for one process; otherwise it reduces gradients across ranks.
    // metricSums: null, or backend memory (Network::metricsGeometry(batch).sumCount() doubles)
    // into which every step adds its loss and predictions (Network::accumulateMetrics), inside
    // the captured step, so that the caller reads them when it wants, not every step.
    TrainingStep(Network& network, Optimizer& optimizer, bool allowCapture = true,
                 GradientSync* gradientSync = nullptr, double* metricSums = nullptr);
    ~TrainingStep();
    void run(float learningRate, std::uint32_t step);
    bool captured() const { return graph_ != nullptr; }

private:
    void record();
    Network& network_;
    Optimizer& optimizer_;
    bool allowCapture_;
    GradientSync* gradientSync_;
    double* metricSums_;
    int runs_ = 0;
    std::unique_ptr<StepGraph> graph_;
};

}  // namespace cnnstudio
