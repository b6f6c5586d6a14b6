#include "cnnstudio/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>

#include "cnnstudio/error.h"
#include "cnnstudio/hardware.h"

namespace cnnstudio {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string formatFloat(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// Cross-entropy starts near ln(classes) (2.3 for 10). A loss 1000 times that (times the largest
// class weight, which scales it) gives the true class a probability below e^-2300: no run that is
// still learning gets there, while a diverging one passes it within a few steps (--lr 100 once
// ended at 6.7e15). A bound fixed from the start, unlike one from the first epoch's mean, also
// catches a run that diverges during its first epoch.
constexpr double kExplodedLossFactor = 1000;
// Parameters of larger magnitude count as gone bad when naming where a divergence shows; trained
// weights are of order 1.
constexpr float kBadParameterMagnitude = 1e4f;

double explodedLossBound(int classes, const LossOptions& loss) {
    double largestWeight = 1;
    for (float weight : loss.classWeights) largestWeight = std::max(largestWeight, double(weight));
    return kExplodedLossFactor * std::max(1.0, std::log(double(classes))) * largestWeight;
}

struct BadParameters {
    std::string layer, description;  // "conv1", "conv1.weight holds NaN"
};

// The first parameters, in the network's order, that are not finite or beyond
// kBadParameterMagnitude: the layer a divergence shows in first.
std::optional<BadParameters> findFirstBadParameters(Network& network) {
    for (const NamedTensor& tensor : networkTensors(network)) {
        for (float value : tensor.values) {
            if (std::isfinite(value) && std::fabs(value) <= kBadParameterMagnitude) continue;
            const std::string layer = tensor.name.substr(0, tensor.name.rfind('.'));
            const std::string what = std::isnan(value)      ? "holds NaN"
                                     : std::isinf(value)    ? "holds an infinity"
                                                            : "holds " + formatFloat(value);
            return BadParameters{layer, tensor.name + " " + what};
        }
    }
    return std::nullopt;
}

// The error that stops a run whose loss is not finite or beyond `bound`, naming the steps and the
// first layer whose parameters went bad. The loss is read at log points (no host
// synchronisation per step), so the guard names the steps since the previous read, first to last;
// with --log-every 1 that is the very step.
Error divergenceError(double loss, double bound, int classes, int epoch, std::int64_t firstStep, std::int64_t lastStep,
                      float learningRate, Network& network) {
    const bool oneStep = firstStep == lastStep;
    const std::string when = "at epoch " + std::to_string(epoch) +
                             (oneStep ? " step " + std::to_string(lastStep)
                                      : " in one of steps " + std::to_string(firstStep) + " to " +
                                            std::to_string(lastStep));
    std::string reason = std::isfinite(loss)
                             ? "loss exploded to " + formatFloat(loss) + " " + when + " (beyond " + formatFloat(bound) +
                                   ", a thousand times the loss of a uniform guess over " + std::to_string(classes) +
                                   " classes)"
                             : std::string("loss became ") + (std::isnan(loss) ? "NaN" : "infinite") + " " + when;
    const std::optional<BadParameters> bad = findFirstBadParameters(network);
    reason += bad ? "; the first layer whose parameters went bad is '" + bad->layer + "' (" + bad->description + ")"
                  : "; every parameter is still finite and below " + formatFloat(kBadParameterMagnitude) +
                        ", so the inputs or the loss went bad first";
    return Error(reason, bad ? "layer '" + bad->layer + "'" : "trainer",
                 "lower the learning rate (it was " + formatFloat(learningRate) +
                     "), add warm-up epochs, or check the data for extreme values; no model was saved" +
                     (oneStep ? "" : "; --log-every 1 reads the loss after every step and names the very step"));
}

// Checks a batch against what the network takes, so that a misbehaving source gives a message
// instead of an out-of-bounds read in a loss kernel.
void checkBatch(const Batch& batch, int capacity, std::int64_t valuesPerImage, int classes,
                const std::string& where) {
    if (batch.count < 1 || batch.count > capacity)
        throw Error("a batch of " + std::to_string(batch.count) + " images, the network takes " +
                    std::to_string(capacity), where);
    if (std::int64_t(batch.images.size()) != std::int64_t(batch.count) * valuesPerImage)
        throw Error(std::to_string(batch.images.size()) + " image values for " + std::to_string(batch.count) +
                    " images of " + std::to_string(valuesPerImage) + " values each", where,
                    "the data set's image shape differs from the network's input");
    if (std::int64_t(batch.labels.size()) != batch.count)
        throw Error(std::to_string(batch.labels.size()) + " labels for " + std::to_string(batch.count) +
                    " images", where);
    for (int i = 0; i < batch.count; ++i)
        if (batch.labels[std::size_t(i)] < 0 || batch.labels[std::size_t(i)] >= classes)
            throw Error("label " + std::to_string(batch.labels[std::size_t(i)]) + " of image " +
                        std::to_string(i) + " is outside the network's " + std::to_string(classes) +
                        " classes", where, "adapt the network's output layer to the data set");
}

int argmax(const float* values, int count) {
    return int(std::max_element(values, values + count) - values);
}

}  // namespace

// ---- CheckpointCadence ------------------------------------------------------------------------

std::string CheckpointCadence::toString() const {
    if (steps > 0) return std::to_string(steps) + "steps";
    return formatFloat(float(minutes)) + "min";
}

CheckpointCadence CheckpointCadence::parse(const std::string& text, const std::string& where) {
    const auto refuse = [&] {
        return Error("'" + text + "' is not a checkpoint cadence", where,
                     "give a number of steps or minutes above zero, such as 200steps or 5min");
    };
    CheckpointCadence cadence;
    for (const auto& [unit, bySteps] : {std::pair{std::string("steps"), true}, std::pair{std::string("min"), false}}) {
        if (text.size() <= unit.size() || text.compare(text.size() - unit.size(), unit.size(), unit) != 0) continue;
        const std::string number = text.substr(0, text.size() - unit.size());
        std::size_t used = 0;
        try {
            if (bySteps) {
                const long long steps = std::stoll(number, &used);
                if (used != number.size() || steps < 1) throw refuse();
                cadence.steps = steps;
                cadence.minutes = 0;
            } else {
                const double minutes = std::stod(number, &used);
                if (used != number.size() || !(minutes > 0) || !std::isfinite(minutes)) throw refuse();
                cadence.minutes = minutes;
            }
        } catch (const std::logic_error&) {  // stoll/stod: no number, or out of range
            throw refuse();
        }
        return cadence;
    }
    throw refuse();
}

// ---- TrainerConfig ---------------------------------------------------------------------------

void TrainerConfig::validate() const {
    if (epochs < 1) throw Error("epochs is " + std::to_string(epochs) + ", needs at least 1", "epochs");
    if (earlyStopPatience < 0)
        throw Error("early-stopping patience is negative", "early-stop", "use 0 to turn it off");
    if (logEvery < 1) throw Error("log-every is " + std::to_string(logEvery) + ", needs at least 1", "log-every");
    if (!(targetAccuracy > 0.0 && targetAccuracy <= 1.0))
        throw Error("target accuracy is " + formatFloat(targetAccuracy) + ", needs 0 < value <= 1",
                    "target-accuracy", "0.66 is FER2013's usual mark");
    if (!(loss.labelSmoothing >= 0.0f && loss.labelSmoothing < 1.0f))
        throw Error("label smoothing is " + formatFloat(loss.labelSmoothing) + ", needs 0 <= value < 1",
                    "label-smoothing", "0.1 is a common choice");
    for (float weight : loss.classWeights)
        if (!(std::isfinite(weight) && weight > 0.0f))
            throw Error("class weight " + formatFloat(weight) + " is not a positive number", "class-weights");
    optimizer.validate();
    schedule.validate();
    if (distillation.enabled()) distillation.validate();
}

nlohmann::json TrainerConfig::toJson() const {
    return {{"epochs", epochs},
            {"optimizer", optimizer.toJson()},
            {"schedule", schedule.toJson()},
            {"label_smoothing", loss.labelSmoothing},
            {"class_weights", loss.classWeights},
            {"early_stop_patience", earlyStopPatience},
            {"log_every", logEvery},
            {"target_accuracy", targetAccuracy},
            {"seed", seed},
            {"checkpoint_every", checkpointEvery.toString()},
            {"distillation", distillation.enabled() ? distillation.toJson() : nlohmann::json(nullptr)}};
}

TrainerConfig TrainerConfig::fromJson(const nlohmann::json& json) {
    TrainerConfig config;
    try {
        config.epochs = json.at("epochs").get<int>();
        config.optimizer = OptimizerConfig::fromJson(json.at("optimizer"));
        config.schedule = ScheduleConfig::fromJson(json.at("schedule"));
        config.loss.labelSmoothing = json.at("label_smoothing").get<float>();
        config.loss.classWeights = json.at("class_weights").get<std::vector<float>>();
        config.earlyStopPatience = json.at("early_stop_patience").get<int>();
        config.logEvery = json.at("log_every").get<int>();
        config.seed = json.at("seed").get<std::uint64_t>();
        config.targetAccuracy = json.value("target_accuracy", config.targetAccuracy);  // absent in older runs
        // Runs recorded before the cadence existed checkpoint at the default one.
        if (json.contains("checkpoint_every"))
            config.checkpointEvery = CheckpointCadence::parse(json.at("checkpoint_every").get<std::string>(),
                                                              "config.json: trainer.checkpoint_every");
        if (json.contains("distillation") && !json.at("distillation").is_null())
            config.distillation = DistillationConfig::fromJson(json.at("distillation"));
    } catch (const nlohmann::json::exception& error) {
        throw Error(std::string("the trainer settings are incomplete: ") + error.what(), "config.json",
                    "the run folder is damaged; start a new run");
    }
    config.validate();
    return config;
}

// ---- evaluation ------------------------------------------------------------------------------

int TestTimeAugmentation::views() const {
    if (kind == "none") return 1;
    if (kind == "flip") return 2;
    if (kind == "tencrop") return 10;
    throw Error("unknown test-time augmentation '" + kind + "'", "--tta", "use none, flip or tencrop");
}

namespace {

// out(y, x) = in(y + shiftY, x + shiftX), `fill` where that falls outside; mirrored first
// (in(y, width - 1 - x)) when `mirror`.
void shiftedView(const float* in, float* out, int channels, int height, int width, int shiftY, int shiftX,
                 bool mirror, const std::vector<float>& fill) {
    for (int c = 0; c < channels; ++c) {
        const float outside = fill.empty() ? 0.0f : fill[std::size_t(c)];
        const float* plane = in + std::size_t(c) * height * width;
        float* target = out + std::size_t(c) * height * width;
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) {
                const int sy = y + shiftY, sx = x + shiftX;
                const bool inside = sy >= 0 && sy < height && sx >= 0 && sx < width;
                target[y * width + x] = inside ? plane[sy * width + (mirror ? width - 1 - sx : sx)] : outside;
            }
    }
}

}  // namespace

