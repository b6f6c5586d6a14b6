#include "cnnstudio/live/emotion_classifier.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "cnnstudio/error.h"
#include "cnnstudio/run_folder.h"

namespace cnnstudio::live {

namespace {

bool isModelFolder(const std::filesystem::path& folder) {
    return std::filesystem::is_regular_file(folder / RunFolder::kModelInfoFileName);
}

std::vector<float> softmax(const std::vector<float>& logits) {
    const float largest = *std::max_element(logits.begin(), logits.end());
    std::vector<float> probabilities(logits.size());
    double sum = 0;
    for (std::size_t c = 0; c < logits.size(); ++c) sum += probabilities[c] = std::exp(logits[c] - largest);
    for (float& p : probabilities) p = float(p / sum);
    return probabilities;
}

}  // namespace

std::vector<std::filesystem::path> shippedModelFolders() {
    std::vector<std::filesystem::path> folders;
    if (const char* override = std::getenv("CNNSTUDIO_MODELS_DIR"); override && *override) folders.emplace_back(override);
    folders.emplace_back(CNNSTUDIO_SHIPPED_MODELS_DIR);
    folders.emplace_back(CNNSTUDIO_INSTALLED_MODELS_DIR);
    return folders;
}

std::vector<std::string> listShippedModels() {
    std::set<std::string> names;
    for (const std::filesystem::path& folder : shippedModelFolders()) {
        std::error_code error;
        for (const auto& entry : std::filesystem::directory_iterator(folder, error))
            if (entry.is_directory() && isModelFolder(entry.path())) names.insert(entry.path().filename().string());
    }
    return {names.begin(), names.end()};
}

std::filesystem::path resolveModel(const std::string& nameOrFolder) {
    const std::filesystem::path given(nameOrFolder);
    if (isModelFolder(given)) return given;
    if (isModelFolder(given / RunFolder::kModelFolderName)) return given / RunFolder::kModelFolderName;
    if (std::filesystem::exists(given / RunFolder::kConfigFileName))
        throw Error("the run has no final model yet", nameOrFolder,
                    "a stopped run gets one when it finishes: continue it with cnnstudio-train --resume");
    std::string searched;
    if (given.filename() == given) {
        for (const std::filesystem::path& folder : shippedModelFolders()) {
            if (isModelFolder(folder / given)) return folder / given;
            searched += (searched.empty() ? "" : ", ") + folder.string();
        }
    }
    throw Error("neither a model folder (model.json), a finished run folder nor a shipped model", nameOrFolder,
                searched.empty() ? "pass RUN_DIR, RUN_DIR/model or a shipped model's name"
                                 : "shipped models are looked for in " + searched);
}

EmotionClassifier::EmotionClassifier(const std::filesystem::path& modelFolder, Backend& backend)
    : folder_(modelFolder), model_(readModelFolder(modelFolder)), backend_(backend) {
    Network& first = networkFor(1);
    if (int(model_.info.classNames.size()) != first.classes())
        throw Error(std::to_string(model_.info.classNames.size()) + " class names for " +
                        std::to_string(first.classes()) + " outputs",
                    (folder_ / RunFolder::kModelInfoFileName).string(), "the model folder is damaged");
    const TensorShape input = first.inputShape();
    if (input.channels != 1 && input.channels != 3)
        throw Error("the model takes " + std::to_string(input.channels) + "-channel images", folder_.string(),
                    "the live demo runs grey (1) or colour (3) models");
    explainedLayer_ = first.lastConvolutionalLayer();
}

EmotionClassifier::~EmotionClassifier() = default;

cv::Size EmotionClassifier::inputSize() const {
    const TensorShape input = networks_.at(1)->inputShape();
    return {input.width, input.height};
}

int EmotionClassifier::inputChannels() const { return networks_.at(1)->inputShape().channels; }

Network& EmotionClassifier::networkFor(int batch) {
    std::unique_ptr<Network>& network = networks_[batch];
    if (!network) {
        network = std::make_unique<Network>(model_.spec, backend_, batch, 0);
        loadNetworkTensors(*network, model_.weights, folder_ / "model.safetensors");
    }
    return *network;
}

void EmotionClassifier::upload(Network& network, const std::vector<std::vector<float>>& inputs, std::size_t first,
                               int count) {
    const std::size_t perImage = std::size_t(network.inputShape().countPerImage());
    std::vector<float> batch(perImage * std::size_t(count));
    for (int i = 0; i < count; ++i) {
        const std::vector<float>& image = inputs[first + std::size_t(i)];
        if (image.size() != perImage)
            throw Error("an input of " + std::to_string(image.size()) + " values for a model taking " +
                            std::to_string(perImage),
                        folder_.string());
        std::copy(image.begin(), image.end(), batch.begin() + std::ptrdiff_t(perImage * std::size_t(i)));
    }
    network.input().fromHost(batch);
}

std::vector<FacePrediction> EmotionClassifier::classify(const std::vector<std::vector<float>>& inputs) {
    std::vector<FacePrediction> predictions;
    for (std::size_t first = 0; first < inputs.size(); first += kMaxBatch) {
        const int count = int(std::min<std::size_t>(kMaxBatch, inputs.size() - first));
        Network& network = networkFor(count);
        upload(network, inputs, first, count);
        network.forward(Phase::Inference);
        const std::vector<float> logits = network.logits().toHost();
        const std::size_t classes = std::size_t(network.classes());
        for (int i = 0; i < count; ++i) {
            FacePrediction prediction;
            prediction.logits.assign(logits.begin() + std::ptrdiff_t(classes * std::size_t(i)),
                                     logits.begin() + std::ptrdiff_t(classes * std::size_t(i + 1)));
            prediction.probabilities = softmax(prediction.logits);
            prediction.predictedClass = int(std::max_element(prediction.probabilities.begin(),
                                                             prediction.probabilities.end()) -
                                            prediction.probabilities.begin());
            predictions.push_back(std::move(prediction));
        }
    }
    return predictions;
}

std::vector<cv::Mat> EmotionClassifier::gradCam(const std::vector<std::vector<float>>& inputs,
                                                const std::vector<int>& classes) {
    if (inputs.size() != classes.size())
        throw Error(std::to_string(classes.size()) + " classes for " + std::to_string(inputs.size()) + " faces",
                    "Grad-CAM");
    std::vector<cv::Mat> maps;
    for (std::size_t first = 0; first < inputs.size(); first += kMaxBatch) {
        const int count = int(std::min<std::size_t>(kMaxBatch, inputs.size() - first));
        Network& network = networkFor(count);
        upload(network, inputs, first, count);
        network.explainLogits({classes.begin() + std::ptrdiff_t(first), classes.begin() + std::ptrdiff_t(first) + count},
                              explainedLayer_);
        const Tensor& activationTensor = network.activation(explainedLayer_);
        const std::vector<float> activation = activationTensor.toHost();
        const std::vector<float> gradient = network.activationGradient(explainedLayer_).toHost();
        const TensorShape shape = activationTensor.shape();
        const std::size_t perImage = std::size_t(shape.countPerImage());
        for (int i = 0; i < count; ++i)
            maps.push_back(gradCamMap(std::span(activation).subspan(perImage * std::size_t(i), perImage),
                                      std::span(gradient).subspan(perImage * std::size_t(i), perImage),
                                      shape.channels, shape.height, shape.width));
    }
    return maps;
}

cv::Mat gradCamMap(std::span<const float> activation, std::span<const float> gradient, int channels, int height,
                   int width) {
    const std::size_t plane = std::size_t(height) * std::size_t(width);
    if (activation.size() != plane * std::size_t(channels) || gradient.size() != activation.size())
        throw Error("activation and gradient do not match (" + std::to_string(channels) + ", " +
                        std::to_string(height) + ", " + std::to_string(width) + ")",
                    "Grad-CAM");
    cv::Mat map(height, width, CV_32F, cv::Scalar(0));
    float* out = map.ptr<float>();
    for (int c = 0; c < channels; ++c) {
        const float* a = activation.data() + std::size_t(c) * plane;
        const float* g = gradient.data() + std::size_t(c) * plane;
        double alpha = 0;
        for (std::size_t i = 0; i < plane; ++i) alpha += g[i];
        alpha /= double(plane);
        for (std::size_t i = 0; i < plane; ++i) out[i] += float(alpha * a[i]);
    }
    double largest = 0;
    for (std::size_t i = 0; i < plane; ++i) largest = std::max(largest, double(out[i] = std::max(out[i], 0.0f)));
    if (largest > 0) map /= largest;
    return map;
}

}  // namespace cnnstudio::live
