// What the live tests build at test time: a FER-shaped model (1x48x48 grey -> 7 emotions, the
// mini-xception preset with seeded weights and batch-norm statistics that are not the
// identity), and videos and image folders made from a real photograph of a face from Debian's
// opencv-doc (messi5.jpg), moved across a 640x480 frame.
#pragma once

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/network.h"
#include "cnnstudio/presets.h"

namespace cnnstudio::live_testing {

inline const std::vector<std::string> kEmotions = {"Angry", "Disgust", "Fear", "Happy", "Sad", "Surprise", "Neutral"};
inline const std::filesystem::path kFacePhoto = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg";

// A fresh folder under the test's temporary directory.
inline std::filesystem::path scratchFolder(const std::string& name) {
    const std::filesystem::path folder = std::filesystem::path(::testing::TempDir()) / ("cnnstudio-live-" + name);
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    return folder;
}

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

// The photograph (548x342, one face), scaled by `scale`, pasted at each offset on a grey 640x480
// frame.
inline cv::Mat frameWithFaces(const std::vector<cv::Point>& offsets, double scale = 1.0) {
    static const cv::Mat photo = cv::imread(kFacePhoto.string(), cv::IMREAD_COLOR);
    cv::Mat scaled;
    cv::resize(photo, scaled, cv::Size(), scale, scale, scale < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
    cv::Mat frame(480, 640, CV_8UC3, cv::Scalar(90, 90, 90));
    for (const cv::Point& at : offsets) {
        const cv::Rect target = cv::Rect(at, scaled.size()) & cv::Rect(0, 0, frame.cols, frame.rows);
        scaled(cv::Rect(0, 0, target.width, target.height)).copyTo(frame(target));
    }
    return frame;
}

// `frames` (at most 40) frames of the photograph drifting right and down, two pixels a frame
// (MJPG .avi); with faces == 2, two copies at 0.55 size drifting apart.
inline std::filesystem::path makeFaceVideo(const std::filesystem::path& file, int frames, int faces = 1) {
    cv::VideoWriter writer(file.string(), cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25.0, cv::Size(640, 480));
    if (!writer.isOpened()) ADD_FAILURE() << "OpenCV cannot write " << file;
    for (int i = 0; i < frames; ++i) {
        if (faces == 2)
            writer.write(frameWithFaces({{10 - i / 4, 60 + i}, {320 + i / 4, 200 - i}}, 0.55));
        else
            writer.write(frameWithFaces({{10 + 2 * i, 40 + i}}));
    }
    return file;
}

}  // namespace cnnstudio::live_testing