void makeTestTimeView(const TestTimeAugmentation& tta, int view, std::span<const float> images, int count,
                      const TensorShape& shape, std::span<float> out) {
    const int views = tta.views();
    const std::size_t perImage = std::size_t(shape.countPerImage());
    if (view < 0 || view >= views || images.size() < perImage * std::size_t(count) || out.size() < images.size())
        throw Error("view " + std::to_string(view) + " of " + std::to_string(views) + " for " +
                    std::to_string(count) + " images into buffers too small or out of range", "test-time augmentation");
    if (!tta.fill.empty() && int(tta.fill.size()) != shape.channels)
        throw Error(std::to_string(tta.fill.size()) + " fill values for " + std::to_string(shape.channels) + " channels",
                    "test-time augmentation");
    // Window offsets relative to the image itself (the centre): centre, top-left, top-right,
    // bottom-left, bottom-right.
    const int p = tta.kind == "tencrop" ? tta.padding : 0;
    const int offsets[5][2] = {{0, 0}, {-p, -p}, {-p, p}, {p, -p}, {p, p}};
    const int halves = views / 2;  // plain views come first, their mirrors after
    const bool mirror = views > 1 && view >= halves;
    const int window = views > 1 ? view % halves : 0;
    for (int i = 0; i < count; ++i)
        shiftedView(images.data() + std::size_t(i) * perImage, out.data() + std::size_t(i) * perImage, shape.channels,
                    shape.height, shape.width, offsets[window][0], offsets[window][1], mirror, tta.fill);
}

