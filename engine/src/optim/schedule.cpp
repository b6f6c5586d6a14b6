#include <algorithm>
#include <cmath>
#include <numbers>

#include "cnnstudio/error.h"
#include "cnnstudio/optimizer.h"

namespace cnnstudio {

void ScheduleConfig::validate() const {
    auto require = [](bool ok, const std::string& what) {
        if (!ok) throw Error(what, "learning-rate schedule");
    };
    require(kind == "constant" || kind == "step" || kind == "cosine" || kind == "plateau" || kind == "onecycle",
            "unknown schedule '" + kind + "' (use constant, step, cosine, plateau or onecycle)");
    require(warmupEpochs >= 0, "warm-up epochs must be >= 0");
    require(kind != "onecycle" || warmupEpochs == 0,
            "the onecycle schedule warms up by itself (over the first 30% of the steps); give no warm-up epochs");
    require(stepEpochs >= 1, "step schedule needs step epochs >= 1");
    require(gamma > 0.0f && gamma <= 1.0f, "decay factor must be in (0, 1]");
    require(minimumLearningRate >= 0.0f, "minimum learning rate must be >= 0");
    require(patience >= 1, "plateau patience must be >= 1");
}

nlohmann::json ScheduleConfig::toJson() const {
    return {{"kind", kind}, {"warmup_epochs", warmupEpochs}, {"step_epochs", stepEpochs},
            {"gamma", gamma}, {"minimum_learning_rate", minimumLearningRate},
            {"patience", patience}};
}

ScheduleConfig ScheduleConfig::fromJson(const nlohmann::json& json) {
    ScheduleConfig c;
    c.kind = json.value("kind", c.kind);
    c.warmupEpochs = json.value("warmup_epochs", c.warmupEpochs);
    c.stepEpochs = json.value("step_epochs", c.stepEpochs);
    c.gamma = json.value("gamma", c.gamma);
    c.minimumLearningRate = json.value("minimum_learning_rate", c.minimumLearningRate);
    c.patience = json.value("patience", c.patience);
    return c;
}

LearningRateSchedule::LearningRateSchedule(const ScheduleConfig& config, float baseLearningRate,
                                           std::int64_t stepsPerEpoch, int epochs)
    : config_(config), base_(baseLearningRate), stepsPerEpoch_(std::max<std::int64_t>(stepsPerEpoch, 1)),
      epochs_(std::max(epochs, 1)) {
    config_.validate();
}

// One-cycle as PyTorch's OneCycleLR with its defaults (pct_start 0.3, anneal_strategy 'cos',
// div_factor 25, final_div_factor 1e4; momentum is not cycled): from base/25 up to base over the
// first 30% of the steps along a half cosine, then down to base/25/1e4 along another.
float LearningRateSchedule::oneCycleAt(std::int64_t step) const {
    constexpr double kRisingFraction = 0.3, kInitialDivisor = 25, kFinalDivisor = 1e4;
    const double total = double(std::int64_t(epochs_) * stepsPerEpoch_);
    const double initial = base_ / kInitialDivisor, final = initial / kFinalDivisor;
    // PyTorch's phase ends: step pct_start * total - 1 is the peak, step total - 1 the end.
    const double peakStep = kRisingFraction * total - 1.0, lastStep = total - 1.0;
    auto cosineFromTo = [](double from, double to, double progress) {
        return to + (from - to) * 0.5 * (1.0 + std::cos(std::numbers::pi * std::clamp(progress, 0.0, 1.0)));
    };
    const double s = double(step);
    if (s <= peakStep) return float(cosineFromTo(initial, base_, peakStep > 0 ? s / peakStep : 1.0));
    return float(cosineFromTo(base_, final, (s - peakStep) / std::max(lastStep - peakStep, 1.0)));
}

float LearningRateSchedule::at(std::int64_t step) const {
    if (config_.kind == "onecycle") return oneCycleAt(step);
    const std::int64_t warmupSteps = std::int64_t(config_.warmupEpochs) * stepsPerEpoch_;
    if (step < warmupSteps)  // linear from base/100 up to base
        return base_ * (0.01f + 0.99f * float(step) / float(warmupSteps));
    const double epoch = double(step) / double(stepsPerEpoch_);
    if (config_.kind == "step")
        return base_ * std::pow(config_.gamma, std::floor(epoch / config_.stepEpochs));
    if (config_.kind == "cosine") {
        const double total = double(std::int64_t(epochs_) * stepsPerEpoch_ - warmupSteps);
        const double progress = std::min(1.0, double(step - warmupSteps) / std::max(total, 1.0));
        const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
        return float(config_.minimumLearningRate + (base_ - config_.minimumLearningRate) * cosine);
    }
    if (config_.kind == "plateau") return base_ * plateauScale_;
    return base_;
}

void LearningRateSchedule::endEpoch(double validationLoss) {
    if (config_.kind != "plateau") return;
    if (validationLoss < bestLoss_) {
        bestLoss_ = validationLoss;
        epochsWithoutImprovement_ = 0;
    } else if (++epochsWithoutImprovement_ >= config_.patience) {
        plateauScale_ *= config_.gamma;
        epochsWithoutImprovement_ = 0;
    }
}

nlohmann::json LearningRateSchedule::state() const {
    return {{"plateau_scale", plateauScale_}, {"best_loss", bestLoss_},
            {"epochs_without_improvement", epochsWithoutImprovement_}};
}

void LearningRateSchedule::restore(const nlohmann::json& state) {
    plateauScale_ = state.at("plateau_scale").get<float>();
    bestLoss_ = state.at("best_loss").get<double>();
    epochsWithoutImprovement_ = state.at("epochs_without_improvement").get<int>();
}

}  // namespace cnnstudio
