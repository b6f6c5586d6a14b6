#include "train/model_commands.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "cnnstudio/backend.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/trainer.h"
#include "train/loader_batch_source.h"
#include "train/run_config.h"
#include "train/training_run.h"

namespace cnnstudio::app {

namespace {

// A model found from a path, and what the run that made it says about its data.
struct LocatedModel {
    ModelFolder model;
    std::filesystem::path folder;
    std::string dataset;     // the data set it was trained on, when known
    std::uint64_t seed = 0;  // picks the same validation hold-out as training did
};

LocatedModel locateModel(const std::filesystem::path& target) {
    LocatedModel located;
    if (std::filesystem::exists(target / "model.json")) {
        located.folder = target;
    } else if (std::filesystem::exists(target / "config.json")) {
        const RunFolder run = RunFolder::open(target);
        located.folder = run.modelFolder();
        if (!std::filesystem::exists(located.folder / "model.json"))
            throw Error("the run has no final model yet", target.string(),
                        "a stopped run gets one when it finishes: continue it with --resume");
    } else {
        throw Error("neither a model folder (model.json) nor a run folder (config.json)", target.string(),
                    "pass RUN_DIR or RUN_DIR/model of a finished run");
    }
    located.model = readModelFolder(located.folder);
    const nlohmann::json& trainedOn = located.model.info.trainedOn;
    located.dataset = trainedOn.value("dataset", "");
    located.seed = trainedOn.value("seed", std::uint64_t(0));
    return located;
}

std::unique_ptr<Network> buildModel(const LocatedModel& located, Backend& backend, int batch) {
    auto network = std::make_unique<Network>(located.model.spec, backend, batch, 0);
    loadNetworkTensors(*network, located.model.weights, located.folder / "model.safetensors");
    if (int(located.model.info.classNames.size()) != network->classes())
        throw Error(std::to_string(located.model.info.classNames.size()) + " class names for " +
                    std::to_string(network->classes()) + " outputs", (located.folder / "model.json").string(),
                    "the model folder is damaged");
    return network;
}

std::unique_ptr<Backend> makeBackend(const std::string& name, int threads) {
    BackendOptions options;
    options.threads = threads;
    return createBackend(name, options);
}

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

void runEvaluate(const EvaluateCommand& command, std::FILE* out) {
    const LocatedModel located = locateModel(command.target);
    const std::string dataset = command.dataset.value_or(located.dataset);
    if (dataset.empty())
        throw Error("the model does not say which data set it was trained on", located.folder.string(),
                    "name one with --dataset");
    const datasets::DatasetSplits splits =
        loadDataFor(dataset, located.model.spec, 0, command.skipBad, located.seed, out);
    const datasets::Dataset& split = command.split == "train"        ? splits.train
                                     : command.split == "validation" ? splits.validation
                                                                     : splits.test;
    if (split.empty())
        throw Error("the " + command.split + " split of the data set is empty", dataset,
                    "evaluate another split with --split");
    const SpecAdaptation fit = adaptSpecToDataset(located.model.spec, split.channels, split.height, split.width,
                                                  int(splits.classNames.size()));
    if (!fit.changes.empty())
        throw Error("the data set does not fit the model (" + fit.changes.front() + ")", dataset,
                    "evaluate on data like the model's training data");
    if (splits.classNames != located.model.info.classNames)
        std::fprintf(out, "note: the data set's class names differ from the model's; the model's are shown\n");

    std::unique_ptr<Backend> backend = makeBackend(command.backend, command.threads);
    std::unique_ptr<Network> network = buildModel(located, *backend, command.batch);
    LoaderBatchSource source(split, evaluationLoaderOptions(command.batch, toDatasetNormalization(
                                                                               located.model.info.normalization,
                                                                               split.channels)));
    const EvaluationResult result = evaluate(*network, source);
    std::fprintf(out, "accuracy %.2f%% on %lld %s images (loss %.4f)\n\n", 100.0 * result.accuracy(),
                 static_cast<long long>(result.confusion.total()), command.split.c_str(), result.loss);
    std::fputs(result.confusion.formatTable(located.model.info.classNames).c_str(), out);
}

void runPredict(const PredictCommand& command, std::FILE* out) {
    const LocatedModel located = locateModel(command.target);
    std::unique_ptr<Backend> backend = makeBackend(command.backend, command.threads);
    std::unique_ptr<Network> network = buildModel(located, *backend, 1);
    const TensorShape input = network->inputShape();
    const std::vector<std::string>& names = located.model.info.classNames;
    const int classes = network->classes();
    const int shown = std::min(command.top, classes);

    for (const std::string& path : command.images) {
        network->input().fromHost(readImageAsInput(path, input, located.model.info.normalization));
        network->forward(Phase::Inference);
        const std::vector<float> logits = network->logits().toHost();
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
