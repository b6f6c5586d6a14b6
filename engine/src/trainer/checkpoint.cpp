#include "cnnstudio/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"
#include "cnnstudio/json_text.h"
#include "trainer/folder_swap.h"
#include "trainer/whole_file.h"

namespace cnnstudio {

namespace {

constexpr const char* kWeightsFile = "weights.safetensors";
constexpr const char* kOptimizerFile = "optimizer.safetensors";
constexpr const char* kProgressFile = "progress.json";
constexpr const char* kModelWeightsFile = "model.safetensors";
constexpr const char* kModelSpecFile = "spec.json";
constexpr const char* kModelInfoFile = "model.json";

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

nlohmann::json readJsonFile(const std::filesystem::path& file) {
    const std::string text = readWholeFile(file);
    rejectDeepJsonNesting(text, file.string());
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {
        throw Error(std::string("not valid JSON: ") + error.what(), file.string(),
                    "the file is damaged; restore it or start a new run");
    }
}

void writeJsonFile(const std::filesystem::path& file, const nlohmann::json& json) {
    writeFileAtomically(file, json.dump(2) + "\n");
}

// An integer field is checked for type and range first: nlohmann's get<int>() casts a float or a
// too-large number as it is, which is undefined behaviour, not an error.
template <typename T>
bool holdsInRange(const nlohmann::json& value) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        if (!value.is_number_integer()) return false;
        return value.is_number_unsigned() ? std::in_range<T>(value.get<std::uint64_t>())
                                          : std::in_range<T>(value.get<std::int64_t>());
    }
    return true;
}

template <typename T>
T field(const nlohmann::json& json, const char* name, const std::string& source) {
    auto it = json.find(name);
    if (it == json.end()) throw Error(std::string("missing field '") + name + "'", source);
    const auto wrongType = [&] {
        return Error(std::string("field '") + name + "' has the wrong type or range: " + describeJsonValue(*it),
                     source, "the file is damaged");
    };
    if (!holdsInRange<T>(*it)) throw wrongType();
    try {
        return it->get<T>();
    } catch (const nlohmann::json::exception&) {
        throw wrongType();
    }
}

// Whether `json` is an object whose "format" is `format` and whose "version" is 1 (compared as
// JSON values: value<T>() would throw or cast for a field of another type).
bool isVersion1(const nlohmann::json& json, const char* format) {
    if (!json.is_object()) return false;
    const auto formatField = json.find("format");
    const auto versionField = json.find("version");
    return formatField != json.end() && *formatField == format && versionField != json.end() &&
           *versionField == 1;
}

// The host copy of `count` floats of backend memory at `source`.
std::vector<float> download(Backend& backend, const float* source, std::size_t count) {
    std::vector<float> values(count);
    if (count) backend.download(values.data(), source, count * sizeof(float));
    return values;
}

// Cuts a flat host buffer into named tensors along `layout`.
void appendSlices(std::vector<NamedTensor>& out, const std::vector<float>& flat,
                  const std::vector<ParameterInfo>& layout, const std::string& prefix) {
    for (const auto& info : layout) {
        NamedTensor tensor{prefix + info.name, info.shape, {}};
        tensor.values.assign(flat.begin() + std::ptrdiff_t(info.offset),
                             flat.begin() + std::ptrdiff_t(info.offset + info.count()));
        out.push_back(std::move(tensor));
    }
}

// Fills a flat host buffer from named tensors along `layout`; every slice must be present with
// its exact shape. `used` collects the names consumed, to catch extra tensors afterwards.
void gatherSlices(std::vector<float>& flat, const std::map<std::string, const NamedTensor*>& byName,
                  const std::vector<ParameterInfo>& layout, const std::string& prefix,
                  const std::filesystem::path& file, std::set<std::string>& used) {
    for (const auto& info : layout) {
        const std::string name = prefix + info.name;
        auto it = byName.find(name);
        if (it == byName.end())
            throw Error("tensor '" + name + "' is missing", file.string(),
                        "the file belongs to a different network; use the matching spec");
        if (it->second->shape != info.shape)
            throw Error("tensor '" + name + "' has shape " + shapeText(it->second->shape) +
                        ", the network expects " + shapeText(info.shape), file.string(),
                        "the file belongs to a different network; use the matching spec");
        std::copy(it->second->values.begin(), it->second->values.end(),
                  flat.begin() + std::ptrdiff_t(info.offset));
        used.insert(name);
    }
}

