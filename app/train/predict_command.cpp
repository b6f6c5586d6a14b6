// `predict`: image files through a trained model. The datasets library reads each image as its
// image-folder loader does, so a model sees what it saw in training.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/datasets/image_file.h"
#include "cnnstudio/datasets/normalization.h"
#include "cnnstudio/error.h"
#include "train/model_commands.h"

namespace cnnstudio::app {

namespace {

// One image file as the model's input: read as the image-folder loader reads it (grey or RGB,
// resized), scaled to [0, 1] and normalised as in training.
std::vector<float> readImageAsInput(const std::string& path, const TensorShape& input,
                                    const InputNormalization& normalization) {
    if (input.channels != 1 && input.channels != 3)
        throw Error("the model takes " + std::to_string(input.channels) + "-channel images", path,
                    "predict reads grey (1) or colour (3) images only");
    const std::vector<std::uint8_t> pixels =
        datasets::readImageFile(path, {input.channels, input.height, input.width});
    const datasets::Normalization normalized =
        normalization.mean.empty() ? datasets::Normalization::unit(input.channels)
                                   : datasets::Normalization{normalization.mean, normalization.stddev};
    std::vector<float> values(pixels.size());
    datasets::normalizeImage(pixels, input.channels, normalized, values);
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
