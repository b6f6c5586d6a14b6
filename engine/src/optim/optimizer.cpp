#include "cnnstudio/optimizer.h"

#include <cmath>

#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

void require(bool condition, const std::string& what) {
    if (!condition) throw Error(what, "optimiser settings");
}

}  // namespace

void OptimizerConfig::validate() const {
    require(kind == "sgd" || kind == "adam" || kind == "adamw",
            "unknown optimiser '" + kind + "' (use sgd, adam or adamw)");
    require(std::isfinite(learningRate) && learningRate > 0.0f,
            "learning rate must be positive, got " + std::to_string(learningRate));
    require(momentum >= 0.0f && momentum < 1.0f, "momentum must be in [0, 1), got " + std::to_string(momentum));
    require(!nesterov || momentum > 0.0f, "Nesterov momentum needs momentum > 0");
    require(weightDecay >= 0.0f, "weight decay must be >= 0, got " + std::to_string(weightDecay));
    require(beta1 >= 0.0f && beta1 < 1.0f && beta2 >= 0.0f && beta2 < 1.0f,
            "Adam betas must be in [0, 1)");
    require(epsilon > 0.0f, "Adam epsilon must be positive");
}

nlohmann::json OptimizerConfig::toJson() const {
    return {{"kind", kind}, {"learning_rate", learningRate}, {"momentum", momentum},
            {"nesterov", nesterov}, {"weight_decay", weightDecay}, {"beta1", beta1},
            {"beta2", beta2}, {"epsilon", epsilon}};
}

OptimizerConfig OptimizerConfig::fromJson(const nlohmann::json& json) {
    OptimizerConfig c;
    c.kind = json.value("kind", c.kind);
    c.learningRate = json.value("learning_rate", c.learningRate);
    c.momentum = json.value("momentum", c.momentum);
    c.nesterov = json.value("nesterov", c.nesterov);
    c.weightDecay = json.value("weight_decay", c.weightDecay);
    c.beta1 = json.value("beta1", c.beta1);
    c.beta2 = json.value("beta2", c.beta2);
    c.epsilon = json.value("epsilon", c.epsilon);
    return c;
}

Optimizer::Optimizer(const OptimizerConfig& config, Backend& backend, std::size_t parameterCount)
    : config_(config), backend_(backend), count_(parameterCount) {
    config_.validate();
    TensorShape shape{1, int(parameterCount), 1, 1};
    first_ = Tensor(backend, shape);
    backend.fill(first_.data(), 0.0f, parameterCount);
    if (config_.kind != "sgd") {
        second_ = Tensor(backend, shape);
        backend.fill(second_.data(), 0.0f, parameterCount);
    }
}

StepScalars Optimizer::stepScalars(float learningRate, std::uint32_t step) const {
    StepScalars scalars;
    scalars.learningRate = learningRate;
    scalars.step = step;
    double t = double(step) + 1.0;
    scalars.adamCorrection1 = float(1.0 - std::pow(double(config_.beta1), t));
    scalars.adamCorrection2 = float(1.0 - std::pow(double(config_.beta2), t));
    return scalars;
}

void Optimizer::update(const StepScalars* step, float* parameters, const float* gradients) {
    if (config_.kind == "sgd") {
        backend_.sgdUpdate({config_.momentum, config_.nesterov, config_.weightDecay}, step,
                           parameters, gradients, first_.data(), count_);
    } else {
        backend_.adamUpdate({config_.beta1, config_.beta2, config_.epsilon, config_.weightDecay,
                             config_.kind == "adamw"},
                            step, parameters, gradients, first_.data(), second_.data(), count_);
    }
}

std::vector<std::pair<std::string, Tensor*>> Optimizer::stateTensors() {
    if (config_.kind == "sgd") return {{"velocity", &first_}};
    return {{"m", &first_}, {"v", &second_}};
}

}  // namespace cnnstudio