std::map<std::string, const NamedTensor*> indexByName(const std::vector<NamedTensor>& tensors) {
    std::map<std::string, const NamedTensor*> byName;
    for (const auto& tensor : tensors) byName[tensor.name] = &tensor;
    return byName;
}

void rejectUnused(const std::vector<NamedTensor>& tensors, const std::set<std::string>& used,
                  const std::filesystem::path& file) {
    for (const auto& tensor : tensors)
        if (!used.count(tensor.name))
            throw Error("tensor '" + tensor.name + "' does not belong to this network", file.string(),
                        "the file belongs to a different network; use the matching spec");
}

// The optimiser's buffers that exist (plain SGD without momentum has none).
std::vector<std::pair<std::string, Tensor*>> optimizerBuffers(Optimizer& optimizer, std::size_t parameters) {
    std::vector<std::pair<std::string, Tensor*>> buffers;
    for (auto& [name, tensor] : optimizer.stateTensors()) {
        if (!tensor || tensor->empty()) continue;
        if (std::size_t(tensor->count()) != parameters)
            throw Error("optimiser buffer '" + name + "' holds " + std::to_string(tensor->count()) +
                        " values for " + std::to_string(parameters) + " parameters", "checkpoint");
        buffers.emplace_back(name, tensor);
    }
    return buffers;
}

}  // namespace

// ---- TrainingProgress ----------------------------------------------------------------------

nlohmann::json TrainingProgress::toJson() const {
    return {{"format", "cnnstudio-checkpoint"},
            {"version", 1},
            {"epoch", epoch},
            {"epoch_step", epochStep},
            {"step", step},
            {"seed", seed},
            {"schedule", schedule},
            {"best_validation_accuracy", bestValidationAccuracy},
            {"best_epoch", bestEpoch},
            {"epochs_without_improvement", epochsWithoutImprovement},
            {"wall_time_s", wallSeconds},
            {"seconds_to_target", secondsToTarget},
            {"epoch_loss_sum", epochLossSum},
            {"epoch_correct", epochCorrect},
            {"epoch_seen", epochSeen},
            {"epoch_time_s", epochSeconds}};
}

TrainingProgress TrainingProgress::fromJson(const nlohmann::json& json, const std::string& source) {
    if (!json.is_object()) throw Error("checkpoint progress is not a JSON object", source);
    if (!isVersion1(json, "cnnstudio-checkpoint"))
        throw Error("not a version 1 CNN Studio checkpoint", source,
                    "it was written by another program or a newer CNN Studio");
    TrainingProgress progress;
    progress.epoch = field<int>(json, "epoch", source);
    progress.epochStep = field<std::int64_t>(json, "epoch_step", source);
    progress.step = field<std::int64_t>(json, "step", source);
    progress.seed = field<std::uint64_t>(json, "seed", source);
    progress.schedule = json.value("schedule", nlohmann::json::object());
    progress.bestValidationAccuracy = field<double>(json, "best_validation_accuracy", source);
    progress.bestEpoch = field<int>(json, "best_epoch", source);
    progress.epochsWithoutImprovement = field<int>(json, "epochs_without_improvement", source);
    progress.wallSeconds = field<double>(json, "wall_time_s", source);
    progress.secondsToTarget = json.value("seconds_to_target", -1.0);  // absent before it was recorded
    progress.epochLossSum = field<double>(json, "epoch_loss_sum", source);
    progress.epochCorrect = field<std::int64_t>(json, "epoch_correct", source);
    progress.epochSeen = field<std::int64_t>(json, "epoch_seen", source);
    progress.epochSeconds = field<double>(json, "epoch_time_s", source);
    if (progress.epoch < 0 || progress.epochStep < 0 || progress.step < 0)
        throw Error("negative epoch or step counters", source, "the file is damaged");
    return progress;
}

