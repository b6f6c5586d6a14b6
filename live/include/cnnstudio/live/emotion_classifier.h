// The trained model the live pipeline runs: every face of a frame through the engine as one
// batch, and Grad-CAM maps computed by the engine's own gradients (Network::explainLogits).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "cnnstudio/backend.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/network.h"

namespace cnnstudio::live {

// The folders searched for a model named by name (resources/models/NAME): the source tree's,
// then the installed one, then $CNNSTUDIO_MODELS_DIR first when it is set.
std::vector<std::filesystem::path> shippedModelFolders();
// The names of the shipped models found in those folders, sorted.
std::vector<std::string> listShippedModels();
// A model folder, a run folder holding model/, or the name of a shipped model, to the model
// folder. Throws Error naming what was tried.
std::filesystem::path resolveModel(const std::string& nameOrFolder);

// What one face's inference gives.
struct FacePrediction {
    std::vector<float> logits;
    std::vector<float> probabilities;  // softmax of the logits
    int predictedClass = 0;
};

class EmotionClassifier {
public:
    // Reads the model folder (Error names the file at fault) and checks that it takes one image
    // and gives class scores. `backend` must outlive the classifier.
    EmotionClassifier(const std::filesystem::path& modelFolder, Backend& backend);
    ~EmotionClassifier();

    const std::vector<std::string>& classNames() const { return model_.info.classNames; }
    const InputNormalization& normalization() const { return model_.info.normalization; }
    cv::Size inputSize() const;
    int inputChannels() const;
    const std::filesystem::path& folder() const { return folder_; }
    std::string modelName() const { return model_.spec.name; }

    // The normalised inputs (CHW each, as cropToInput writes them) through the network, all
    // at once (in batches of at most kMaxBatch).
    std::vector<FacePrediction> classify(const std::vector<std::vector<float>>& inputs);

    // Grad-CAM of each input for its class: the explained layer's maps weighted by the mean of
    // their gradients, summed, ReLU'd and scaled to [0, 1] (all zero where nothing pushes the
    // class up). Maps are float, of the explained layer's height x width.
    std::vector<cv::Mat> gradCam(const std::vector<std::vector<float>>& inputs, const std::vector<int>& classes);
    // The layer Grad-CAM explains: the last convolution with a spatial output.
    const std::string& explainedLayer() const { return explainedLayer_; }

    static constexpr int kMaxBatch = 16;

private:
    Network& networkFor(int batch);
    void upload(Network& network, const std::vector<std::vector<float>>& inputs, std::size_t first, int count);

    std::filesystem::path folder_;
    ModelFolder model_;
    Backend& backend_;
    std::map<int, std::unique_ptr<Network>> networks_;  // one per batch size met, built on first use
    std::string explainedLayer_;
};

// Grad-CAM from one image's activation and gradient, both (C, H, W) floats: weights alpha_c
// = mean over H x W of the gradient, map = relu(sum_c alpha_c A_c), scaled to [0, 1].
cv::Mat gradCamMap(std::span<const float> activation, std::span<const float> gradient, int channels,
                   int height, int width);

}  // namespace cnnstudio::live
