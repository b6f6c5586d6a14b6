// cnnstudio-train: the headless worker. Trains a network on a data set into a run folder
// (events, checkpoints, final model), resumes a stopped run, evaluates a model, predicts image
// classes, exports and imports ONNX models and lists the backends. The GUI runs it as a child
// process and reads its events.
//
// Data parallel: `--gpus N`, `--ranks N` (CPU backends) and `--nodes M --hostfile F` make this
// process a launcher that re-runs the program under mpirun, one rank per GPU or CPU rank
// (train/launcher.h); the ranks find themselves started by mpirun and train together.
//
// Exit codes: 0 done, 1 an error (message on stderr, a `failed` event in the run folder), 2 bad
// usage, 3 stopped before the end (checkpointed: --resume continues it), so that a script can
// tell a stopped run from a finished one. SIGINT/SIGTERM stop gracefully after the current step
// with the latest checkpoint written; a second one ends the process at once. SIGUSR1 (what the
// launcher sends through mpirun, which forwards it to every rank) stops gracefully too. SIGPIPE
// is ignored: a closed stdout (`| head`) loses the progress display, never the run.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/datasets/augmentation.h"
#include "cnnstudio/datasets/dataset_spec.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/error.h"
#include "cnnstudio/event_reader.h"
#include "cnnstudio/events.h"
#include "cnnstudio/model_library.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/run_folder.h"
#include "common/command_line.h"
#include "common/stop_signals.h"
#include "train/launcher.h"
#include "train/interchange_commands.h"
#include "train/model_card.h"
#include "train/model_commands.h"
#include "train/recipe.h"
#include "train/training_run.h"

namespace {

using namespace cnnstudio;
using app::DistributedLayout;

constexpr int kExitError = 1;
constexpr int kExitStopped = 3;
constexpr const char* kExitCodesHelp =
    "Exit codes: 0 done, 1 error, 2 bad usage, 3 stopped by a signal before the end (continue with --resume).\n"
    "A closed standard output (| head) does not stop training: the run goes on into its run folder (events.jsonl, "
    "checkpoints, model); stop it with Ctrl-C and --resume it later.";

// A number in [minimum, maximum]; unlike CLI::Range, text that is no number is called that.
CLI::Validator numberFrom(double minimum, double maximum) {
    return CLI::Validator(
        [minimum, maximum](std::string& input) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(input, value)) return "'" + input + "' is not a number";
            if (value < minimum || value > maximum)
                return input + " is out of range: give a number from " + CLI::detail::to_string(minimum) + " to " +
                       CLI::detail::to_string(maximum);
            return {};
        },
        "NUMBER");
}

// CLI11 reads "-1" into an unsigned option as 2^64 - 1; a negative count or seed is refused.
const CLI::Validator kWholeNumberFromZero(
    [](std::string& input) -> std::string {
        std::uint64_t value = 0;
        if (input.find('-') != std::string::npos || !CLI::detail::lexical_cast(input, value))
            return "'" + input + "' is not a whole number from 0";
        return {};
    },
    "UINT");

// Set by the stop-signal thread; the trainer checks it before every step.
std::atomic<bool> stopRequested{false};

// Everything the training options hold before they become a RunConfig.
struct TrainingOptions {
    std::string preset, specFile, dataset = "fashion-mnist", backend = "cpu", precision = "fp32";
    int epochs = 10, batch = 64, warmupEpochs = 0, earlyStop = 0, logEvery = 50, threads = 0;
    std::string optimizer = "adam", schedule = "constant", augment = "none", classWeights = "none";
    float learningRate = 0.001f, momentum = 0.9f, weightDecay = 0.0f, labelSmoothing = 0.0f;
    std::vector<std::string> teachers;  // models to distil from: names or folders
    float distillWeight = 0.5f, distillTemperature = 1.0f;
    double targetAccuracy = 0.66;
    std::string runDir, resume, events, recipe, checkpointEvery = "5min";
    double predictedEpochSeconds = 0, predictedTotalSeconds = 0;
    std::string predictionBasis;
    std::uint64_t seed = 42;
    std::size_t limit = 0;
    bool skipBad = false, summary = false, scaleLearningRate = false, nesterov = false;
    // Distributed: ranks per node (--gpus or --ranks), nodes, hostfile; --dry-run prints mpirun's line.
    int gpus = 0, ranks = 0, nodes = 1;
    std::string hostfile;
    bool dryRun = false;
};

// The options that make a run what it is: a resumed run takes them from its config.json.
const char* const kFixedOnResume[] = {"--preset", "--spec", "--dataset", "--backend", "--precision",
                                      "--batch", "--optimizer", "--lr", "--momentum", "--nesterov", "--weight-decay",
                                      "--schedule", "--warmup-epochs", "--augment", "--label-smoothing",
                                      "--class-weights", "--early-stop", "--run-dir", "--seed", "--limit",
                                      "--skip-bad", "--summary", "--recipe", "--target-accuracy",
                                      "--teacher", "--distill-weight", "--distill-temperature"};

