#include "train/model_commands.h"

#include <algorithm>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/memory_estimate.h"
#include "cnnstudio/model_library.h"
#include "cnnstudio/network.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/trainer.h"
#include "train/loader_batch_source.h"
#include "train/run_config.h"
#include "train/training_run.h"

namespace cnnstudio::app {

LocatedModel locateModel(const std::filesystem::path& nameOrPath) {
    const std::filesystem::path target = resolveModel(nameOrPath.string());
    LocatedModel located;
    if (std::filesystem::exists(target / RunFolder::kModelInfoFileName)) {
        located.folder = target;
    } else if (std::filesystem::exists(target / RunFolder::kConfigFileName)) {
        const RunFolder run = RunFolder::open(target);
        located.folder = run.modelFolder();
        if (!std::filesystem::exists(located.folder / RunFolder::kModelInfoFileName))
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
    requireInferenceBatchFits(analyseSpec(located.model.spec), batch, backend);
    auto network = std::make_unique<Network>(located.model.spec, backend, batch, 0, NetworkUse::Inference);
    loadNetworkTensors(*network, located.model.weights, located.folder / "model.safetensors");
    if (int(located.model.info.classNames.size()) != network->classes())
        throw Error(std::to_string(located.model.info.classNames.size()) + " class names for " +
                    std::to_string(network->classes()) + " outputs", (located.folder / RunFolder::kModelInfoFileName).string(),
                    "the model folder is damaged");
    return network;
}

TestTimeAugmentation testTimeAugmentationFor(const std::string& kind, const InputNormalization& normalization,
                                             int channels) {
    TestTimeAugmentation tta;
    tta.kind = kind;
    tta.views();  // throws for an unknown kind
    // The padding of tencrop is black, as the crop augmentation's: pixel 0 after normalisation.
    if (normalization.mean.size() == std::size_t(channels) && normalization.stddev.size() == std::size_t(channels))
        for (int c = 0; c < channels; ++c)
            tta.fill.push_back(-normalization.mean[std::size_t(c)] / normalization.stddev[std::size_t(c)]);
    return tta;
}

namespace {

std::unique_ptr<Backend> makeBackend(const std::string& name, int threads) {
    BackendOptions options;
    options.threads = threads;
    return createBackend(name, options);
}

// An ensemble's models must read the same images the same way and name the same classes.
void requireEnsembleAgrees(const std::vector<LocatedModel>& models) {
    const ModelInfo& first = models.front().model.info;
    for (std::size_t m = 1; m < models.size(); ++m) {
        const ModelInfo& info = models[m].model.info;
        const std::string where = models[m].folder.string();
        const std::string hint = "ensemble models trained on one data set (" + models.front().folder.string() + "'s)";
        if (info.classNames != first.classNames) throw Error("its classes differ from the first model's", where, hint);
        if (info.normalization.mean != first.normalization.mean || info.normalization.stddev != first.normalization.stddev)
            throw Error("its input normalisation differs from the first model's", where, hint);
    }
}

// Each model takes the split's images and classes as they are; a model trained with another seed
// may have held out other validation images, which is said.
void requireModelsFit(const std::vector<LocatedModel>& models, const datasets::Dataset& split, int classes,
                      const std::string& dataset, std::FILE* out) {
    const LocatedModel& first = models.front();
    for (const LocatedModel& model : models) {
        const SpecAdaptation fit = adaptSpecToDataset(model.model.spec, split.channels, split.height, split.width, classes);
        if (!fit.changes.empty())
            throw Error("the data set does not fit the model (" + fit.changes.front() + ")", dataset,
                        "evaluate on data like the model's training data (" + model.folder.string() + ")");
        if (model.seed != first.seed)
            std::fprintf(out, "note: %s was trained with seed %llu, %s with %llu: where the validation split is "
                              "drawn from the training data, each held out other images\n",
                         model.folder.c_str(), static_cast<unsigned long long>(model.seed), first.folder.c_str(),
                         static_cast<unsigned long long>(first.seed));
    }
}

// "a, b, c"
std::string commaSeparated(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
}

// The data set's labels as the model's output indices. The same classes may come in another order
// (an image folder sorts them by name, the FER2013 CSV lists them by label): they are matched by
// name. Classes of other names would be scored against whichever output has their position, so
// they are refused.
void relabelAsTheModelNamesClasses(datasets::Dataset& split, const std::vector<std::string>& datasetClasses,
                                   const LocatedModel& model, const std::string& dataset) {
    const std::vector<std::string>& modelClasses = model.model.info.classNames;
    if (datasetClasses == modelClasses) return;
    std::vector<std::int32_t> modelIndexOf(datasetClasses.size(), -1);
    for (std::size_t d = 0; d < datasetClasses.size(); ++d) {
        const auto found = std::find(modelClasses.begin(), modelClasses.end(), datasetClasses[d]);
        if (found == modelClasses.end())
            throw Error("the data set's class '" + datasetClasses[d] + "' is not one of the model's classes (" +
                            commaSeparated(modelClasses) + ")",
                        dataset,
                        "evaluate on a data set of the model's classes; where they are the same classes under other "
                        "names, write the data set's names into " +
                            (model.folder / RunFolder::kModelInfoFileName).string() + " (\"classes\", in output order)");
        modelIndexOf[d] = std::int32_t(found - modelClasses.begin());
    }
    for (std::int32_t& label : split.labels) label = modelIndexOf[std::size_t(label)];
}

}  // namespace

void runEvaluate(const EvaluateCommand& command, std::FILE* out) {
    std::vector<LocatedModel> models;
    for (const std::filesystem::path& target : command.targets) models.push_back(locateModel(target));
    if (models.empty()) throw Error("no model given", "evaluate", "give RUN_DIR, MODEL_DIR or --model NAME");
    requireEnsembleAgrees(models);
    const LocatedModel& located = models.front();
    const std::string dataset = command.dataset.value_or(located.dataset);
    if (dataset.empty())
        throw Error("the model does not say which data set it was trained on", located.folder.string(),
                    "name one with --dataset");
    datasets::DatasetSplits splits = loadDataFor(dataset, located.model.spec, 0, command.skipBad, located.seed, out);
    datasets::Dataset& split = command.split == "train"        ? splits.train
                               : command.split == "validation" ? splits.validation
                                                               : splits.test;
    if (split.empty())
        throw Error("the " + command.split + " split of the data set is empty", dataset,
                    "evaluate another split with --split");
    requireModelsFit(models, split, int(splits.classNames.size()), dataset, out);
    relabelAsTheModelNamesClasses(split, splits.classNames, located, dataset);

    std::unique_ptr<Backend> backend = makeBackend(command.backend, command.threads);
    std::vector<std::unique_ptr<Network>> networks;
    std::vector<Network*> ensemble;
    for (const LocatedModel& model : models) {
        networks.push_back(buildModel(model, *backend, command.batch));
        ensemble.push_back(networks.back().get());
    }
    LoaderBatchSource source(split, evaluationLoaderOptions(command.batch, toDatasetNormalization(
                                                                               located.model.info.normalization,
                                                                               split.channels)));
    const EvaluationResult result = evaluate(ensemble, source, nullptr,
                                             testTimeAugmentationFor(command.tta, located.model.info.normalization,
                                                                     split.channels));
    std::string how;
    if (models.size() > 1) how += ", ensemble of " + std::to_string(models.size()) + " models";
    if (command.tta != "none") how += ", test-time augmentation " + command.tta;
    std::fprintf(out, "accuracy %.2f%% on %lld %s images (loss %.4f)%s\n\n", 100.0 * result.accuracy(),
                 static_cast<long long>(result.confusion.total()), command.split.c_str(), result.loss, how.c_str());
    std::fputs(result.confusion.formatTable(located.model.info.classNames).c_str(), out);
}

}  // namespace cnnstudio::app
