#include "train/training_run.h"

#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>

#include <unistd.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/datasets/augmentation.h"
#include "cnnstudio/datasets/dataset_spec.h"
#include "cnnstudio/datasets/normalization.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/error.h"
#include "cnnstudio/events.h"
#include "cnnstudio/memory_estimate.h"
#include "cnnstudio/network.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/trainer.h"
#include "common/output_paths.h"
#include "train/loader_batch_source.h"
#include "train/progress_display.h"

namespace cnnstudio::app {

namespace {

// The network's input image (channels, height, width), which the data set is loaded to fit.
TensorShape inputShapeOf(const NetworkSpec& spec) {
    const TensorShape input = analyseSpec(spec).inputShape;
    if (input.channels == 0)
        throw Error("the network has no usable Input node", "spec '" + spec.name + "'",
                    "give it exactly one Input node with channels, height and width");
    return input;
}

std::string localTimestamp() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[32];
    std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
    return text;
}

// Balanced weights: class c gets N / (K * n_c), so every class contributes equally to the loss.
std::vector<float> balancedClassWeights(const datasets::Dataset& train, const std::vector<std::string>& classNames) {
    const std::vector<std::size_t> counts = train.classCounts(classNames.size());
    std::vector<float> weights;
    for (std::size_t c = 0; c < counts.size(); ++c) {
        if (counts[c] == 0)
            throw Error("class '" + classNames[c] + "' has no training images, so it cannot be balanced",
                        "class-weights", "use --class-weights none, or add images of that class");
        weights.push_back(float(double(train.size()) / (double(counts.size()) * double(counts[c]))));
    }
    return weights;
}

DatasetDescription describe(const std::string& name, const datasets::DatasetSplits& splits) {
    DatasetDescription description;
    description.name = name;
    description.classNames = splits.classNames;
    description.channels = splits.train.channels;
    description.height = splits.train.height;
    description.width = splits.train.width;
    description.trainSize = std::int64_t(splits.train.size());
    description.validationSize = std::int64_t(splits.validation.size());
    description.testSize = std::int64_t(splits.test.size());
    return description;
}

// Runs recorded before data-set paths were stored absolute may hold a relative one, which would
// read whatever the current folder holds by that name.
// --events appends to its file: onto the data set or the spec it would damage what the run reads
// (`config`: the new run's, or the resumed run's own).
void requireEventsAreNoInput(const std::string& events, const RunConfig& config) {
    if (events == "-") return;
    requireOutputIsNotInput(events, "--events", datasets::parseDatasetSpec(config.dataset).path, "--dataset");
    if (config.spec.starts_with("file:"))
        requireOutputIsNotInput(events, "--events", config.spec.substr(5), "--spec");
}

void rejectRelativeDatasetPath(const std::string& dataset, const std::filesystem::path& configFile) {
    const datasets::DatasetSpec spec = datasets::parseDatasetSpec(dataset);
    if (!spec.path.empty() && std::filesystem::path(spec.path).is_relative())
        throw Error("the run's data set path '" + spec.path + "' is relative, so resuming would read whatever "
                    "the current folder holds by that name", configFile.string(),
                    "edit \"dataset\" in config.json to the absolute path the run started with");
}

// The run folder as this rank sees it: rank 0 creates a fresh one; to resume, every rank opens
// it, which across nodes needs a filesystem they share.
std::optional<RunFolder> openRunFolder(const TrainCommand& command, const WorldInfo& world) {
    if (command.resume.empty()) {
        if (world.rank != 0) return std::nullopt;
        return RunFolder::create(command.runDir.empty() ? defaultRunDir(command.config.spec) : command.runDir);
    }
    if (world.rank == 0) return RunFolder::open(command.resume);
    try {
        return RunFolder::open(command.resume);
    } catch (const Error& error) {
        throw Error(std::string(error.what()), "rank " + std::to_string(world.rank) + " on " + world.host,
                    "every rank reads the run folder to resume: across nodes it must be on a filesystem "
                    "they all share (NFS), at the same path");
    }
}

// How this process's world was started: the launcher says so in DistributedLayout::kLayoutVariable;
// a job started with mpirun by hand is taken as its ranks on one node.
DistributedLayout layoutOf(const WorldInfo& world) {
    DistributedLayout layout;
    layout.ranksPerNode = world.size;
    const char* text = std::getenv(DistributedLayout::kLayoutVariable);
    if (!text) return layout;
    try {
        const nlohmann::json json = nlohmann::json::parse(text);
        layout.ranksPerNode = json.at("ranks_per_node").get<int>();
        layout.nodes = json.at("nodes").get<int>();
        layout.hostfile = json.at("hostfile").get<std::string>();
    } catch (const nlohmann::json::exception& error) {
        throw Error(std::string("the launcher's layout is unreadable: ") + error.what(),
                    DistributedLayout::kLayoutVariable, "start distributed runs with cnnstudio-train --gpus/--ranks");
    }
    if (layout.ranks() != world.size)
        throw Error("the launcher asked for " + layout.describe() + " but mpirun started " +
                    std::to_string(world.size), DistributedLayout::kLayoutVariable);
    return layout;
}

}  // namespace