namespace {

// The ensemble reads one batch of images at a time: every network at one batch size, with one
// input shape and class count.
void requireOneKindOfNetwork(const std::vector<Network*>& ensemble) {
    if (ensemble.empty()) throw Error("no network to evaluate", "evaluation");
    const Network& first = *ensemble.front();
    for (std::size_t m = 1; m < ensemble.size(); ++m) {
        const Network& member = *ensemble[m];
        const std::string which = "network " + std::to_string(m + 1) + " of the ensemble";
        const TensorShape in = member.inputShape(), firstIn = first.inputShape();
        if (in.channels != firstIn.channels || in.height != firstIn.height || in.width != firstIn.width)
            throw Error("its input differs from the first network's", which, "ensemble networks of one data set");
        if (member.classes() != first.classes())
            throw Error(std::to_string(member.classes()) + " classes, the first network " +
                            std::to_string(first.classes()), which, "ensemble networks of one data set");
        if (member.batch() != first.batch())
            throw Error("its batch differs from the first network's", which, "build every network at one batch size");
    }
}

// Adds each image's softmax probabilities (rows of `classes` logits) to `sums`.
void addProbabilities(const std::vector<float>& logits, int count, int classes, std::vector<double>& sums) {
    for (int i = 0; i < count; ++i) {
        const float* row = logits.data() + std::size_t(i) * classes;
        const float largest = row[argmax(row, classes)];
        double total = 0;
        for (int c = 0; c < classes; ++c) total += std::exp(double(row[c]) - largest);
        for (int c = 0; c < classes; ++c) sums[std::size_t(i) * classes + c] += std::exp(double(row[c]) - largest) / total;
    }
}

}  // namespace

EvaluationResult evaluate(Network& network, BatchSource& source, Communicator* communicator,
                          const TestTimeAugmentation& tta) {
    return evaluate(std::vector<Network*>{&network}, source, communicator, tta);
}

