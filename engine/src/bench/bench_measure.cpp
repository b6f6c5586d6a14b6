#include "cnnstudio/bench_measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>

#include "cnnstudio/error.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "cnnstudio/shape_inference.h"

namespace cnnstudio {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double timedMs(Backend& backend, const std::function<void()>& work) {
    backend.synchronize();
    const auto start = Clock::now();
    work();
    backend.synchronize();
    return secondsSince(start) * 1000.0;
}

// The mean of a host value over every rank, so that all ranks take the same decision.
double meanOverRanks(Communicator& communicator, double value) {
    double values[1] = {value};
    communicator.allReduceSumHost(values);
    return values[0] / communicator.world().size;
}

void fillRandomBatch(Network& network, Backend& backend) {
    std::mt19937 random(0);
    std::normal_distribution<float> normal;
    std::vector<float> images(static_cast<std::size_t>(network.input().count()));
    for (float& v : images) v = normal(random);
    network.input().fromHost(images);
    std::uniform_int_distribution<std::int32_t> label(0, network.classes() - 1);
    std::vector<std::int32_t> labels(static_cast<std::size_t>(network.batch()));
    for (auto& l : labels) l = label(random);
    backend.upload(network.labels(), labels.data(), labels.size() * sizeof(std::int32_t));
}

std::string formatSeconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, seconds < 10 ? "%.2f s" : "%.0f s", seconds);
    return text;
}

// Cuts `into`'s steps and repeats to what the plan allows, given how long one step takes,
// and says why in reduced_reason.
void reduceToBudget(const BenchPlan& plan, double stepSeconds, BenchConfiguration& into) {
    std::vector<std::string> reasons;
    if (plan.stepCap > 0 && into.steps > plan.stepCap) {
        reasons.push_back(plan.stepCapReason + ": " + std::to_string(plan.stepCap) + " steps instead of " +
                          std::to_string(into.steps));
        into.steps = plan.stepCap;
    }
    const double planned = into.steps * into.repeats * stepSeconds;
    if (planned > plan.budgetSeconds) {
        const int asked = into.steps, askedRepeats = into.repeats;
        into.steps = std::max(1, int(plan.budgetSeconds / (into.repeats * stepSeconds)));
        if (into.steps * into.repeats * stepSeconds > plan.budgetSeconds) into.repeats = 1;
        reasons.push_back("a step takes " + formatSeconds(stepSeconds) + ", so " + std::to_string(into.steps) +
                          " step(s) x " + std::to_string(into.repeats) + " repeat(s) instead of " +
                          std::to_string(asked) + " x " + std::to_string(askedRepeats) + " (budget " +
                          formatSeconds(plan.budgetSeconds) + " per configuration)");
    }
    into.reduced = !reasons.empty();
    into.reducedReason.clear();
    for (const std::string& reason : reasons)
        into.reducedReason += (into.reducedReason.empty() ? "" : "; ") + reason;
}

// Images/s of `into.repeats` timed runs of `into.steps` training steps, all ranks together.
BenchThroughput timeTraining(Backend& backend, Communicator& communicator, TrainingStep& step,
                             float learningRate, std::uint32_t& stepNumber, int batch,
                             const BenchConfiguration& into) {
    std::vector<double> imagesPerSecond;
    for (int repeat = 0; repeat < into.repeats; ++repeat) {
        communicator.barrier();
        const auto start = Clock::now();
        for (int i = 0; i < into.steps; ++i) step.run(learningRate, stepNumber++);
        backend.synchronize();
        const double seconds = meanOverRanks(communicator, secondsSince(start));
        imagesPerSecond.push_back(double(batch) * communicator.world().size * into.steps / seconds);
    }
    return BenchThroughput::fromRepeats(std::move(imagesPerSecond));
}

// Forward passes in eval mode (the inference fusions on), after one untimed pass.
double timeInference(Backend& backend, Communicator& communicator, Network& network, int passes) {
    network.forward(Phase::Inference);
    backend.synchronize();
    const auto start = Clock::now();
    for (int i = 0; i < passes; ++i) network.forward(Phase::Inference);
    backend.synchronize();
    const double seconds = meanOverRanks(communicator, secondsSince(start));
    return double(network.batch()) * communicator.world().size * passes / seconds;
}