// ---- network weights -------------------------------------------------------------------------

std::vector<NamedTensor> networkTensors(Network& network) {
    Backend& backend = network.backend();
    std::vector<NamedTensor> tensors;
    appendSlices(tensors, download(backend, network.parameters(), network.parameterCount()),
                 network.parameterInfo(), "");
    appendSlices(tensors, download(backend, network.state(), network.stateCount()),
                 network.stateInfo(), "");
    return tensors;
}

void loadNetworkTensors(Network& network, const std::vector<NamedTensor>& tensors,
                        const std::filesystem::path& file) {
    rejectNonFiniteValues(tensors, file);
    auto byName = indexByName(tensors);
    std::set<std::string> used;
    std::vector<float> parameters(network.parameterCount()), state(network.stateCount());
    gatherSlices(parameters, byName, network.parameterInfo(), "", file, used);
    gatherSlices(state, byName, network.stateInfo(), "", file, used);
    rejectUnused(tensors, used, file);
    Backend& backend = network.backend();
    if (!parameters.empty())
        backend.upload(network.parameters(), parameters.data(), parameters.size() * sizeof(float));
    if (!state.empty()) backend.upload(network.state(), state.data(), state.size() * sizeof(float));
    backend.synchronize();
}

void rejectNonFiniteValues(const std::vector<NamedTensor>& tensors, const std::filesystem::path& file) {
    for (const NamedTensor& tensor : tensors) {
        const auto bad = std::find_if(tensor.values.begin(), tensor.values.end(),
                                      [](float value) { return !std::isfinite(value); });
        if (bad != tensor.values.end())
            throw Error("tensor '" + tensor.name + "' holds " + (std::isnan(*bad) ? "NaN" : "an infinity") +
                            " at element " + std::to_string(bad - tensor.values.begin()),
                        file.string(),
                        "the weights are damaged or were saved from a diverged run; use an earlier checkpoint "
                        "or train again");
    }
}

// ---- checkpoints -----------------------------------------------------------------------------

void saveCheckpoint(const std::filesystem::path& folder, Network& network, Optimizer& optimizer,
                    const TrainingProgress& progress) {
    const std::map<std::string, std::string> metadata = {{"format", "cnnstudio-checkpoint"},
                                                         {"network", network.spec().name}};
    std::vector<NamedTensor> optimizerTensors;
    for (auto& [name, tensor] : optimizerBuffers(optimizer, network.parameterCount()))
        appendSlices(optimizerTensors,
                     download(network.backend(), tensor->data(), std::size_t(tensor->count())),
                     network.parameterInfo(), name + "/");

    const std::filesystem::path staged = createStagingFolder(folder);
    try {
        writeSafetensors(staged / kWeightsFile, networkTensors(network), metadata);
        writeSafetensors(staged / kOptimizerFile, optimizerTensors, metadata);
        writeJsonFile(staged / kProgressFile, progress.toJson());
    } catch (const Error& error) {
        // A full disk (or a file-size limit) mid-write: the new checkpoint is dropped and the
        // one in place stays whole, so the run can still be resumed from it.
        removeStagingFolder(staged);
        const bool previousKept = checkpointExists(folder);
        throw Error(error.reason(), error.where(),
                    previousKept ? "the previous checkpoint in " + folder.string() +
                                       " is kept; free some space and --resume from it"
                                 : "no earlier checkpoint exists; free some space and train again");
    }
    replaceFolder(staged, folder);
}