void addTrainingOptions(CLI::App& app, TrainingOptions& o) {
    auto* preset = app.add_option("--preset", o.preset, "a built-in network")->check(CLI::IsMember(presetNames()));
    app.add_option("--recipe", o.recipe,
                   "a named recipe (network, every trainer option, seed; `recipes` lists them); options given override it")
        ->check(CLI::IsMember(app::recipeNames()));
    auto* spec = app.add_option("--spec", o.specFile, "a network spec JSON file")->check(CLI::ExistingFile);
    preset->excludes(spec);
    app.add_option("--dataset", o.dataset, "fashion-mnist | fer2013:PATH | idx:DIR | folder:DIR")
        ->capture_default_str();
    app.add_option("--backend", o.backend, "where to train")
        ->check(CLI::IsMember(knownBackends()))->capture_default_str();
    app.add_option("--precision", o.precision, "fp32 | tf32 | bf16 (tf32 on cudnn; bf16 on the GPU backends, and on cpu where the CPU has bf16 instructions)")
        ->check(CLI::IsMember({"fp32", "tf32", "bf16"}))->capture_default_str();
    app.add_option("--epochs", o.epochs, "passes over the training data")
        ->check(CLI::Range(1, 100000))->capture_default_str();
    app.add_option("--batch", o.batch, "images per step")->check(CLI::Range(1, 65536))->capture_default_str();
    app.add_option("--optimizer", o.optimizer, "sgd | adam | adamw")
        ->check(CLI::IsMember({"sgd", "adam", "adamw"}))->capture_default_str();
    app.add_option("--lr", o.learningRate, "learning rate")
        ->check(numberFrom(1e-12, 100.0))->capture_default_str();
    app.add_option("--momentum", o.momentum, "SGD momentum in [0, 1)")
        ->check(numberFrom(0.0, 0.9999))->capture_default_str();
    app.add_flag("--nesterov", o.nesterov, "SGD with Nesterov momentum");
    app.add_option("--weight-decay", o.weightDecay, "L2 (sgd, adam) or decoupled (adamw) weight decay")
        ->check(numberFrom(0.0, 1.0))->capture_default_str();
    app.add_option("--schedule", o.schedule, "constant | step | cosine | plateau | onecycle (PyTorch's OneCycleLR)")
        ->check(CLI::IsMember({"constant", "step", "cosine", "plateau", "onecycle"}))->capture_default_str();
    app.add_option("--warmup-epochs", o.warmupEpochs, "linear warm-up from lr/100")
        ->check(CLI::Range(0, 1000))->capture_default_str();
    app.add_option("--augment", o.augment,
                   "none | default | a comma list of crop=P, flip, rotate=DEG, scale=LO-HI, shift=FRACTION, "
                   "erase=P, erase-fill=zero|noise, border=constant|replicate, mixup=ALPHA, cutmix=ALPHA, "
                   "brightness=B, contrast=C; done on the training backend after upload (validation and "
                   "test images are never augmented)")
        ->capture_default_str();
    app.add_option("--label-smoothing", o.labelSmoothing, "in [0, 1)")
        ->check(numberFrom(0.0, 0.999))->capture_default_str();
    app.add_option("--teacher", o.teachers,
                   "distil from this trained model (an installed model's name, a model or run folder); "
                   "repeat for an ensemble: the network also learns the mean of their probabilities on "
                   "each augmented batch");
    app.add_option("--distill-weight", o.distillWeight, "with --teacher: the share of the loss that learns the teachers, in (0, 1]")
        ->check(numberFrom(0.0001, 1.0))->capture_default_str();
    app.add_option("--distill-temperature", o.distillTemperature,
                   "with --teacher: the teachers' probabilities are softmax(logits / T); above 1 softens them")
        ->check(numberFrom(0.01, 100.0))->capture_default_str();
    app.add_option("--class-weights", o.classWeights, "balanced | none")
        ->check(CLI::IsMember({"balanced", "none"}))->capture_default_str();
    app.add_option("--early-stop", o.earlyStop, "stop after this many epochs without a better validation accuracy (0: off)")
        ->check(CLI::Range(0, 100000))->capture_default_str();
    app.add_option("--run-dir", o.runDir, "the run folder (default runs/<network>-<time>)");
    app.add_option("--resume", o.resume, "continue the run in this folder where it stopped")
        ->check(CLI::ExistingDirectory);
    app.add_option("--events", o.events, "also write the events to - (standard output) or a file");
    app.add_option("--target-accuracy", o.targetAccuracy,
                   "validation accuracy whose first reaching is timed and reported (seconds_to_target)")
        ->check(numberFrom(0.0001, 1.0))->capture_default_str();
    app.add_option("--checkpoint-every", o.checkpointEvery,
                   "also checkpoint within an epoch every N steps or minutes (200steps, 5min); a killed "
                   "run resumes from there")
        ->capture_default_str();
    app.add_option("--log-every", o.logEvery, "a step event every N steps")
        ->check(CLI::Range(1, 1000000))->capture_default_str();
    app.add_option("--threads", o.threads, "CPU threads (0: every core)")
        ->check(CLI::Range(0, kMaxCpuThreads))->capture_default_str();
    app.add_option("--seed", o.seed, "parameter init, data order, dropout and augmentation")
        ->check(kWholeNumberFromZero)->capture_default_str();
    app.add_option("--limit", o.limit, "train on the first N training images only (0: all)")
        ->check(kWholeNumberFromZero)->capture_default_str();
    auto* predictedEpoch = app.add_option("--predicted-epoch-s", o.predictedEpochSeconds,
                                          "the predicted epoch time, recorded in config.json (the app's Train page)")
                               ->check(CLI::PositiveNumber);
    app.add_option("--predicted-total-s", o.predictedTotalSeconds, "the predicted run time, recorded with it")
        ->check(CLI::PositiveNumber)->needs(predictedEpoch);
    app.add_option("--prediction-basis", o.predictionBasis, "the report the prediction came from")->needs(predictedEpoch);
    app.add_flag("--skip-bad", o.skipBad, "skip malformed rows and unreadable images, counting them");
    app.add_flag("--summary", o.summary, "print the per-layer table of the network and exit");
    auto* gpus = app.add_option("--gpus", o.gpus, "data parallel over N GPUs of each node (GPU backends)")
                     ->check(CLI::Range(1, 1024));
    auto* ranks = app.add_option("--ranks", o.ranks, "data parallel over N CPU ranks on each node (cpu backends)")
                      ->check(CLI::Range(1, 1024));
    gpus->excludes(ranks);
    auto* nodes = app.add_option("--nodes", o.nodes, "machines to train on (needs --hostfile)")
                      ->check(CLI::Range(1, 4096));
    app.add_option("--hostfile", o.hostfile, "OpenMPI hostfile: one 'host slots=N' line per node")->needs(nodes);
    app.add_flag("--dry-run", o.dryRun, "print the mpirun command of --gpus/--ranks/--nodes and exit");
    app.add_flag("--scale-lr", o.scaleLearningRate,
                 "multiply the learning rate by the number of ranks, with a linear warm-up");
}