// Per layer and per category, the mean over `passes` profiled steps.
void profileStep(Backend& backend, Communicator& communicator, Network& network, Optimizer& optimizer,
                 int passes, BenchConfiguration& into) {
    std::vector<LayerTime> sum;
    double updateMs = 0, communicationMs = 0;
    for (int pass = 0; pass < passes; ++pass) {
        std::vector<LayerTime> times = network.profileTrainingPass();
        if (sum.empty()) sum = times;
        else
            for (std::size_t i = 0; i < times.size(); ++i) {
                sum[i].forwardMs += times[i].forwardMs;
                sum[i].backwardMs += times[i].backwardMs;
            }
        if (communicator.world().size > 1) {
            communicator.barrier();
            communicationMs += timedMs(backend, [&] {
                communicator.allReduceMean(network.gradients(), network.parameterCount());
            });
        }
        updateMs += timedMs(backend, [&] {
            optimizer.update(network.stepScalars(), network.parameters(), network.gradients());
        });
    }
    into.layers.clear();
    into.breakdownMs = {};
    for (const LayerTime& layer : sum) {
        BenchLayerTime time{layer.name, layer.type, breakdownCategoryOfLayerType(layer.type),
                            layer.forwardMs / passes, layer.backwardMs / passes};
        into.breakdownMs.at(time.category) += time.forwardMs + time.backwardMs;
        into.layers.push_back(std::move(time));
    }
    into.breakdownMs.update = updateMs / passes;
    into.breakdownMs.communication = communicationMs / passes;
}

}  // namespace

std::string profilingMethodDescription() {
    return "breakdown_ms and layers come from a profiling pass that synchronises the backend "
           "around every layer call (mean of up to 3 steps, 1 for reduced configurations); "
           "communication is one all-reduce of every gradient, timed apart from backward (in "
           "the timed steps it overlaps backward). The sum is above an unprofiled step's time.";
}

std::string breakdownCategoryOfLayerType(const std::string& type) {
    if (type == "SoftmaxCrossEntropy") return "loss";
    static const std::map<std::string, std::string> byPaletteCategory{
        {"Convolution", "convolution"}, {"Normalisation", "batch_norm"}, {"Activation", "activation"},
        {"Pooling", "pooling"},         {"Dense", "dense"}};
    const LayerTypeInfo* info = findLayerType(type);
    if (!info) return "other";
    auto it = byPaletteCategory.find(info->category);
    return it == byPaletteCategory.end() ? "other" : it->second;
}

BenchNetwork describeNetwork(const NetworkSpec& spec) {
    const ShapeReport shapes = inferShapes(spec);
    BenchNetwork network;
    network.name = spec.name;
    network.input = {shapes.inputShape.channels, shapes.inputShape.height, shapes.inputShape.width};
    network.classes = int(shapes.outputShape.countPerImage());
    network.parameters = std::uint64_t(shapes.totalParameters);
    network.trainGflopPerImage = 3.0 * double(shapes.totalForwardFlops) / 1e9;
    return network;
}

void measureConfiguration(Backend& backend, Communicator& communicator, const NetworkSpec& spec,
                          int batch, const BenchPlan& plan, BenchConfiguration& into) {
    if (plan.steps < 1 || plan.repeats < 1 || plan.warmup < 1)
        throw Error("steps, warm-up steps and repeats must each be at least 1", "benchmark plan");
    Network network(spec, backend, batch, 0);
    fillRandomBatch(network, backend);
    OptimizerConfig sgd;  // lr 0.01, momentum 0.9, as bench/pytorch_reference.py
    Optimizer optimizer(sgd, backend, network.parameterCount());
    GradientSync gradientSync(network, communicator, plan.gradientBucketBytes);
    TrainingStep step(network, optimizer, plan.capture, &gradientSync);

    into.steps = plan.steps;
    into.warmup = plan.warmup;
    into.repeats = plan.repeats;
    std::uint32_t stepNumber = 0;
    double lastWarmupSeconds = 0;
    for (int i = 0; i < plan.warmup; ++i) {
        const auto start = Clock::now();
        step.run(sgd.learningRate, stepNumber++);
        backend.synchronize();
        lastWarmupSeconds = secondsSince(start);
    }
    reduceToBudget(plan, meanOverRanks(communicator, lastWarmupSeconds), into);

    into.trainImagesPerSecond = timeTraining(backend, communicator, step, sgd.learningRate, stepNumber, batch, into);
    if (!std::isfinite(network.downloadLoss()))
        throw Error("the loss became non-finite while benchmarking", "backend '" + backend.name() + "'");
    into.inferenceImagesPerSecond = timeInference(backend, communicator, network, into.steps);
    profileStep(backend, communicator, network, optimizer, into.reduced ? 1 : 3, into);
}

}  // namespace cnnstudio
