// Measuring one benchmark configuration on a backend the caller created: full training steps
// (forward, loss, backward with the gradient all-reduce, SGD-momentum update) on random data,
// forward-only inference, and a profiling pass for where a step's time goes. cnnstudio-bench
// runs it once per configuration of a sweep (on every rank of a multi-rank one) and writes
// the results into a BenchReport (cnnstudio/bench_report.h).
#pragma once

#include <string>

#include "cnnstudio/backend.h"
#include "cnnstudio/bench_report.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/spec.h"

namespace cnnstudio {

struct BenchPlan {
    int steps = 4;      // timed training steps per repeat
    int warmup = 1;     // untimed steps before (first-call costs: algorithm search, primitives)
    int repeats = 3;    // timed repeats; the report keeps each one and their median
    bool capture = true;  // let GPU backends capture the step as a CUDA graph
    std::size_t gradientBucketBytes = kDefaultGradientBucketBytes;  // GradientSync's, on several ranks
    // A configuration whose last warm-up step shows the plan would take longer than this runs
    // fewer steps (and, if still too slow, one repeat) and says so in reduced_reason.
    double budgetSeconds = 30;
    // At most this many timed steps per repeat whatever the budget (cpu-ref: plain loops, so
    // the sweep stays minutes long); 0: no cap.
    int stepCap = 0;
    std::string stepCapReason;  // why the cap applies, for reduced_reason
};

// How BenchReport::breakdownMethod describes what profilingPass measures.
std::string profilingMethodDescription();

// Fills `into`'s steps, warmup, repeats, reduced, reduced_reason, train and inference
// images/s, breakdown_ms and layers (ranks, labels and memory are the caller's). Images/s
// count every rank's images. Every rank of `communicator` must call it with the same plan.
// Throws Error when the backend fails or the loss becomes non-finite.
void measureConfiguration(Backend& backend, Communicator& communicator, const NetworkSpec& spec,
                          int batch, const BenchPlan& plan, BenchConfiguration& into);

// The breakdown category of a layer type ("Conv2D" -> "convolution", "BatchNorm2D" ->
// "batch_norm"), from the type's palette category; "other" for structure and regularisation.
std::string breakdownCategoryOfLayerType(const std::string& type);

// The report's description of a network: input, classes, parameters and the training GFLOP
// per image (forward FLOPs x 3: backward costs about twice the forward).
BenchNetwork describeNetwork(const NetworkSpec& spec);

}  // namespace cnnstudio