// The options only the launcher reads: each rank gets the rest of the command line.
const char* const kLauncherOptions[] = {"--gpus", "--ranks", "--nodes", "--hostfile", "--run-dir", "--resume"};
const char* const kLauncherFlags[] = {"--dry-run"};

bool wantsSeveralRanks(const TrainingOptions& o) { return std::max(o.gpus, o.ranks) > 1 || o.nodes > 1; }

// This program's own arguments for the ranks, without the launcher's options, and with the run
// folder given as one absolute path, so that every rank uses the same folder.
std::vector<std::string> rankArguments(int argc, char** argv, const std::filesystem::path& runDir, bool resuming) {
    std::vector<std::string> arguments;
    for (int i = 1; i < argc; ++i) {
        const std::string argument = argv[i];
        bool dropped = false;
        for (const char* name : kLauncherOptions) {
            if (argument == name) {
                ++i;  // and its value
                dropped = true;
            } else if (argument.rfind(std::string(name) + "=", 0) == 0) {
                dropped = true;
            }
        }
        for (const char* name : kLauncherFlags) dropped = dropped || argument == name;
        if (!dropped) arguments.push_back(argument);
    }
    arguments.insert(arguments.end(), {resuming ? "--resume" : "--run-dir", runDir.string()});
    return arguments;
}

// The step and epoch a run had reached when it wrote `event`; 0 where the event does not say.
std::pair<long long, int> stepAndEpochAt(const Event& event) {
    if (const auto* step = event.as<StepEvent>()) return {step->step, step->epoch};
    if (const auto* epoch = event.as<EpochEvent>()) return {epoch->step, epoch->epoch};
    if (const auto* checkpoint = event.as<CheckpointEvent>()) return {checkpoint->step, checkpoint->epoch};
    return {0, 0};
}

// After a distributed job ended badly without saying so in its events (a rank killed or
// stalled, mpirun stopped), the run's record must still end in `failed`.
void recordJobFailure(const std::filesystem::path& runDir, const MpirunResult& job, const std::string& eventsOption) {
    const std::filesystem::path eventsFile = runDir / RunFolder::kEventsFileName;
    if (!std::filesystem::exists(eventsFile)) return;  // the ranks failed before the run began
    const EventLog log = readEvents(eventsFile);
    const Event* last = log.events.empty() ? nullptr : &log.events.back();
    // A rank's own `failed` (rank 0 losing a peer) says less than mpirun's word on which rank died.
    if (last && (last->as<FinishedEvent>() || (last->as<FailedEvent>() && job.failedRank.empty()))) return;
    const auto [step, epoch] = last ? stepAndEpochAt(*last) : std::pair<long long, int>{0, 0};
    EventWriter events;
    events.addFile(eventsFile);
    if (eventsOption == "-") events.addStream(std::cout);
    const std::string cause =
        job.endedAfterStop ? "the ranks did not stop within a minute of the stop, so the launcher ended them (the run "
                             "resumes from its last checkpoint)"
        : job.failedRank.empty()
            ? "a rank died or stalled (the ranks' own messages on standard error name the rank and host)"
            : job.failedRank + ", so mpirun ended every rank";
    events.emit("failed", {{"reason", "the distributed job ended with status " + std::to_string(job.status) + ": " +
                                          cause},
                           {"where", "mpirun"},
                           {"step", step},
                           {"epoch", epoch}});
}