void copyCheckpoint(const std::filesystem::path& from, const std::filesystem::path& to) {
    const std::filesystem::path source = readableFolder(from);
    const std::filesystem::path staged = createStagingFolder(to);
    try {
        for (const char* name : {kWeightsFile, kOptimizerFile, kProgressFile}) {
            std::error_code notLinked;
            std::filesystem::create_hard_link(source / name, staged / name, notLinked);
            if (notLinked) writeFileAtomically(staged / name, readWholeFile(source / name));
        }
    } catch (const Error&) {
        removeStagingFolder(staged);
        throw;
    }
    replaceFolder(staged, to);
}

bool checkpointExists(const std::filesystem::path& folder) {
    std::error_code error;
    return std::filesystem::exists(readableFolder(folder) / kProgressFile, error);
}

std::vector<NamedTensor> readCheckpointWeights(const std::filesystem::path& folder) {
    return readSafetensors(readableFolder(folder) / kWeightsFile).tensors;
}

TrainingProgress loadCheckpoint(const std::filesystem::path& folder, Network& network,
                                Optimizer& optimizer) {
    const std::filesystem::path source = readableFolder(folder);
    if (!std::filesystem::exists(source / kProgressFile))
        throw Error("no checkpoint here (progress.json is missing)", source.string(),
                    "resume from a run folder that has written a checkpoint");
    const TrainingProgress progress =
        TrainingProgress::fromJson(readJsonFile(source / kProgressFile), (source / kProgressFile).string());

    loadNetworkTensors(network, readSafetensors(source / kWeightsFile).tensors, source / kWeightsFile);

    const std::filesystem::path optimizerFile = source / kOptimizerFile;
    const SafetensorsContents saved = readSafetensors(optimizerFile);
    auto byName = indexByName(saved.tensors);
    std::set<std::string> used;
    for (auto& [name, tensor] : optimizerBuffers(optimizer, network.parameterCount())) {
        std::vector<float> flat(network.parameterCount());
        gatherSlices(flat, byName, network.parameterInfo(), name + "/", optimizerFile, used);
        if (!flat.empty()) network.backend().upload(tensor->data(), flat.data(), flat.size() * sizeof(float));
    }
    rejectUnused(saved.tensors, used, optimizerFile);
    network.backend().synchronize();
    return progress;
}

namespace {

// The path with every symbolic link and "..", resolved as far as it exists; as given, made
// absolute, where even that fails (a parent that cannot be read).
std::filesystem::path canonicalPath(const std::filesystem::path& path) {
    std::error_code error;
    std::filesystem::path canonical = std::filesystem::weakly_canonical(path, error);
    return error ? std::filesystem::absolute(path, error).lexically_normal() : canonical;
}

}  // namespace

// ---- model folder ----------------------------------------------------------------------------

nlohmann::json ModelInfo::toJson() const {
    return {{"format", "cnnstudio-model"},
            {"version", 1},
            {"classes", classNames},
            {"normalization", {{"mean", normalization.mean}, {"stddev", normalization.stddev}}},
            {"trained_on", trainedOn}};
}

ModelInfo ModelInfo::fromJson(const nlohmann::json& json, const std::string& source) {
    if (!isVersion1(json, "cnnstudio-model"))
        throw Error("not a version 1 CNN Studio model description", source,
                    "point at a model folder written by cnnstudio-train");
    ModelInfo info;
    info.classNames = field<std::vector<std::string>>(json, "classes", source);
    const auto normalization = field<nlohmann::json>(json, "normalization", source);
    info.normalization.mean = field<std::vector<float>>(normalization, "mean", source);
    info.normalization.stddev = field<std::vector<float>>(normalization, "stddev", source);
    if (info.normalization.mean.size() != info.normalization.stddev.size())
        throw Error("normalization has " + std::to_string(info.normalization.mean.size()) + " means and " +
                    std::to_string(info.normalization.stddev.size()) + " standard deviations", source,
                    "the file is damaged");
    for (float stddev : info.normalization.stddev)
        if (!(stddev > 0)) throw Error("a normalization stddev is not positive", source, "the file is damaged");
    info.trainedOn = json.value("trained_on", nlohmann::json::object());
    return info;
}

