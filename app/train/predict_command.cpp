// `predict`: image files through a trained model. OpenCV decodes and resizes the images as the
// datasets library's image-folder loader does, so a model sees what it saw in training.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "train/model_commands.h"

namespace cnnstudio::app {

namespace {

// One image file as the model's input: read grey or colour (RGB), resized as the image-folder
// loader does, scaled to [0, 1] and normalised as in training.
std::vector<float> readImageAsInput(const std::string& path, const TensorShape& input,
                                    const InputNormalization& normalization) {
    if (input.channels != 1 && input.channels != 3)
        throw Error("the model takes " + std::to_string(input.channels) + "-channel images", path,
                    "predict reads grey (1) or colour (3) images only");
    cv::Mat image;
    try {
        image = cv::imread(path, input.channels == 1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
        if (image.empty())
            throw Error("cannot read the image", path, "check that the file exists and is an image (png, jpg, ...)");
        if (input.channels == 3) cv::cvtColor(image, image, cv::COLOR_BGR2RGB);
        const bool shrinking = image.cols > input.width || image.rows > input.height;
        if (image.cols != input.width || image.rows != input.height)
            cv::resize(image, image, cv::Size(input.width, input.height), 0, 0,
                       shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
    } catch (const cv::Exception& error) {
        throw Error(std::string("OpenCV cannot decode the image: ") + error.what(), path,
                    "convert it to png or jpg");
    }
    std::vector<float> values(std::size_t(input.countPerImage()));
    const int plane = input.height * input.width;
    for (int y = 0; y < input.height; ++y) {
        const std::uint8_t* row = image.ptr<std::uint8_t>(y);
        for (int x = 0; x < input.width; ++x)
            for (int c = 0; c < input.channels; ++c) {
                float value = float(row[x * input.channels + c]) / 255.0f;
                if (!normalization.mean.empty())
                    value = (value - normalization.mean[std::size_t(c)]) / normalization.stddev[std::size_t(c)];
                values[std::size_t(c * plane + y * input.width + x)] = value;
            }
    }
    return values;
}

}  // namespace

void runPredict(const PredictCommand& command, std::FILE* out) {
    const LocatedModel located = locateModel(command.target);
    BackendOptions options;
    options.threads = command.threads;
    std::unique_ptr<Backend> backend = createBackend(command.backend, options);
    std::unique_ptr<Network> network = buildModel(located, *backend, 1);
    const TensorShape input = network->inputShape();
    const std::vector<std::string>& names = located.model.info.classNames;
    const int classes = network->classes();
    const int shown = std::min(command.top, classes);

    for (const std::string& path : command.images) {
        network->input().fromHost(readImageAsInput(path, input, located.model.info.normalization));
        network->forward(Phase::Inference);
        const std::vector<float> logits = network->logits().toHost();
        if (command.logits) {
            std::fprintf(out, "%s\n", nlohmann::json{{"image", path}, {"logits", logits}}.dump().c_str());
            continue;
        }
        const float largest = *std::max_element(logits.begin(), logits.end());
        std::vector<double> probabilities(static_cast<std::size_t>(classes));
        double sum = 0;
        for (int c = 0; c < classes; ++c) sum += probabilities[std::size_t(c)] = std::exp(double(logits[std::size_t(c)]) - largest);
        std::vector<int> order(static_cast<std::size_t>(classes));
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + shown, order.end(),
                          [&](int a, int b) { return probabilities[std::size_t(a)] > probabilities[std::size_t(b)]; });
        std::fprintf(out, "%s\n", path.c_str());
        for (int rank = 0; rank < shown; ++rank) {
            const int c = order[std::size_t(rank)];
            std::fprintf(out, "  %-16s %6.2f%%\n", names[std::size_t(c)].c_str(),
                         100.0 * probabilities[std::size_t(c)] / sum);
        }
    }
}

}  // namespace cnnstudio::app