// Whether the run's last event is a `finished` of a stopped run: the ranks under mpirun exit 0
// when stopped (a non-zero rank would make mpirun end the job as failed), so the launcher asks
// the events.
bool endedStopped(const std::filesystem::path& runDir) {
    const std::filesystem::path eventsFile = runDir / RunFolder::kEventsFileName;
    if (!std::filesystem::exists(eventsFile)) return false;  // stopped before the run began
    const EventLog log = readEvents(eventsFile);
    const FinishedEvent* finished = log.events.empty() ? nullptr : log.events.back().as<FinishedEvent>();
    return finished && finished->reason == "stopped";
}

bool isGpuBackend(const std::string& backend) { return backend != "cpu" && backend != "cpu-ref"; }

// The layout the options ask for, checked against the backend; one process when they ask for none.
DistributedLayout layoutFromOptions(const TrainingOptions& o, const std::string& backend) {
    const bool gpuBackend = isGpuBackend(backend);
    if (o.gpus > 0 && !gpuBackend)
        throw Error("--gpus asks for GPU ranks but the backend is " + backend, "--gpus",
                    "use --ranks N for ranks on CPU backends, or a GPU backend (--backend cuda or cudnn)");
    if (o.ranks > 0 && gpuBackend)
        throw Error("--ranks is for CPU backends, the backend is " + backend, "--ranks",
                    "use --gpus N: one rank per GPU");
    DistributedLayout layout;
    layout.ranksPerNode = std::max({o.gpus, o.ranks, 1});
    layout.nodes = o.nodes;
    if (!o.hostfile.empty()) layout.hostfile = std::filesystem::absolute(o.hostfile).string();
    return layout;
}

bool asksForLayout(const CLI::App& app) {
    return app.count("--gpus") + app.count("--ranks") + app.count("--nodes") + app.count("--hostfile") > 0;
}

// A resumed run starts again with the layout it was trained with: its rank count fixes the
// global batch and each rank's share of the data. Options may repeat it, or point at another
// hostfile for the same counts (the machines moved); a different count is refused.
DistributedLayout resumedLayout(const CLI::App& app, const TrainingOptions& o, const app::RunConfig& config,
                                const std::filesystem::path& configFile) {
    const DistributedLayout& recorded = config.distributed;
    if (!asksForLayout(app)) {
        if (recorded.nodes > 1 && !std::filesystem::exists(recorded.hostfile))
            throw Error("the run was trained on " + recorded.describe() + " but that hostfile is gone",
                        configFile.string(),
                        "give --nodes " + std::to_string(recorded.nodes) + " --hostfile FILE listing the nodes (" +
                            std::to_string(recorded.ranksPerNode) + " slots each) to resume");
        return recorded;
    }
    DistributedLayout asked = layoutFromOptions(o, config.backend);
    if (!app.count("--nodes")) asked.nodes = recorded.nodes;
    if (asked.hostfile.empty()) asked.hostfile = recorded.hostfile;
    if (asked.ranksPerNode != recorded.ranksPerNode || asked.nodes != recorded.nodes)
        throw Error("the run was trained on " + recorded.describe() + ", the options ask for " + asked.describe() +
                        ": the global batch and each rank's share of the data would change",
                    configFile.string(), "resume with the recorded layout (--resume alone starts it), or start a new run");
    return asked;
}

// Runs this program under mpirun with `layout`. Returns the exit code.
int launchDistributed(int argc, char** argv, const TrainingOptions& o, const std::string& backend,
                      const DistributedLayout& layout) {
    const bool resuming = !o.resume.empty();
    DistributedRequest request;
    request.ranksPerNode = layout.ranksPerNode;
    request.nodes = layout.nodes;
    request.hostfile = layout.hostfile;
    request.gpuBackend = isGpuBackend(backend);
    const std::filesystem::path runDir = std::filesystem::absolute(
        resuming ? std::filesystem::path(o.resume)
                 : !o.runDir.empty() ? std::filesystem::path(o.runDir)
                                     : app::defaultRunDir(!o.preset.empty()   ? "preset:" + o.preset
                                                          : !o.specFile.empty() ? "file:" + o.specFile
                                                                                : app::loadRecipe(o.recipe).network));
    // The ranks cannot see the launcher's options: the layout they record travels in the
    // environment, which mpirun forwards (-x).
    setenv(DistributedLayout::kLayoutVariable, layout.toJson().dump().c_str(), 1);
    const std::vector<std::string> command =
        mpirunCommand(request, std::filesystem::read_symlink("/proc/self/exe").string(),
                      rankArguments(argc, argv, runDir, resuming));
    if (o.dryRun) {
        std::printf("%s\n", quoteCommand(command).c_str());
        return 0;
    }
    // A stopped rank ends its step, agrees on a checkpoint step with the others and writes the
    // checkpoint: a minute is ample; past it the job is ended and resumes from its last checkpoint.
    const MpirunResult job = runMpirun(command, std::chrono::seconds(60));
    if (job.endedAfterStop && endedStopped(runDir)) return kExitStopped;  // stopped, then held up in mpirun
    if (job.status != 0) {
        recordJobFailure(runDir, job, o.events);
        return kExitError;
    }
    return endedStopped(runDir) ? kExitStopped : 0;
}

