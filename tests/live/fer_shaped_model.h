// A FER-shaped model made at test time (1x48x48 grey -> 7 emotions): the mini-xception preset
// with seeded weights, biases and batch-norm statistics that are not the identity, written as a
// model folder with FER2013's class names and normalisation. No test framework: the GUI tests
// use it too.
#pragma once

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/network.h"
#include "cnnstudio/presets.h"

namespace cnnstudio::live_testing {

inline const std::vector<std::string> kEmotions = {"Angry", "Disgust", "Fear", "Happy", "Sad", "Surprise", "Neutral"};

// The mini-xception preset with seeded weights, written as a model folder.
inline std::filesystem::path makeFerShapedModel(const std::filesystem::path& folder, std::uint64_t seed = 7) {
    auto backend = createBackend("cpu-ref");
    Network network(loadPreset("mini-xception"), *backend, 1, seed);
    std::mt19937 random{std::uint32_t(seed)};
    std::uniform_real_distribution<float> mean(-0.2f, 0.2f), variance(0.5f, 1.5f), bias(-0.3f, 0.3f);
    std::vector<NamedTensor> tensors = networkTensors(network);
    for (NamedTensor& tensor : tensors) {
        if (tensor.name.ends_with("running_mean")) for (float& v : tensor.values) v = mean(random);
        if (tensor.name.ends_with("running_var")) for (float& v : tensor.values) v = variance(random);
        if (tensor.name.ends_with(".bias")) for (float& v : tensor.values) v = bias(random);
    }
    loadNetworkTensors(network, tensors, "test model");
    ModelInfo info;
    info.classNames = kEmotions;
    info.normalization = {{0.5077f}, {0.2550f}};
    saveModel(folder, network, info);
    return folder;
}

}  // namespace cnnstudio::live_testing