EvaluationResult evaluate(const std::vector<Network*>& ensemble, BatchSource& source, Communicator* communicator,
                          const TestTimeAugmentation& tta) {
    requireOneKindOfNetwork(ensemble);
    Network& network = *ensemble.front();
    const int capacity = network.batch();
    const int classes = network.classes();
    const TensorShape shape = network.inputShape();
    const std::int64_t valuesPerImage = shape.countPerImage();
    const int views = tta.views();
    // Probability tables averaged per image: one per network and view.
    const int predictions = views * int(ensemble.size());
    EvaluationResult result;
    result.confusion = ConfusionMatrix(classes);
    std::vector<float> padded(std::size_t(capacity * valuesPerImage));
    std::vector<double> probabilitySums;
    double lossSum = 0;
    // A single prediction per image adds each batch's predictions and losses on the backend and
    // reads them once at the end; several are averaged on the host.
    const MetricsGeometry metrics = network.metricsGeometry(capacity);
    BackendBuffer<double> deviceSums(network.backend(), metrics.sumCount());
    std::vector<double> hostSums(metrics.sumCount(), 0.0);
    network.backend().upload(deviceSums.data(), hostSums.data(), deviceSums.bytes());

    source.startEpoch(0, 0);
    Batch batch;
    for (std::int64_t index = 0; source.next(batch); ++index) {
        if (batch.count == 0 && communicator) continue;  // this rank's share of a last, small batch
        checkBatch(batch, capacity, valuesPerImage, classes, "evaluation batch " + std::to_string(index));
        if (predictions == 1) {
            std::copy(batch.images.begin(), batch.images.end(), padded.begin());
            std::fill(padded.begin() + std::ptrdiff_t(batch.images.size()), padded.end(), 0.0f);
            network.input().fromHost(padded);
            network.backend().upload(network.labels(), batch.labels.data(),
                                     std::size_t(batch.count) * sizeof(std::int32_t));
            network.forward(Phase::Inference);
            network.accumulateMetrics(batch.count, false, deviceSums.data());
            continue;
        }
        probabilitySums.assign(std::size_t(batch.count) * classes, 0.0);
        std::fill(padded.begin(), padded.end(), 0.0f);
        for (int view = 0; view < views; ++view) {
            makeTestTimeView(tta, view, batch.images, batch.count, shape, padded);
            for (Network* member : ensemble) {
                member->input().fromHost(padded);
                member->forward(Phase::Inference);
                addProbabilities(member->logits().toHost(), batch.count, classes, probabilitySums);
            }
        }
        for (int i = 0; i < batch.count; ++i) {
            const double* sums = probabilitySums.data() + std::size_t(i) * classes;
            const int predicted = int(std::max_element(sums, sums + classes) - sums);
            const int label = batch.labels[std::size_t(i)];
            lossSum -= std::log(std::max(sums[label] / predictions, 1e-300));
            result.confusion.add(label, predicted);
        }
    }
    if (predictions == 1) {
        network.backend().download(hostSums.data(), deviceSums.data(), deviceSums.bytes());
        for (int t = 0; t < classes; ++t)
            for (int p = 0; p < classes; ++p)
                result.confusion.add(t, p, std::int64_t(std::llround(
                                               hostSums[std::size_t(MetricsGeometry::kConfusion + t * classes + p)])));
        lossSum = hostSums[MetricsGeometry::kLossSum];
    }
    if (communicator && communicator->world().size > 1) {
        // Each rank saw a disjoint shard: the sums over ranks are the single-process counts.
        std::vector<double> sums(std::size_t(classes * classes) + 1);
        for (int t = 0; t < classes; ++t)
            for (int p = 0; p < classes; ++p) sums[std::size_t(t * classes + p)] = double(result.confusion.count(t, p));
        sums.back() = lossSum;
        communicator->allReduceSumHost(sums);
        result.confusion = ConfusionMatrix(classes);
        for (int t = 0; t < classes; ++t)
            for (int p = 0; p < classes; ++p)
                result.confusion.add(t, p, std::int64_t(std::llround(sums[std::size_t(t * classes + p)])));
        lossSum = sums.back();
    }
    const std::int64_t total = result.confusion.total();
    result.loss = total == 0 ? 0.0 : lossSum / double(total);
    return result;
}

// ---- Trainer ---------------------------------------------------------------------------------

struct Trainer::Session {
    Clock::time_point start = Clock::now();
    double wallAtStart = 0;          // training time of earlier sessions
    std::int64_t stepsPerEpoch = 0;
    Clock::time_point epochStart = Clock::now();
    double epochSecondsAtStart = 0;  // of the current epoch, from earlier sessions
    Clock::time_point lastLog = Clock::now();
    Clock::time_point lastCheckpoint = Clock::now();
    std::int64_t lastCheckpointStep = 0;
    std::int64_t lastLogStep = 0;
    double completedEpochSeconds = 0;  // this session's whole epochs, for the ETA
    int completedEpochs = 0;

    double wallSeconds() const { return wallAtStart + secondsSince(start); }
    double epochSeconds() const { return epochSecondsAtStart + secondsSince(epochStart); }
};

Trainer::Trainer(Network& network, const TrainerConfig& config, EventWriter& events, Communicator* communicator)
    : network_(network), config_(config), events_(events), communicator_(communicator) {
    config_.validate();
    optimizer_ = std::make_unique<Optimizer>(config_.optimizer, network_.backend(), network_.parameterCount());
    if (distributed()) {
        gradientSync_ = std::make_unique<GradientSync>(network_, *communicator_);
        broadcastParameters();
    }
    stepSums_ = BackendBuffer<double>(network_.backend(), network_.metricsGeometry(network_.batch()).sumCount());
    clearStepSums();
    step_ = std::make_unique<TrainingStep>(network_, *optimizer_, true, gradientSync_.get(), stepSums_.data());
    progress_.seed = config_.seed;
    if (config_.distillation.enabled()) {
        teachers_ = std::make_unique<TeacherEnsemble>(config_.distillation, network_);
        network_.setSoftTargets(teachers_->softTargets(config_.distillation.weight));
    }
}

Trainer::~Trainer() {
    if (teachers_) network_.setSoftTargets({});  // the table goes with the teachers
}

void Trainer::setRunFolder(const RunFolder* folder) { folder_ = folder; }

// The ranks build their networks from the same seed, so this only guards against anything
// that could make them differ (a checkpoint read differently, a backend's own initialisation).
void Trainer::broadcastParameters() {
    communicator_->broadcast(network_.parameters(), network_.parameterCount(), 0);
    if (network_.stateCount() > 0) communicator_->broadcast(network_.state(), network_.stateCount(), 0);
}

void Trainer::setStopFlag(const std::atomic<bool>* stop) { stop_ = stop; }