// One recipe setting into the options, unless the command line gave that option. Throws Error
// naming the recipe and setting for a value of the wrong type.
void applyRecipeSetting(const CLI::App& app, const std::string& key, const nlohmann::json& value,
                        const std::string& recipe, TrainingOptions& o) {
    const std::string option = key == "teachers" ? "--teacher" : "--" + key;  // a list, given once per model
    if (app.count(option) > 0) return;
    try {
        if (key == "backend") o.backend = value.get<std::string>();
        else if (key == "precision") o.precision = value.get<std::string>();
        else if (key == "epochs") o.epochs = value.get<int>();
        else if (key == "batch") o.batch = value.get<int>();
        else if (key == "optimizer") o.optimizer = value.get<std::string>();
        else if (key == "lr") o.learningRate = value.get<float>();
        else if (key == "momentum") o.momentum = value.get<float>();
        else if (key == "nesterov") o.nesterov = value.get<bool>();
        else if (key == "weight-decay") o.weightDecay = value.get<float>();
        else if (key == "schedule") o.schedule = value.get<std::string>();
        else if (key == "warmup-epochs") o.warmupEpochs = value.get<int>();
        else if (key == "augment") o.augment = value.get<std::string>();
        else if (key == "label-smoothing") o.labelSmoothing = value.get<float>();
        else if (key == "class-weights") o.classWeights = value.get<std::string>();
        else if (key == "early-stop") o.earlyStop = value.get<int>();
        else if (key == "seed") o.seed = value.get<std::uint64_t>();
        else if (key == "log-every") o.logEvery = value.get<int>();
        else if (key == "target-accuracy") o.targetAccuracy = value.get<double>();
        else if (key == "teachers") o.teachers = value.get<std::vector<std::string>>();
        else if (key == "distill-weight") o.distillWeight = value.get<float>();
        else if (key == "distill-temperature") o.distillTemperature = value.get<float>();
    } catch (const nlohmann::json::exception& error) {
        throw Error("setting '" + key + "' has the wrong type: " + error.what(), "recipe " + recipe);
    }
}

// --recipe NAME: the recipe's network and settings, where the command line does not give them.
void applyRecipe(const CLI::App& app, TrainingOptions& o) {
    const app::Recipe recipe = app::loadRecipe(o.recipe);
    if (o.preset.empty() && o.specFile.empty()) o.preset = recipe.network.substr(std::string("preset:").size());
    if (app.count("--dataset") == 0)
        throw Error("recipe " + recipe.name + " trains on " + recipe.datasetKind + " data: say where it is",
                    "--dataset", "add --dataset " + recipe.datasetKind + (recipe.datasetKind == "fashion-mnist" ? "" : ":PATH"));
    const std::string named = datasets::toString(datasets::parseDatasetSpec(o.dataset));
    const std::string kind = named.substr(0, named.find(':'));  // "fer2013:PATH" -> "fer2013"
    if (kind != recipe.datasetKind)
        throw Error("recipe " + recipe.name + " is for " + recipe.datasetKind + " data, --dataset gives " + kind,
                    "--dataset", "give a " + recipe.datasetKind + " data set or choose another recipe");
    for (const auto& [key, value] : recipe.settings.items()) applyRecipeSetting(app, key, value, recipe.name, o);
    if (o.teachers.empty() && (recipe.settings.contains("distill-weight") || recipe.settings.contains("distill-temperature")))
        throw Error("recipe " + recipe.name + " distils what teacher models know: name them", "--teacher",
                    "add --teacher NAME|FOLDER for each; the recipe's description (`recipes`) says which");
    const std::vector<std::string> backends = knownBackends();
    if (std::find(backends.begin(), backends.end(), o.backend) == backends.end())
        throw Error("recipe " + recipe.name + " names backend '" + o.backend + "', which this build does not know",
                    "recipe " + recipe.name);
    if (o.precision != "fp32" && o.precision != "tf32" && o.precision != "bf16")
        throw Error("recipe " + recipe.name + " names precision '" + o.precision + "'", "recipe " + recipe.name,
                    "use fp32, tf32 or bf16");
}

// The layout to launch, or none to train in this process: a fresh run's options, or a resumed
// run's recorded layout.
std::optional<std::pair<std::string, DistributedLayout>> launchPlan(const CLI::App& app, const TrainingOptions& o) {
    if (o.resume.empty()) {
        if (!wantsSeveralRanks(o)) return std::nullopt;
        return std::pair{o.backend, layoutFromOptions(o, o.backend)};
    }
    std::optional<RunFolder> folder;
    app::RunConfig config;
    try {
        folder = RunFolder::open(o.resume);
        config = app::RunConfig::fromJson(folder->readConfig(), folder->configFile().string());
    } catch (const Error&) {
        // A folder without a readable config: training in this process reports it, after
        // taking the folder's lock, as for any resume.
        return std::nullopt;
    }
    const DistributedLayout layout = resumedLayout(app, o, config, folder->configFile());
    if (layout.ranks() == 1 && layout.nodes == 1) return std::nullopt;
    return std::pair{config.backend, layout};
}

