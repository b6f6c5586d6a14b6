// The sub-commands that use a trained model: `evaluate` (accuracy, per-class table and confusion
// matrix on a data set split) and `predict` (top classes, or logits, of image files).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/network.h"
#include "cnnstudio/trainer.h"

namespace cnnstudio::app {

// A model found from a path, and what the run that made it says about its data.
struct LocatedModel {
    ModelFolder model;
    std::filesystem::path folder;
    std::string dataset;     // the data set it was trained on, when known
    std::uint64_t seed = 0;  // picks the same validation hold-out as training did
};

// `target` is a model folder, a run folder holding model/, or the name of an installed model
// (model_library.h); Error says which it is not.
LocatedModel locateModel(const std::filesystem::path& target);
// The model's network at `batch`, with its trained weights, built for inference.
std::unique_ptr<Network> buildModel(const LocatedModel& located, Backend& backend, int batch);

struct EvaluateCommand {
    // Model folders, run folders holding model/, or models' names; several: their ensemble, each
    // image's probabilities averaged over them (they must share classes and input normalisation).
    std::vector<std::filesystem::path> targets;
    std::optional<std::string> dataset;  // default: the data set the first model was trained on
    std::string split = "test";          // "test" | "validation" | "train"
    std::string backend = "cpu";
    int batch = 256;
    int threads = 0;
    bool skipBad = false;
    std::string tta = "none";            // test-time augmentation: none | flip | tencrop (trainer.h)
};

struct PredictCommand {
    std::filesystem::path target;  // a model folder, a run folder holding model/, or a model's name
    std::vector<std::string> images;
    std::string backend = "cpu";
    int threads = 0;
    int top = 3;
    // One JSON line per image, {"image": PATH, "logits": [...]}, instead of the top classes:
    // the raw network output, for comparing with other readers of the model.
    bool logits = false;
};

// The test-time augmentation `kind` for a model whose inputs are normalised by `normalization`
// (tencrop pads with black, pixel 0, as normalised). Throws Error for an unknown kind.
TestTimeAugmentation testTimeAugmentationFor(const std::string& kind, const InputNormalization& normalization,
                                             int channels);

// Both throw Error naming the model folder, data set or image at fault. runPredict decodes
// images with OpenCV and exists in builds with it (CNNSTUDIO_HAVE_OPENCV) only.
void runEvaluate(const EvaluateCommand& command, std::FILE* out);
void runPredict(const PredictCommand& command, std::FILE* out);

}  // namespace cnnstudio::app
