// The fully resolved configuration of a training run: everything needed to start it again or
// continue it, written to RUN_DIR/config.json and sent in the `run_started` event.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cnnstudio/checkpoint.h"
#include "cnnstudio/trainer.h"

namespace cnnstudio::app {

// How a run's ranks were laid out: what a resumed run must start again, since the rank count
// fixes the global batch and each rank's share of the data.
struct DistributedLayout {
    int ranksPerNode = 1;  // --gpus N / --ranks N
    int nodes = 1;         // --nodes M
    std::string hostfile;  // --hostfile F, absolute; empty on one node
    int ranks() const { return ranksPerNode * nodes; }
    bool operator==(const DistributedLayout&) const = default;
    std::string describe() const;  // "4 ranks (2 per node on 2 nodes, hostfile /a/hosts)"
    nlohmann::json toJson() const;
    // The layout a launcher hands its ranks in kLayoutVariable (the ranks cannot see its options).
    static constexpr const char* kLayoutVariable = "CNNSTUDIO_RUN_LAYOUT";
};

struct RunConfig {
    std::string recipe;                   // the --recipe it started from; empty without one
    std::string spec;                     // "preset:NAME" or "file:PATH" (absolute)
    std::string dataset = "fashion-mnist";  // a datasets spec string
    std::string backend = "cpu";
    std::string precision = "fp32";
    int threads = 0;                      // 0: every core
    int batch = 64;
    std::string augment = "none";         // datasets::parseAugmentation text
    std::string classWeights = "none";    // "none" | "balanced" (the weights are in trainer.loss)
    std::size_t limit = 0;                // first N training images; 0: all
    bool skipBad = false;
    InputNormalization normalization;     // measured on the training split
    DistributedLayout distributed;        // one process unless started by the launcher
    TrainerConfig trainer;
    // What the Train page predicted before the run (--predicted-epoch-s, --predicted-total-s,
    // --prediction-basis), kept so the finished run can be shown beside it; none: not predicted.
    struct Prediction {
        double epochSeconds = 0, totalSeconds = 0;
        std::string basis;  // which report and configuration it came from
    };
    std::optional<Prediction> prediction;

    nlohmann::json toJson() const;
    // Throws Error naming `source` (config.json) for a missing or mistyped field.
    static RunConfig fromJson(const nlohmann::json& json, const std::string& source);
};

}  // namespace cnnstudio::app