// Checks what CLI11 cannot and builds the command; throws Error for bad usage.
app::TrainCommand trainCommandFrom(const CLI::App& app, TrainingOptions o) {
    if (!o.recipe.empty() && o.resume.empty()) applyRecipe(app, o);
    app::TrainCommand command;
    command.events = o.events;
    if (!o.resume.empty()) {
        for (const char* name : kFixedOnResume)
            if (app.count(name) > 0)
                throw Error(std::string(name) + " cannot be changed when resuming", "--resume",
                            "the run's config.json fixes it; only --epochs, --log-every, --threads, "
                            "--checkpoint-every and --events may be given");
        command.resume = o.resume;
        if (app.count("--epochs")) command.epochs = o.epochs;
        if (app.count("--log-every")) command.logEvery = o.logEvery;
        if (app.count("--threads")) command.threads = o.threads;
        if (app.count("--checkpoint-every"))
            command.checkpointEvery = CheckpointCadence::parse(o.checkpointEvery, "--checkpoint-every");
        return command;
    }
    if (o.preset.empty() && o.specFile.empty())
        throw Error("no network given", "options", "choose one with --preset NAME, --spec FILE or --recipe NAME");

    app::RunConfig& config = command.config;
    config.recipe = o.recipe;
    config.spec = o.preset.empty() ? "file:" + std::filesystem::absolute(o.specFile).string() : "preset:" + o.preset;
    // Throws listing the accepted forms; the run records the data set's absolute path.
    config.dataset = datasets::toString(datasets::withAbsolutePath(datasets::parseDatasetSpec(o.dataset)));
    config.backend = o.backend;
    requirePrecisionOf(o.backend, o.precision);  // cuda with tf32 would fail only once a GPU is touched
    config.precision = o.precision;
    config.threads = o.threads;
    config.batch = o.batch;
    config.augment = datasets::toString(datasets::parseAugmentation(o.augment));
    config.classWeights = o.classWeights;
    config.limit = o.limit;
    config.skipBad = o.skipBad;
    if (o.predictedEpochSeconds > 0)
        config.prediction = app::RunConfig::Prediction{o.predictedEpochSeconds, o.predictedTotalSeconds, o.predictionBasis};

    TrainerConfig& trainer = config.trainer;
    trainer.epochs = o.epochs;
    trainer.seed = o.seed;
    trainer.logEvery = o.logEvery;
    trainer.targetAccuracy = o.targetAccuracy;
    trainer.checkpointEvery = CheckpointCadence::parse(o.checkpointEvery, "--checkpoint-every");
    trainer.earlyStopPatience = o.earlyStop;
    trainer.optimizer.kind = o.optimizer;
    trainer.optimizer.learningRate = o.learningRate;
    trainer.optimizer.momentum = o.momentum;  // read by sgd only
    trainer.optimizer.nesterov = o.nesterov;
    trainer.optimizer.weightDecay = o.weightDecay;
    trainer.schedule.kind = o.schedule;
    trainer.schedule.warmupEpochs = o.warmupEpochs;
    trainer.loss.labelSmoothing = o.labelSmoothing;
    if (o.teachers.empty() && (app.count("--distill-weight") || app.count("--distill-temperature")))
        throw Error("--distill-weight and --distill-temperature need a teacher", "options",
                    "name the model to distil from with --teacher NAME");
    for (const std::string& teacher : o.teachers)
        trainer.distillation.teachers.push_back(std::filesystem::absolute(app::locateModel(teacher).folder).string());
    trainer.distillation.weight = o.distillWeight;
    trainer.distillation.temperature = o.distillTemperature;
    trainer.validate();
    command.runDir = o.runDir;
    return command;
}

// `backends`: every backend this build knows of and whether it runs here, with the precisions it
// trains in here ("cpu  available: fp32, bf16"); when not, why (a GPU plugin that cannot load
// names the missing CUDA library).
void printBackends(std::FILE* out) {
    for (const std::string& name : knownBackends()) {
        const std::string why = backendUnavailableReason(name);
        std::string precisions;
        if (why.empty())
            for (const std::string& precision : backendPrecisions(name))
                precisions += (precisions.empty() ? "" : ", ") + precision;
        std::fprintf(out, "%-8s %s\n", name.c_str(),
                     why.empty() ? ("available: " + precisions).c_str() : ("unavailable: " + why).c_str());
    }
}

// `models`: each installed model's name and the folder it is in.
void printModels(std::FILE* out) {
    const std::vector<std::string> names = installedModelNames();
    if (names.empty()) std::fprintf(out, "no installed models\n");
    for (const std::string& name : names) std::fprintf(out, "%-20s %s\n", name.c_str(), resolveModel(name).c_str());
}