std::filesystem::path defaultRunDir(const std::string& specSource) {
    const std::string name = specSource.rfind("preset:", 0) == 0
                                 ? specSource.substr(7)
                                 : std::filesystem::path(specSource.substr(5)).stem().string();
    return std::filesystem::path("runs") / (name + "-" + localTimestamp());
}

NetworkSpec loadSpecSource(const std::string& source) {
    if (source.rfind("preset:", 0) == 0) return loadPreset(source.substr(7));
    if (source.rfind("file:", 0) == 0) return NetworkSpec::load(source.substr(5));
    throw Error("unknown network source '" + source + "'", "spec", "use preset:NAME or file:PATH");
}

namespace {

// Throws inferShapes' Error for the spec at `source`, with the file named where it is one.
void requireSpecSourceBuilds(const std::string& source) {
    try {
        inferShapes(loadSpecSource(source));
    } catch (const Error& error) {
        // inferShapes names the node; the file it is in is said here ("cycle.json: node 'conv1'").
        // Errors of reading the file name it already.
        if (!source.starts_with("file:")) throw;
        const std::string file = source.substr(5);
        if (error.where().starts_with(file)) throw;
        throw Error(error.reason(), error.where().empty() ? file : file + ": " + error.where(), error.hint());
    }
}

}  // namespace

datasets::DatasetSplits loadDataFor(const std::string& dataset, const NetworkSpec& spec, std::size_t limit,
                                    bool skipBad, std::uint64_t seed, std::FILE* log) {
    const TensorShape input = inputShapeOf(spec);
    datasets::LoadOptions options;
    options.limit = limit;
    options.skipBad = skipBad;
    options.seed = seed;
    options.imageChannels = input.channels;
    options.imageHeight = input.height;
    options.imageWidth = input.width;
    datasets::DatasetSplits splits = datasets::loadDataset(dataset, options);
    if (splits.train.empty() && splits.test.empty())
        throw Error("the data set holds no images", dataset, "check the path");
    std::fprintf(log, "loaded %s\n", splits.description.c_str());
    if (splits.skipped.count > 0) {
        std::fprintf(log, "skipped %zu bad inputs (--skip-bad), the first:\n", splits.skipped.count);
        for (const auto& message : splits.skipped.firstMessages) std::fprintf(log, "  %s\n", message.c_str());
    }
    return splits;
}

bool printSummary(const std::string& specSource, const std::optional<std::string>& dataset, std::FILE* out) {
    NetworkSpec spec = loadSpecSource(specSource);
    if (dataset) {
        const datasets::DatasetSplits splits = loadDataFor(*dataset, spec, 0, false, 0, out);
        const SpecAdaptation adapted = adaptSpecToDataset(spec, splits.train.channels, splits.train.height,
                                                          splits.train.width, int(splits.classNames.size()));
        for (const auto& change : adapted.changes) std::fprintf(out, "fitted to the data set: %s\n", change.c_str());
        spec = adapted.spec;
    }
    const ShapeReport report = analyseSpec(spec);
    std::fputs(formatSummaryTable(report).c_str(), out);
    return report.ok();
}