void Trainer::resume() {
    if (!folder_) throw Error("resuming needs a run folder", "trainer");
    const auto latest = folder_->checkpointFolder("latest");
    if (!checkpointExists(latest))
        throw Error("the run has no checkpoint to resume from", folder_->path().string(),
                    "a run writes its first checkpoint at the end of its first epoch or when stopped; "
                    "start a new run instead");
    progress_ = loadCheckpoint(latest, network_, *optimizer_);
    if (progress_.seed != config_.seed)
        throw Error("the checkpoint was made with seed " + std::to_string(progress_.seed) +
                    ", the configuration says " + std::to_string(config_.seed), latest.string(),
                    "resume with the run's own config.json");
    const auto best = folder_->checkpointFolder("best");
    bestWeights_ = checkpointExists(best) ? readCheckpointWeights(best) : std::vector<NamedTensor>{};
    resumed_ = true;
    if (distributed()) broadcastParameters();
}

void Trainer::uploadBatch(const Batch& batch, const char* split) {
    checkBatch(batch, network_.batch(), network_.inputShape().countPerImage(), network_.classes(),
               std::string(split) + " batch " + std::to_string(progress_.epochStep + 1) + " of epoch " +
                   std::to_string(progress_.epoch + 1));
    if (batch.count != network_.batch())
        throw Error("a training batch of " + std::to_string(batch.count) + " images, the network takes " +
                    std::to_string(network_.batch()), "trainer",
                    "training sources must leave out the last partial batch");
    network_.input().fromHost(batch.images);
    network_.backend().upload(network_.labels(), batch.labels.data(),
                              batch.labels.size() * sizeof(std::int32_t));
    if (!batch.augmentations.empty() || !batch.secondLabels.empty()) augmentOnDevice(batch);
    if (teachers_) teachers_->predict(network_.input());  // the batch as the network will see it
}

void Trainer::augmentOnDevice(const Batch& batch) {
    const std::string where = "training batch " + std::to_string(progress_.epochStep + 1) + " of epoch " +
                              std::to_string(progress_.epoch + 1);
    const std::size_t count = std::size_t(batch.count);
    if (batch.augmentations.size() != count)
        throw Error(std::to_string(batch.augmentations.size()) + " image augmentations for " +
                        std::to_string(count) + " images", where, "give one per image, or none");
    if (batch.secondLabels.size() != batch.labelWeights.size() ||
        (!batch.secondLabels.empty() && batch.secondLabels.size() != count))
        throw Error(std::to_string(batch.secondLabels.size()) + " second labels and " +
                        std::to_string(batch.labelWeights.size()) + " label weights for " +
                        std::to_string(count) + " images", where, "give one of each per image, or none");
    Backend& backend = network_.backend();
    if (augmentations_.data() == nullptr)
        augmentations_ = BackendBuffer<ImageAugmentation>(backend, std::size_t(network_.batch()));
    backend.upload(augmentations_.data(), batch.augmentations.data(), count * sizeof(ImageAugmentation));
    const TensorShape shape = network_.inputShape();
    backend.augmentImages({shape.batch, shape.channels, shape.height, shape.width}, augmentations_.data(), network_.input().data());
    if (!batch.secondLabels.empty()) network_.setMixedLabels(batch.secondLabels, batch.labelWeights);
}

// What the training steps since the last read added on the backend, over every rank.
struct Trainer::StepSums {
    double lossSum = 0;      // of the steps' losses (each the mean over ranks)
    double largestLoss = 0;  // of one step (the mean over ranks of each rank's largest)
    double latestLoss = 0;   // of the last step (the mean over ranks)
    std::int64_t correct = 0;
    bool stopRequested = false;  // on any rank
};

void Trainer::clearStepSums() {
    const std::vector<double> zeros(stepSums_.count(), 0.0);
    network_.backend().upload(stepSums_.data(), zeros.data(), stepSums_.bytes());
}

// One download (and, with several ranks, one all-reduce that also agrees on a stop), then the
// sums start again from zero.
Trainer::StepSums Trainer::readStepSums() {
    std::vector<double> sums(stepSums_.count());
    network_.backend().download(sums.data(), stepSums_.data(), stepSums_.bytes());
    clearStepSums();
    const int classes = network_.classes();
    double correct = 0;
    for (int c = 0; c < classes; ++c) correct += sums[std::size_t(MetricsGeometry::kConfusion + c * classes + c)];
    std::vector<double> shared{sums[MetricsGeometry::kLossSum], sums[MetricsGeometry::kLargestLoss],
                               sums[MetricsGeometry::kLatestLoss], correct, stop_ && stop_->load() ? 1.0 : 0.0};
    double ranks = 1;
    if (distributed()) {
        // A NaN on any rank makes the sum NaN, so every rank fails at the same read.
        communicator_->allReduceSumHost(shared);
        ranks = communicator_->world().size;
    }
    return {shared[0] / ranks, shared[1] / ranks, shared[2] / ranks, std::int64_t(std::llround(shared[3])),
            shared[4] > 0};
}

// Adds what the steps since the last read added into the epoch's progress, after the divergence
// guard: a loss that is not finite, or beyond the bound, in any of those steps stops the run.
void Trainer::foldStepSums(const StepSums& sums, int epoch, float learningRate) {
    const double bound = explodedLossBound(network_.classes(), config_.loss);
    if (!std::isfinite(sums.largestLoss) || sums.largestLoss > bound)
        throw divergenceError(sums.largestLoss, bound, network_.classes(), epoch + 1, stepSumsSince_ + 1,
                              progress_.step, learningRate, network_);
    progress_.epochLossSum += sums.lossSum;
    progress_.epochCorrect += sums.correct;
    stepSumsSince_ = progress_.step;
}