// `recipes`: each recipe's name, network, data set kind and description.
void printRecipes(std::FILE* out) {
    for (const std::string& name : app::recipeNames()) {
        const app::Recipe recipe = app::loadRecipe(name);
        std::fprintf(out, "%-16s %-24s %-10s %s\n", name.c_str(), recipe.network.c_str(), recipe.datasetKind.c_str(),
                     recipe.description.c_str());
    }
}

// More threads than cores only wait for one another: allowed (a shared machine may be measured
// that way on purpose), but said, as cnnstudio-bench says it.
void warnAboutThreadsBeyondCores(int threads) {
    const unsigned cores = std::thread::hardware_concurrency();
    if (cores > 0 && threads > 0 && unsigned(threads) > cores)
        std::fprintf(stderr, "cnnstudio-train: warning: --threads %d is more than the %u cores of this machine; "
                             "the extra threads only wait for each other\n", threads, cores);
}

void printError(const std::exception& error) {
    std::fflush(stdout);
    if (launchedByMpi()) {
        // Several ranks write to one terminal: say which one failed.
        const WorldInfo world = initialiseWorld();
        std::fprintf(stderr, "cnnstudio-train: error on rank %d of %d (host %s): %s\n", world.rank, world.size,
                     world.host.c_str(), error.what());
        return;
    }
    std::fprintf(stderr, "cnnstudio-train: error: %s\n", error.what());
}

}  // namespace