void saveModel(const std::filesystem::path& folder, Network& network, const ModelInfo& info) {
    if (int(info.classNames.size()) != network.classes())
        throw Error(std::to_string(info.classNames.size()) + " class names for a network with " +
                    std::to_string(network.classes()) + " outputs", folder.string());
    const std::filesystem::path staged = createStagingFolder(folder);
    try {
        writeSafetensors(staged / kModelWeightsFile, networkTensors(network),
                         {{"format", "cnnstudio-model"}, {"network", network.spec().name}});
        network.spec().save(staged / kModelSpecFile);
        writeJsonFile(staged / kModelInfoFile, info.toJson());
    } catch (const Error&) {
        removeStagingFolder(staged);
        throw;
    }
    replaceFolder(staged, folder);
}

void writeModelFolder(const std::filesystem::path& folder, const ModelFolder& model, WeightsDtype dtype) {
    const std::filesystem::path staged = createStagingFolder(folder);
    try {
        writeSafetensors(staged / kModelWeightsFile, model.weights,
                         {{"format", "cnnstudio-model"}, {"network", model.spec.name}}, dtype);
        model.spec.save(staged / kModelSpecFile);
        writeJsonFile(staged / kModelInfoFile, model.info.toJson());
    } catch (const Error&) {
        removeStagingFolder(staged);
        throw;
    }
    replaceFolder(staged, folder);
}

void requireReplaceableByModelFolder(const std::filesystem::path& folder, const std::filesystem::path& input) {
    const std::string hint = "write the model to a new or empty folder, or move this one away first; only a model "
                             "folder (model.json, spec.json and model.safetensors, nothing else) is replaced";
    std::error_code notThere;
    const std::filesystem::file_status status = std::filesystem::symlink_status(folder, notThere);
    if (!std::filesystem::exists(status)) return;
    if (!std::filesystem::is_directory(status))
        throw Error("is not a folder, and writing the model folder would replace it", folder.string(), hint);

    // Compared as canonical paths: "out/../models" and a symbolic link to the input's folder are
    // the same folder.
    const std::filesystem::path canonicalFolder = canonicalPath(folder);
    const std::filesystem::path canonicalInput = canonicalPath(input);
    if (std::mismatch(canonicalFolder.begin(), canonicalFolder.end(), canonicalInput.begin(), canonicalInput.end())
            .first == canonicalFolder.end())
        throw Error("holds " + input.string() + ", which the new model is made from", folder.string(),
                    "write the model to a different folder");

    bool holdsFiles = false, describesAModel = false;
    std::error_code listError;
    for (std::filesystem::directory_iterator entry(folder, listError), end; !listError && entry != end;
         entry.increment(listError)) {
        const std::string name = entry->path().filename().string();
        const bool modelFile = name == kModelInfoFile || name == kModelSpecFile || name == kModelWeightsFile;
        if (!modelFile || !entry->is_regular_file())
            throw Error("holds '" + name + "', which is not part of a model folder", folder.string(), hint);
        holdsFiles = true;
        if (name == kModelInfoFile) describesAModel = isVersion1(readJsonFile(entry->path()), "cnnstudio-model");
    }
    if (listError) throw Error("cannot list the folder: " + listError.message(), folder.string(), hint);
    if (holdsFiles && !describesAModel)
        throw Error("is not a model folder (no model.json saying \"cnnstudio-model\")", folder.string(), hint);
}

ModelFolder readModelFolder(const std::filesystem::path& folder) {
    const std::filesystem::path source = readableFolder(folder);
    if (!std::filesystem::is_directory(source))
        throw Error("no model folder here", folder.string(),
                    "pass a model folder or a run folder that finished training");
    ModelFolder model;
    model.spec = NetworkSpec::load(source / kModelSpecFile);
    model.info = ModelInfo::fromJson(readJsonFile(source / kModelInfoFile), (source / kModelInfoFile).string());
    model.weights = readSafetensors(source / kModelWeightsFile).tensors;
    return model;
}

}  // namespace cnnstudio
