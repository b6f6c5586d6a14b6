// Predicted run time of a training run from a benchmark report of this machine
// (cnnstudio/bench_report.h): the Train page shows it before Train is pressed and records it
// in the run's config, so that the finished run can be shown beside it.
//
// The report's configuration closest to the run (same backend and precision; then the same
// ranks, CPU threads and batch, nearest batch when none matches) gives training and inference
// images/s. When the report measured another network, both are scaled by the ratio of training
// FLOPs per image (a network twice as heavy trains about half as fast). An epoch trains every
// training image and evaluates every validation image.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cnnstudio/bench_report.h"

namespace cnnstudio {

struct RunTimeQuery {
    std::string networkName;
    double trainGflopPerImage = 0;  // as BenchNetwork (describeNetwork of the run's network)
    std::int64_t trainImages = 0, validationImages = 0;  // per epoch, all ranks together
    int epochs = 1;
    std::string backend, precision = "fp32";
    int threads = 0;  // CPU threads (0: every core)
    int batch = 64;   // per rank
    int ranks = 1;
};

struct RunTimePrediction {
    double epochSeconds = 0, totalSeconds = 0;
    double trainImagesPerSecond = 0, inferenceImagesPerSecond = 0;  // as assumed
    std::string configurationLabel;  // the report's configuration it comes from
    bool scaledByFlops = false;      // the report measured another network
    std::string basis;  // "cudnn bf16 in report.json" or "... scaled by FLOPs from mini-xception"
};

// None when the report has no successful configuration of the run's backend and precision
// (then a probe, `cnnstudio-bench --probe`, measures one). `reportName` names the report in
// the basis text.
std::optional<RunTimePrediction> predictRunTime(const RunTimeQuery& query, const BenchReport& report,
                                                const std::string& reportName);

// "~12 s", "~2 min", "~1.5 h": how the Train page writes a predicted or measured duration.
std::string formatApproximateDuration(double seconds);

}  // namespace cnnstudio
