// A training run of cnnstudio-train, fresh or resumed: the run folder, the data, the network
// fitted to the data, the trainer, and the events (with a `failed` event for any error once the
// run folder exists).
#pragma once

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "cnnstudio/datasets/dataset.h"
#include "cnnstudio/spec.h"
#include "train/run_config.h"

namespace cnnstudio::app {

struct TrainCommand {
    RunConfig config;                 // from the options (a fresh run)
    std::filesystem::path runDir;     // empty: runs/<network>-<local time>
    std::filesystem::path resume;     // non-empty: continue this run; config is read from it
    // The settings a resumed run may change; anything else comes from its config.json.
    std::optional<int> epochs, logEvery, threads;
    std::optional<CheckpointCadence> checkpointEvery;
    std::string events;               // "-": also to standard output; a path: also to that file
    // Linear learning-rate scaling for data-parallel runs: lr x ranks, reached by a linear
    // warm-up (1 epoch unless --warmup-epochs asks for more). Applied to a fresh run only.
    bool scaleLearningRate = false;
};

// Under mpirun every rank calls this: rank 0 owns the run folder (creates it, writes the
// events, checkpoints and model), the others read it only to resume. Run alone it is one rank.

// Returns the trainer's reason for ending: "completed", "early_stopped" or "stopped" (a signal
// stopped it with a checkpoint, to be resumed). Throws Error (after writing the `failed` event
// when a run folder exists).
std::string runTraining(const TrainCommand& command, const std::atomic<bool>& stop);

// --summary: the per-layer table of the spec, fitted to `dataset` when one is given.
// Returns false (after printing the problems) when the spec has problems.
bool printSummary(const std::string& specSource, const std::optional<std::string>& dataset, std::FILE* out);

// "preset:NAME" or "file:PATH" -> the spec; Error names the preset list or the file.
NetworkSpec loadSpecSource(const std::string& source);

// runs/<network>-<local time>, for "preset:NAME" or "file:PATH".
std::filesystem::path defaultRunDir(const std::string& specSource);

// Loads a data set for a network whose Input node is `input` (image folders are converted to
// its channels and size). Reports what was loaded, and bad inputs skipped, on `log`.
datasets::DatasetSplits loadDataFor(const std::string& dataset, const NetworkSpec& spec, std::size_t limit,
                                    bool skipBad, std::uint64_t seed, std::FILE* log);

}  // namespace cnnstudio::app