int main(int argc, char** argv) {
    ignoreClosedOutput();
    CLI::App app{"cnnstudio-train: train, resume, evaluate and use CNN Studio networks without the GUI"};
    app.require_subcommand(0, 1);
    app.footer(kExitCodesHelp);
    TrainingOptions training;
    addTrainingOptions(app, training);
    double cardTtaAccuracy = -1;  // -1: not given

    app::EvaluateCommand evaluateCommand;
    CLI::App* evaluate = app.add_subcommand("evaluate", "accuracy, per-class table and confusion matrix of a model");
    std::vector<std::filesystem::path> evaluateTargets, evaluateModels;
    evaluate->add_option("target", evaluateTargets,
                         "RUN_DIR, MODEL_DIR or an installed model's name (`models`); several: their ensemble "
                         "(each image's probabilities averaged over the models)");
    evaluate->add_option("--model", evaluateModels, "the same as target: a folder or an installed model's name; repeatable");
    evaluate->add_option("--tta", evaluateCommand.tta,
                         "test-time augmentation: none | flip (2 views) | tencrop (corners and centre of the image "
                         "padded by 4, and their mirrors)")
        ->check(CLI::IsMember({"none", "flip", "tencrop"}))->capture_default_str();
    std::string evaluateDataset;
    evaluate->add_option("--dataset", evaluateDataset, "default: the data set the model was trained on");
    evaluate->add_option("--split", evaluateCommand.split, "test | validation | train")
        ->check(CLI::IsMember({"test", "validation", "train"}))->capture_default_str();
    evaluate->add_option("--backend", evaluateCommand.backend)->check(CLI::IsMember(knownBackends()))->capture_default_str();
    evaluate->add_option("--batch", evaluateCommand.batch)->check(CLI::Range(1, 65536))->capture_default_str();
    evaluate->add_option("--threads", evaluateCommand.threads)->check(CLI::Range(0, kMaxCpuThreads))->capture_default_str();
    evaluate->add_flag("--skip-bad", evaluateCommand.skipBad, "skip malformed rows and unreadable images");

    app::ExportCommand exportCommand;
    CLI::App* exportModel = app.add_subcommand("export", "write a model in another format (ONNX)");
    exportModel->add_option("target", exportCommand.target, "MODEL_DIR, RUN_DIR or an installed model's name")->required();
    exportModel->add_option("--onnx", exportCommand.onnx, "the ONNX file to write (opset 13)");
    exportModel->add_option("--model-folder", exportCommand.modelFolder,
                            "a model folder to write (model.json, spec.json, model.safetensors): a new or empty "
                            "folder, or an earlier model folder, which it replaces");
    exportModel->add_option("--weights-dtype", exportCommand.weightsDtype, "the model folder's weights: fp32 | bf16 | fp16")
        ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))->capture_default_str();

    app::ImportCommand importCommand;
    CLI::App* importModel = app.add_subcommand("import", "read an ONNX model into a model folder");
    importModel->add_option("onnx", importCommand.onnx, "the ONNX file (opset 13 ops CNN Studio has)")->required()->check(CLI::ExistingFile);
    importModel->add_option("--out", importCommand.folder,
                            "the model folder to write: a new or empty folder, or an earlier model folder, which it "
                            "replaces")
        ->required();

    CLI::App* backends = app.add_subcommand("backends", "the backends of this build and whether each can run here");
    CLI::App* recipes = app.add_subcommand("recipes", "the named training recipes (--recipe NAME)");
    CLI::App* models = app.add_subcommand("models", "the installed trained models, usable by name");
    std::filesystem::path cardRun;
    CLI::App* card = app.add_subcommand("card", "write MODEL_CARD.md for a finished run from its events and model");
    card->add_option("run", cardRun, "RUN_DIR of a finished run")->required()->check(CLI::ExistingDirectory);
    card->add_option("--tta-accuracy", cardTtaAccuracy, "the accuracy with flip test-time augmentation, from evaluate --tta flip")
        ->check(numberFrom(0.0, 1.0));

    app::PredictCommand predictCommand;
    CLI::App* predict = app.add_subcommand("predict", "the most likely classes of image files");
    predict->add_option("target", predictCommand.target, "MODEL_DIR, RUN_DIR or an installed model's name (`models`)")->required();
    predict->add_option("images", predictCommand.images, "image files")->required()->check(CLI::ExistingFile);
    predict->add_option("--backend", predictCommand.backend)->check(CLI::IsMember(knownBackends()))->capture_default_str();
    predict->add_option("--threads", predictCommand.threads)->check(CLI::Range(0, kMaxCpuThreads))->capture_default_str();
    predict->add_option("--top", predictCommand.top, "classes shown per image")->check(CLI::Range(1, 1000))->capture_default_str();
    predict->add_flag("--logits", predictCommand.logits, "print each image's logits as a JSON line instead");

    if (const std::optional<int> exitCode = parseCommandLine(app, argc, argv)) return *exitCode;

    // Once, from the process the user started: ranks under mpirun would repeat it.
    if (!launchedByMpi())
        warnAboutThreadsBeyondCores(std::max({training.threads, evaluateCommand.threads, predictCommand.threads}));
    try {
        if (*backends) {
            printBackends(stdout);
            return 0;
        }
        if (*recipes) {
            printRecipes(stdout);
            return 0;
        }
        if (*models) {
            printModels(stdout);
            return 0;
        }
        if (*card) {
            app::writeModelCard(cardRun, cardTtaAccuracy >= 0 ? std::optional<double>(cardTtaAccuracy) : std::nullopt,
                                stdout);
            return 0;
        }
        if (*exportModel) {
            app::runExport(exportCommand, stdout);
            return 0;
        }
        if (*importModel) {
            app::runImport(importCommand, stdout);
            return 0;
        }
        if (*evaluate) {
            evaluateCommand.targets = evaluateTargets;
            evaluateCommand.targets.insert(evaluateCommand.targets.end(), evaluateModels.begin(), evaluateModels.end());
            if (evaluateCommand.targets.empty())
                throw Error("no model given", "evaluate", "give RUN_DIR, MODEL_DIR or --model NAME (`models` lists them)");
            if (!evaluateDataset.empty()) {
                datasets::parseDatasetSpec(evaluateDataset);
                evaluateCommand.dataset = evaluateDataset;
            }
            app::runEvaluate(evaluateCommand, stdout);
            return 0;
        }
        if (*predict) {
            app::runPredict(predictCommand, stdout);
            return 0;
        }
        if (training.summary) {
            const std::string source = !training.specFile.empty() ? "file:" + training.specFile
                                       : !training.preset.empty() ? "preset:" + training.preset
                                       : !training.recipe.empty() ? app::loadRecipe(training.recipe).network
                                                                  : "";
            if (source.empty())
                throw Error("no network given", "--summary",
                            "choose one with --preset NAME, --spec FILE or --recipe NAME");
            const std::optional<std::string> dataset =
                app.count("--dataset") ? std::optional<std::string>(training.dataset) : std::nullopt;
            return app::printSummary(source, dataset, stdout) ? 0 : kExitError;
        }
    } catch (const Error& error) {
        printError(error);
        return kExitError;
    } catch (const std::exception& error) {
        printError(error);
        return kExitError;
    }

    // A resume's layout comes from its config.json, so its --dry-run is judged once that is read.
    if (training.dryRun && training.resume.empty() && !wantsSeveralRanks(training)) {
        std::fprintf(stderr, "cnnstudio-train: error: --dry-run shows the mpirun command of a distributed run\n"
                             "give --gpus N, --ranks N or --nodes M --hostfile F with it\n");
        return kExitUsage;
    }
    app::TrainCommand command;
    try {
        command = trainCommandFrom(app, training);
    } catch (const Error& error) {
        printError(error);
        std::fprintf(stderr, "Run with --help for more information.\n");
        return kExitUsage;
    }
    // SIGUSR1 is how mpirun passes a graceful stop on to the ranks; a launcher forwards them all.
    watchStopSignals({SIGINT, SIGTERM, SIGUSR1}, stopRequested);
    if (!launchedByMpi()) {
        try {
            if (const auto plan = launchPlan(app, training))
                return launchDistributed(argc, argv, training, plan->first, plan->second);
            if (training.dryRun) {
                std::fprintf(stderr, "cnnstudio-train: error: the run in %s trains as one process: there is no "
                                     "mpirun command to show\n", training.resume.c_str());
                return kExitUsage;
            }
        } catch (const std::exception& error) {
            printError(error);
            return kExitError;
        }
    }
    try {
        const std::string reason = app::runTraining(command, stopRequested);
        finaliseWorld();
        return reason == "stopped" && !launchedByMpi() ? kExitStopped : 0;
    } catch (const std::exception& error) {
        printError(error);
        // A failing rank leaves without finalising MPI: mpirun then ends the other ranks.
        return kExitError;
    }
}
