// What a run leaves on disk besides its events: checkpoints (weights, optimiser state and the
// trainer's progress, enough to continue bit for bit) and the final model folder.
//
//   checkpoints/latest/  weights.safetensors    parameters and batch-norm state by name
//                        optimizer.safetensors  "<buffer>/<parameter>": "velocity/conv1.weight",
//                                               "m/conv1.weight", "v/conv1.weight"
//                        progress.json          TrainingProgress
//   checkpoints/best/    the same, at the best validation accuracy
//   model/               model.safetensors, spec.json, model.json (ModelInfo)
//
// Every file is written atomically, and a checkpoint or model folder as a whole is built next to
// its final place and swapped in with one rename, so a crash leaves the previous one intact.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "cnnstudio/safetensors.h"
#include "cnnstudio/spec.h"

namespace cnnstudio {

// Where training stands, saved with every checkpoint. There is no random-generator state to
// keep: data order and augmentation are functions of (seed, epoch, batch index) and dropout
// masks of (seed, global step), so the seed and the counters below are the whole story.
struct TrainingProgress {
    int epoch = 0;                // 0-based epoch in progress (or about to start)
    std::int64_t epochStep = 0;   // batches of `epoch` already trained
    std::int64_t step = 0;        // optimiser steps taken since the run began
    std::uint64_t seed = 0;
    nlohmann::json schedule;      // LearningRateSchedule::state()
    double bestValidationAccuracy = -1;  // -1: no validation yet
    int bestEpoch = 0;            // 1-based; 0: none
    int epochsWithoutImprovement = 0;
    double wallSeconds = 0;       // training time of every session so far
    double secondsToTarget = -1;  // training time when validation first reached the target; -1: not yet
    // The part of `epoch` already trained, so its epoch event reports the whole epoch.
    double epochLossSum = 0;
    std::int64_t epochCorrect = 0, epochSeen = 0;
    double epochSeconds = 0;

    nlohmann::json toJson() const;
    // Throws Error naming `source` when a field is missing or has the wrong type.
    static TrainingProgress fromJson(const nlohmann::json& json, const std::string& source);
};

// The parameters and the non-trained state of `network` by name (ParameterInfo), on the host.
std::vector<NamedTensor> networkTensors(Network& network);
// Throws Error naming `file`, the tensor and the element of the first NaN or infinity: weights
// that are not finite make every output NaN, so they are refused where they are read.
void rejectNonFiniteValues(const std::vector<NamedTensor>& tensors, const std::filesystem::path& file);
// Uploads tensors named as networkTensors() names them. Throws Error naming `file` and the
// tensor when one is missing, extra, has another shape or holds a value that is not finite.
void loadNetworkTensors(Network& network, const std::vector<NamedTensor>& tensors,
                        const std::filesystem::path& file);

void saveCheckpoint(const std::filesystem::path& folder, Network& network, Optimizer& optimizer,
                    const TrainingProgress& progress);
// Puts the checkpoint in `from` in `to` as well, atomically: hard links where the file system
// allows them (a checkpoint's files are only ever replaced, never changed in place), copies
// flushed to disk where it does not.
void copyCheckpoint(const std::filesystem::path& from, const std::filesystem::path& to);
// Restores the network's weights and state and the optimiser's buffers; returns the progress.
TrainingProgress loadCheckpoint(const std::filesystem::path& folder, Network& network,
                                Optimizer& optimizer);
// The weights of a checkpoint only (the best weights, restored at the end of a resumed run).
std::vector<NamedTensor> readCheckpointWeights(const std::filesystem::path& folder);
bool checkpointExists(const std::filesystem::path& folder);

// How an 8-bit pixel of channel c becomes a network input: (pixel / 255 - mean[c]) / stddev[c]
// (the datasets library's Normalization). Empty: plain pixel / 255.
struct InputNormalization {
    std::vector<float> mean, stddev;
};

struct ModelInfo {
    std::vector<std::string> classNames;
    InputNormalization normalization;
    nlohmann::json trainedOn = nlohmann::json::object();  // data set, accuracy: for people

    nlohmann::json toJson() const;
    static ModelInfo fromJson(const nlohmann::json& json, const std::string& source);
};

// Writes model.safetensors, spec.json (network.spec()) and model.json into `folder`.
void saveModel(const std::filesystem::path& folder, Network& network, const ModelInfo& info);

struct ModelFolder {
    NetworkSpec spec;
    ModelInfo info;
    std::vector<NamedTensor> weights;
};
// Reads and checks a model folder (Error names the file); build a Network from `spec` and pass
// `weights` to loadNetworkTensors.
ModelFolder readModelFolder(const std::filesystem::path& folder);
// A model folder holding `model`, its weights stored as `dtype`: how a trained model becomes a
// shipped one (bf16 halves its file). Written as saveModel writes (staged, then swapped in).
void writeModelFolder(const std::filesystem::path& folder, const ModelFolder& model, WeightsDtype dtype);
// Throws Error unless writing a model folder at `folder` loses nothing: it does not exist, is an
// empty folder, or is a model folder as saveModel writes one (model.json saying
// "cnnstudio-model", spec.json and model.safetensors, nothing else; so never a run folder, whose
// config.json, events and train.lock sit beside model/) that does not hold `input`, the file or
// folder the new model is made from. saveModel and writeModelFolder replace whatever is at their
// folder, so every writer to a folder the user names asks this first.
void requireReplaceableByModelFolder(const std::filesystem::path& folder, const std::filesystem::path& input);

}  // namespace cnnstudio