bool Trainer::hasFinalModel() const {
    return !folder_ || std::filesystem::exists(folder_->modelFolder() / RunFolder::kModelInfoFileName);
}

void Trainer::rememberBestWeights() { bestWeights_ = networkTensors(network_); }

nlohmann::json Trainer::secondsToTargetJson() const {
    return progress_.secondsToTarget < 0 ? nlohmann::json(nullptr) : nlohmann::json(progress_.secondsToTarget);
}

bool Trainer::checkpointDue(const Session& session) const {
    const CheckpointCadence& every = config_.checkpointEvery;
    if (every.steps > 0) return progress_.step - session.lastCheckpointStep >= every.steps;
    return every.minutes > 0 && secondsSince(session.lastCheckpoint) >= every.minutes * 60.0;
}

void Trainer::writeLatestCheckpoint(Session& session) {
    session.lastCheckpoint = Clock::now();
    session.lastCheckpointStep = progress_.step;
    if (!writesFiles()) return;
    progress_.wallSeconds = session.wallSeconds();
    progress_.schedule = schedule_->state();
    const auto folder = folder_->checkpointFolder("latest");
    saveCheckpoint(folder, network_, *optimizer_, progress_);
    emitCheckpointEvent("latest", folder);
}

// An epoch that improved ends with the best checkpoint equal to the latest one just written:
// linking its files instead of downloading, writing and syncing the same bytes again halves
// the epoch-end cost (about 0.1 s of a 0.6 s fer-cnn epoch on an H200).
void Trainer::copyLatestCheckpointToBest() {
    if (!writesFiles()) return;
    const auto folder = folder_->checkpointFolder("best");
    copyCheckpoint(folder_->checkpointFolder("latest"), folder);
    emitCheckpointEvent("best", folder);
}

void Trainer::emitCheckpointEvent(const std::string& kind, const std::filesystem::path& folder) {
    const int epoch = progress_.epochStep == 0 ? progress_.epoch : progress_.epoch + 1;
    events_.emit("checkpoint", {{"kind", kind}, {"path", folder.string()}, {"epoch", epoch},
                                {"step", progress_.step}});
}

TrainingResult Trainer::finish(const std::string& reason, BatchSource* test,
                               const RunDescription& description, const Session& session) {
    TrainingResult result;
    result.reason = reason;
    result.epochsRun = progress_.epoch;
    result.steps = progress_.step;
    result.bestValidationAccuracy = progress_.bestValidationAccuracy;
    result.bestEpoch = progress_.bestEpoch;

    nlohmann::json modelPath = nullptr;
    if (reason != "stopped") {
        // The final model is the one that validated best (the last one without validation).
        if (!bestWeights_.empty()) loadNetworkTensors(network_, bestWeights_, "best weights");
        if (test) result.test = evaluate(network_, *test, communicator_);
        if (writesFiles()) {
            ModelInfo info;
            info.classNames = description.dataset.classNames;
            info.normalization = description.normalization;
            info.trainedOn = {{"dataset", description.dataset.name}, {"seed", config_.seed}, {"epochs", progress_.epoch},
                              {"steps", progress_.step}, {"finished", utcTimestamp()}};
            if (progress_.bestEpoch > 0)
                info.trainedOn["validation_accuracy"] = progress_.bestValidationAccuracy;
            if (result.test) info.trainedOn["test_accuracy"] = result.test->accuracy();
            info.trainedOn["target_accuracy"] = config_.targetAccuracy;
            info.trainedOn["seconds_to_target"] = secondsToTargetJson();
            saveModel(folder_->modelFolder(), network_, info);
            modelPath = folder_->modelFolder().string();
        }
    }
    result.wallSeconds = session.wallSeconds();
    result.secondsToTarget = progress_.secondsToTarget;

    nlohmann::json finished = {
        {"reason", reason},
        {"epochs_run", result.epochsRun},
        {"best_validation_accuracy", progress_.bestEpoch > 0 ? nlohmann::json(progress_.bestValidationAccuracy)
                                                             : nlohmann::json(nullptr)},
        {"best_epoch", progress_.bestEpoch},
        {"test_accuracy", result.test ? nlohmann::json(result.test->accuracy()) : nlohmann::json(nullptr)},
        {"test_loss", result.test ? nlohmann::json(result.test->loss) : nlohmann::json(nullptr)},
        {"model_path", modelPath},
        {"target_accuracy", config_.targetAccuracy},
        {"seconds_to_target", secondsToTargetJson()},
        {"wall_time_s", result.wallSeconds}};
    if (result.test) {
        finished["test_confusion_matrix"] = result.test->confusion.toJson();
        finished["test_per_class"] = result.test->confusion.perClassJson(description.dataset.classNames);
    }
    events_.emit("finished", std::move(finished));
    return result;
}

