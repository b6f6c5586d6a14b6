// The sub-commands that use a trained model: `evaluate` (accuracy, per-class table and confusion
// matrix on a data set split) and `predict` (top classes of image files).
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cnnstudio::app {

struct EvaluateCommand {
    std::filesystem::path target;        // a model folder, or a run folder holding model/
    std::optional<std::string> dataset;  // default: the data set the model was trained on
    std::string split = "test";          // "test" | "validation" | "train"
    std::string backend = "cpu";
    int batch = 256;
    int threads = 0;
    bool skipBad = false;
};

struct PredictCommand {
    std::filesystem::path target;  // a model folder, or a run folder holding model/
    std::vector<std::string> images;
    std::string backend = "cpu";
    int threads = 0;
    int top = 3;
};

// Both throw Error naming the model folder, data set or image at fault.
void runEvaluate(const EvaluateCommand& command, std::FILE* out);
void runPredict(const PredictCommand& command, std::FILE* out);

}  // namespace cnnstudio::app