std::string runTraining(const TrainCommand& command, const std::atomic<bool>& stop) {
    const bool resuming = !command.resume.empty();
    const WorldInfo world = initialiseWorld();
    const bool rankZero = world.rank == 0;
    // A fresh run's network is checked before its folder is made: a spec that cannot train
    // leaves no empty run folder behind.
    if (!resuming) {
        requireSpecSourceBuilds(command.config.spec);
        requireEventsAreNoInput(command.events, command.config);
    }
    const std::optional<RunFolder> folder = openRunFolder(command, world);
    // Rank 0 writes the run folder, so it holds the folder's lock for the whole run; taken before
    // the events file is opened, so that a refused trainer writes nothing into another's run.
    std::optional<RunFolderLock> folderLock;
    if (rankZero) {
        folderLock.emplace(folder->lockFile());
        if (!resuming) folder->discardRunThatNeverBegan();
        if (resuming && !command.events.empty())
            requireEventsAreNoInput(command.events,
                                    RunConfig::fromJson(folder->readConfig(), folder->configFile().string()));
    }
    EventWriter events(rankZero);
    if (rankZero) {
        events.addFile(folder->eventsFile());
        if (command.events == "-") events.addStream(std::cout);
        else if (!command.events.empty()) events.addFile(command.events);
    }
    // Only rank 0 talks to the user; the other ranks' progress would repeat it.
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> silence(rankZero ? nullptr : std::fopen("/dev/null", "w"),
                                                                  std::fclose);
    std::FILE* human = !rankZero && silence ? silence.get() : command.events == "-" ? stderr : stdout;
    ProgressDisplay display(human, ::isatty(::fileno(human)) == 1);
    if (rankZero) events.addListener([&display](const nlohmann::json& event) { display.onEvent(event); });
    // A resume refused before its session began (the run finished already, its data set is gone)
    // leaves the run's record as it was: a finished run must not end in `failed` because a
    // later --resume was turned down. The refusal goes to standard error and the exit code.
    bool sessionBegan = false;
    events.addListener([&sessionBegan](const nlohmann::json& event) {
        if (event.value("event", "") == "run_started") sessionBegan = true;
    });

    // Declared out here, in this order, so that the `failed` event can read the trainer's
    // progress and the trainer is destroyed before the network and backend it uses.
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Communicator> communicator;
    std::unique_ptr<Network> network;
    std::unique_ptr<Trainer> trainer;
    auto reportFailure = [&](const std::string& reason, const std::string& where) {
        if (resuming && !sessionBegan) return;
        try {
            events.emit("failed", {{"reason", reason}, {"where", where},
                                   {"step", trainer ? trainer->progress().step : 0},
                                   {"epoch", trainer ? trainer->currentEpoch() : 0}});
        } catch (const Error&) {
            // The event log itself failed (a full disk): the error being reported matters more.
        }
    };

    try {
        RunConfig config;
        NetworkSpec spec;
        if (resuming) {
            config = RunConfig::fromJson(folder->readConfig(), folder->configFile().string());
            rejectRelativeDatasetPath(config.dataset, folder->configFile());
            if (command.epochs) config.trainer.epochs = *command.epochs;
            if (command.logEvery) config.trainer.logEvery = *command.logEvery;
            if (command.threads) config.threads = *command.threads;
            if (command.checkpointEvery) config.trainer.checkpointEvery = *command.checkpointEvery;
            config.trainer.validate();
            if (config.distributed.ranks() != world.size)
                throw Error("the run was trained on " + config.distributed.describe() + " but this resume runs " +
                                std::to_string(world.size) + " process(es): the global batch and each rank's share "
                                "of the data would change", folder->configFile().string(),
                            "resume with cnnstudio-train --resume alone, which starts the recorded layout");
            spec = folder->readSpec();
        } else {
            config = command.config;
            config.distributed = layoutOf(world);
            spec = loadSpecSource(config.spec);
            if (command.scaleLearningRate && world.size > 1) {
                config.trainer.optimizer.learningRate *= float(world.size);
                if (config.trainer.schedule.warmupEpochs == 0) config.trainer.schedule.warmupEpochs = 1;
                std::fprintf(human, "learning rate scaled by %d ranks to %g, with %d warm-up epoch(s)\n", world.size,
                             double(config.trainer.optimizer.learningRate), config.trainer.schedule.warmupEpochs);
            }
        }
        inferShapes(spec);  // a broken spec fails here, naming its node, before any data is read

        const datasets::DatasetSplits splits =
            loadDataFor(config.dataset, spec, config.limit, config.skipBad, config.trainer.seed, human);
        if (splits.train.empty())
            throw Error("the training split is empty", config.dataset, "choose a data set with training images");
        const datasets::Dataset& train = splits.train;
        const SpecAdaptation adapted = adaptSpecToDataset(spec, train.channels, train.height, train.width,
                                                          int(splits.classNames.size()));
        if (resuming && !adapted.changes.empty())
            throw Error("the data set no longer fits the run's network (" + adapted.changes.front() + ")",
                        folder->specFile().string(), "resume with the data set the run started with");
        for (const auto& change : adapted.changes)
            std::fprintf(human, "fitted the network to the data set: %s\n", change.c_str());
        spec = adapted.spec;

        if (!resuming) {
            config.normalization = toInputNormalization(datasets::computeNormalization(train));
            if (config.classWeights == "balanced")
                config.trainer.loss.classWeights = balancedClassWeights(train, splits.classNames);
            if (rankZero) folder->writeSpec(spec);
        }
        if (rankZero) folder->writeConfig(config.toJson());

        BackendOptions backendOptions;
        backendOptions.threads = config.threads;
        backendOptions.precision = parsePrecision(config.precision);
        backendOptions.device = world.localRank;  // one GPU per rank on each host
        backend = createBackend(config.backend, backendOptions);
        // A batch too large for the GPU or the host is refused here with one that fits, not deep in
        // the first step.
        requireBatchFits(analyseSpec(spec), config.batch, *backend, config.trainer.optimizer.kind, world.localSize);
        communicator = createCommunicator(*backend, createDeviceTransport(*backend).get());
        network = std::make_unique<Network>(spec, *backend, config.batch, config.trainer.seed);
        trainer = std::make_unique<Trainer>(*network, config.trainer, events, communicator.get());
        if (folder) trainer->setRunFolder(&*folder);
        trainer->setStopFlag(&stop);
        if (resuming) trainer->resume();

        const datasets::Normalization normalization = toDatasetNormalization(config.normalization, train.channels);
        // Every rank shuffles the same way and takes its own part of each global batch.
        auto sharded = [&world](datasets::BatchLoaderOptions options) {
            options.rank = world.rank;
            options.ranks = world.size;
            return options;
        };
        LoaderBatchSource trainSource(train, sharded(trainingLoaderOptions(config.batch, config.trainer.seed,
                                                                           datasets::parseAugmentation(config.augment),
                                                                           normalization)));
        std::optional<LoaderBatchSource> validationSource, testSource;
        if (!splits.validation.empty())
            validationSource.emplace(splits.validation, sharded(evaluationLoaderOptions(config.batch, normalization)));
        if (!splits.test.empty())
            testSource.emplace(splits.test, sharded(evaluationLoaderOptions(config.batch, normalization)));

        RunDescription description;
        description.config = config.toJson();
        description.dataset = describe(config.dataset, splits);
        description.normalization = config.normalization;
        description.ranks = world.size;
        description.hardware = discoverHardware();
        return trainer->train(trainSource, validationSource ? &*validationSource : nullptr,
                              testSource ? &*testSource : nullptr, description)
            .reason;
    } catch (const Error& error) {
        reportFailure(error.what(), error.where());
        throw;
    } catch (const std::exception& error) {
        reportFailure(error.what(), "");
        throw;
    }
}

}  // namespace cnnstudio::app