TrainingResult Trainer::train(BatchSource& train, BatchSource* validation, BatchSource* test,
                              const RunDescription& description) {
    const int classes = network_.classes();
    if (int(description.dataset.classNames.size()) != classes)
        throw Error("the data set has " + std::to_string(description.dataset.classNames.size()) +
                    " classes, the network's output has " + std::to_string(classes), "trainer",
                    "set the output layer's units to the number of classes; cnnstudio-train and the app do that for you");
    if (!config_.loss.classWeights.empty() && int(config_.loss.classWeights.size()) != classes)
        throw Error(std::to_string(config_.loss.classWeights.size()) + " class weights for " +
                    std::to_string(classes) + " classes", "class-weights");
    if (config_.schedule.kind == "plateau" && !validation)
        throw Error("the plateau schedule needs a validation split", "schedule",
                    "choose another schedule or keep a validation split");
    if (config_.earlyStopPatience > 0 && !validation)
        throw Error("early stopping needs a validation split", "early-stop",
                    "turn early stopping off or keep a validation split");
    if (teachers_) teachers_->requireCompatible(description.dataset.classNames, description.normalization);

    Session session;
    session.stepsPerEpoch = train.batchesPerEpoch();
    if (session.stepsPerEpoch <= 0)
        throw Error("the training split (" + std::to_string(train.samples()) +
                    " images) is smaller than one batch of " + std::to_string(network_.batch()),
                    "trainer", "lower the batch size or use more training data");
    if (progress_.epochStep > session.stepsPerEpoch)
        throw Error("the checkpoint is at batch " + std::to_string(progress_.epochStep) + " of epoch " +
                    std::to_string(progress_.epoch + 1) + " but an epoch now has " +
                    std::to_string(session.stepsPerEpoch) + " batches", "resume",
                    "resume with the run's own data set, limit and batch size");
    // A checkpoint past the last epoch (a resume with fewer --epochs than it trained, or a damaged
    // progress.json) would be finalised as it is: its mid-epoch weights saved as the model and
    // summarised as the run's last epoch. Only "every epoch trained, none begun" may finish.
    const bool everyEpochTrained = progress_.epoch == config_.epochs && progress_.epochStep == 0;
    if (resumed_ && progress_.epoch >= config_.epochs && !everyEpochTrained)
        throw Error("the checkpoint is at batch " + std::to_string(progress_.epochStep) + " of epoch " +
                        std::to_string(progress_.epoch + 1) + " but the run has " + std::to_string(config_.epochs) +
                        " epoch(s)",
                    "resume",
                    "resume with --epochs " + std::to_string(progress_.epoch + 1) +
                        " or more; if the run never had that many, its progress.json is damaged");
    // A run killed after its last checkpoint but before model/ was written has trained every
    // epoch yet has no model: resuming it skips the epoch loop and only finishes (the final
    // evaluation and model/), so such a run can always be completed.
    if (resumed_ && progress_.epoch >= config_.epochs && hasFinalModel())
        throw Error("the run has finished its " + std::to_string(progress_.epoch) + " epochs already",
                    "resume", "pass a larger epoch count to train it further");
    session.wallAtStart = progress_.wallSeconds;

    schedule_ = std::make_unique<LearningRateSchedule>(config_.schedule, config_.optimizer.learningRate,
                                                       session.stepsPerEpoch, config_.epochs);
    if (resumed_ && !progress_.schedule.is_null()) {
        try {
            schedule_->restore(progress_.schedule);
        } catch (const nlohmann::json::exception& error) {
            throw Error(std::string("the saved schedule state is unreadable: ") + error.what(),
                        folder_->checkpointFolder("latest").string(), "the checkpoint is damaged");
        }
    }
    network_.setLossOptions(config_.loss);

    const DatasetDescription& dataset = description.dataset;
    events_.emit("run_started",
                 {{"run_dir", folder_ ? folder_->path().string() : std::string()},
                  {"config", description.config},
                  {"hardware", toJson(description.hardware)},
                  {"dataset", {{"name", dataset.name},
                               {"train_size", dataset.trainSize},
                               {"validation_size", dataset.validationSize},
                               {"test_size", dataset.testSize},
                               {"classes", dataset.classNames},
                               {"image", {dataset.channels, dataset.height, dataset.width}}}},
                  {"model", {{"name", network_.spec().name},
                             {"parameters", network_.shapes().totalParameters},
                             {"forward_flops", network_.shapes().totalForwardFlops}}},
                  {"backend", network_.backend().name()},
                  {"epochs", config_.epochs},
                  {"steps_per_epoch", session.stepsPerEpoch},
                  {"resumed_from_step", progress_.step},
                  {"ranks", communicator_ ? communicator_->world().size : description.ranks}});

    const int ranks = distributed() ? communicator_->world().size : 1;
    const int globalBatch = network_.batch() * ranks;
    session.lastLogStep = progress_.step;
    session.lastCheckpointStep = progress_.step;
    stepSumsSince_ = progress_.step;
    // With several ranks a stop is decided from the flags of all ranks when the step sums are
    // read (log points and epoch ends), so that every rank leaves at the same step; one rank
    // leaving alone would hang the others.
    bool stopNow = false;

    while (progress_.epoch < config_.epochs) {
        const int epoch = progress_.epoch;
        session.epochStart = Clock::now();
        session.epochSecondsAtStart = progress_.epochSeconds;
        if (progress_.epochStep < session.stepsPerEpoch) train.startEpoch(epoch, progress_.epochStep);

        while (progress_.epochStep < session.stepsPerEpoch) {
            if (!distributed()) stopNow = stop_ && stop_->load();
            if (stopNow) {
                if (progress_.step > stepSumsSince_)
                    foldStepSums(readStepSums(), epoch, schedule_->at(progress_.step - 1));
                progress_.epochSeconds = session.epochSeconds();
                writeLatestCheckpoint(session);
                return finish("stopped", test, description, session);
            }
            Batch batch;
            if (!train.next(batch))
                throw Error("the training data ended after " + std::to_string(progress_.epochStep) + " of " +
                            std::to_string(session.stepsPerEpoch) + " batches of epoch " +
                            std::to_string(epoch + 1), "trainer");
            uploadBatch(batch, "training");

            // The step adds its loss and predictions into stepSums_ on the backend; nothing is
            // read back until a log point or the epoch's end.
            const float learningRate = schedule_->at(progress_.step);
            step_->run(learningRate, std::uint32_t(progress_.step));
            progress_.epochSeen += globalBatch;
            ++progress_.step;
            ++progress_.epochStep;

            const bool logPoint = progress_.step % config_.logEvery == 0;
            if (!logPoint && progress_.epochStep < session.stepsPerEpoch) continue;
            const StepSums sums = readStepSums();
            foldStepSums(sums, epoch, learningRate);
            if (distributed()) stopNow = sums.stopRequested;
            if (logPoint) {
                const double windowSeconds = secondsSince(session.lastLog);
                const double images = double(progress_.step - session.lastLogStep) * globalBatch;
                events_.emit("step", {{"epoch", epoch + 1},
                                      {"step", progress_.step},
                                      {"epoch_step", progress_.epochStep},
                                      {"loss", float(sums.latestLoss)},
                                      {"learning_rate", learningRate},
                                      {"images_per_s", windowSeconds > 0 ? images / windowSeconds : 0.0},
                                      {"elapsed_s", session.wallSeconds()}});
                session.lastLog = Clock::now();
                session.lastLogStep = progress_.step;
            }
            // Within the epoch only: its end writes the checkpoint anyway. Checked at log points,
            // where the step sums have just been folded into the progress the checkpoint saves.
            // With several ranks only rank 0 writes, and nothing here waits for the others.
            if (progress_.epochStep < session.stepsPerEpoch && checkpointDue(session)) {
                progress_.epochSeconds = session.epochSeconds();
                writeLatestCheckpoint(session);
            }
        }

        const double trainSeconds = session.epochSeconds();
        const double trainLoss = progress_.epochLossSum / double(session.stepsPerEpoch);
        const double trainAccuracy =
            progress_.epochSeen == 0 ? 0.0 : double(progress_.epochCorrect) / double(progress_.epochSeen);
        const float learningRate = schedule_->at(progress_.step - 1);

        nlohmann::json epochEvent = {{"epoch", epoch + 1},
                                     {"step", progress_.step},
                                     {"train_loss", trainLoss},
                                     {"train_accuracy", trainAccuracy},
                                     {"learning_rate", learningRate}};
        // Batch-norm statistics were kept per rank (each on its own shard); the model carries
        // their mean, so every rank validates and saves the same network.
        if (distributed() && network_.stateCount() > 0)
            communicator_->allReduceMean(network_.state(), network_.stateCount());
        bool improved = false;
        if (validation) {
            const EvaluationResult result = evaluate(network_, *validation, communicator_);
            schedule_->endEpoch(result.loss);
            improved = result.accuracy() > progress_.bestValidationAccuracy;
            if (improved) {
                progress_.bestValidationAccuracy = result.accuracy();
                progress_.bestEpoch = epoch + 1;
                progress_.epochsWithoutImprovement = 0;
                rememberBestWeights();
            } else {
                ++progress_.epochsWithoutImprovement;
            }
            if (progress_.secondsToTarget < 0 && result.accuracy() >= config_.targetAccuracy)
                progress_.secondsToTarget = session.wallSeconds();
            epochEvent["validation_loss"] = result.loss;
            epochEvent["validation_accuracy"] = result.accuracy();
            epochEvent["confusion_matrix"] = result.confusion.toJson();
            epochEvent["per_class"] = result.confusion.perClassJson(dataset.classNames);
        } else {
            epochEvent["validation_loss"] = nullptr;
            epochEvent["validation_accuracy"] = nullptr;
        }

        const double epochSeconds = session.epochSeconds();
        session.completedEpochSeconds += epochSeconds;
        ++session.completedEpochs;
        progress_.epoch = epoch + 1;
        progress_.epochStep = 0;
        progress_.epochLossSum = 0;
        progress_.epochCorrect = 0;
        progress_.epochSeen = 0;
        progress_.epochSeconds = 0;

        epochEvent["epoch_time_s"] = epochSeconds;
        epochEvent["eta_s"] = session.completedEpochSeconds / session.completedEpochs *
                              double(config_.epochs - progress_.epoch);
        epochEvent["images_per_s"] =
            trainSeconds > 0 ? double(session.stepsPerEpoch * globalBatch) / trainSeconds : 0.0;
        epochEvent["best"] = improved;
        epochEvent["seconds_to_target"] = secondsToTargetJson();
        events_.emit("epoch", std::move(epochEvent));

        writeLatestCheckpoint(session);
        if (improved) copyLatestCheckpointToBest();
        if (config_.earlyStopPatience > 0 && progress_.epochsWithoutImprovement >= config_.earlyStopPatience &&
            progress_.epoch < config_.epochs)
            return finish("early_stopped", test, description, session);
    }
    return finish("completed", test, description, session);
}

}  // namespace cnnstudio
