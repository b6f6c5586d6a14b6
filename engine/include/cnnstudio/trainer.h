// The trainer: epochs of TrainingSteps over batches from a BatchSource, validation after every
// epoch, early stopping, the best weights kept, checkpoints and the event stream, and resuming
// a run exactly where it stopped. The engine knows nothing of data sets: it pulls ready batches
// through BatchSource, which the app implements on top of the datasets library.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cnnstudio/backend_buffer.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/distillation.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/events.h"
#include "cnnstudio/hardware.h"
#include "cnnstudio/metrics.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/spec.h"

namespace cnnstudio {

// A batch ready for the network: `count` images, each (C, H, W) float32 already normalised,
// back to back, and their labels. A training batch may carry its device augmentation: one
// ImageAugmentation per image, which the trainer applies on the backend after the upload
// (Backend::augmentImages), and, when images are mixed (mixup, cutmix), each image's second label
// and the weight of its first (Backend's LabelMix). Evaluation batches are never augmented.
struct Batch {
    std::vector<float> images;
    std::vector<std::int32_t> labels;
    int count = 0;
    std::vector<ImageAugmentation> augmentations;  // empty, or count
    std::vector<std::int32_t> secondLabels;        // empty, or count (with labelWeights)
    std::vector<float> labelWeights;
};

class BatchSource {
public:
    virtual ~BatchSource() = default;

    virtual std::int64_t samples() const = 0;
    // Training sources leave out a last partial batch, so every step sees a full batch;
    // evaluation sources yield it (with fewer images than the batch size).
    virtual std::int64_t batchesPerEpoch() const = 0;
    // Positions the source at batch `firstBatch` of epoch `epoch` (0-based). What a batch holds
    // (sample order, augmentation) must depend only on the seed the source was made with, the
    // epoch and the batch index: that is what lets a resumed run see exactly the batches an
    // uninterrupted one would have seen.
    virtual void startEpoch(int epoch, std::int64_t firstBatch) = 0;
    // The next batch of the epoch; false when the epoch is over.
    virtual bool next(Batch& batch) = 0;
};

// How often the trainer writes checkpoints/latest within an epoch, besides at every epoch's end
// and on a stop: a run killed with kill -9 or a power cut loses at most this much training.
// Text form "200steps" or "5min" (whole or decimal minutes) on the command line and in config.json.
struct CheckpointCadence {
    std::int64_t steps = 0;  // every N optimiser steps; 0: not by steps
    double minutes = 5;      // every N minutes of training; 0: not by time
    std::string toString() const;
    // Throws Error naming `where` for anything but "<N>steps" or "<N>min" with N > 0.
    static CheckpointCadence parse(const std::string& text, const std::string& where);
};

struct TrainerConfig {
    int epochs = 10;
    OptimizerConfig optimizer;
    ScheduleConfig schedule;
    LossOptions loss;
    DistillationConfig distillation;  // teachers whose probabilities the network also learns
    int earlyStopPatience = 0;  // epochs without a better validation accuracy; 0: never stop early
    int logEvery = 50;          // a `step` event every this many steps
    // The validation accuracy whose first reaching is timed (`seconds_to_target` in the epoch
    // and finished events); in (0, 1].
    double targetAccuracy = 0.66;
    std::uint64_t seed = 42;    // the network and the sources are built from it; kept for resume
    CheckpointCadence checkpointEvery;

    void validate() const;  // throws Error naming the bad setting
    nlohmann::json toJson() const;
    static TrainerConfig fromJson(const nlohmann::json& json);
};

struct DatasetDescription {
    std::string name;
    std::vector<std::string> classNames;
    int channels = 1, height = 1, width = 1;
    std::int64_t trainSize = 0, validationSize = 0, testSize = 0;
};

// What the `run_started` event and the model folder say about the run.
struct RunDescription {
    nlohmann::json config = nlohmann::json::object();  // as config.json
    DatasetDescription dataset;
    InputNormalization normalization;
    int ranks = 1;
    HardwareInfo hardware;  // what the run trained on, as the application discovered it
};

struct EvaluationResult {
    double loss = 0;  // mean cross-entropy (unweighted, unsmoothed) over the real images
    ConfusionMatrix confusion;
    double accuracy() const { return confusion.accuracy(); }
};

// Test-time augmentation: evaluation averages each image's softmax probabilities over views of
// it and predicts the class of the highest average.
//   none     the image alone (1 view)
//   flip     the image and its left-right mirror (2 views)
//   tencrop  the five windows of the image's size in the image padded by `padding` pixels of
//            `fill` on every side: the four corners (top-left offsets (0,0), (0,2p), (2p,0),
//            (2p,2p)) and the centre (p,p), which is the image itself; each also mirrored
//            (10 views). They are the extremes and the centre of what random crop=p,flip
//            training shows the network, and keep the image's size, so nothing is resized.
struct TestTimeAugmentation {
    std::string kind = "none";  // "none" | "flip" | "tencrop"
    int padding = 4;            // tencrop
    std::vector<float> fill;    // tencrop, per channel: a black pixel after normalisation; empty: 0

    int views() const;          // 1, 2 or 10; throws Error for an unknown kind
};

// View `view` (0 .. tta.views() - 1) of `count` images of `shape` (batch ignored; NCHW floats)
// from `images` into `out` (the same size). View 0 is the image itself; for tencrop views 0-4
// are centre, top-left, top-right, bottom-left, bottom-right and views 5-9 their mirrors.
void makeTestTimeView(const TestTimeAugmentation& tta, int view, std::span<const float> images, int count,
                      const TensorShape& shape, std::span<float> out);

// Inference over a whole source at the network's batch size: the last partial batch is padded
// and only its real images are counted. With a communicator of several ranks each rank
// evaluates its own shard (a batch may be empty on some ranks) and the confusion matrix and
// loss sum are added up across ranks, so every rank gets the single-process result. With test-
// time augmentation the loss is the mean of -log(averaged probability of the true class).
EvaluationResult evaluate(Network& network, BatchSource& source, Communicator* communicator = nullptr,
                          const TestTimeAugmentation& tta = {});
// The same for an ensemble: each image's probabilities averaged over the networks (and the views
// of `tta`). The networks must share their batch size, input shape and class count (Error says
// which differs); the source's images are normalised once, for all of them.
EvaluationResult evaluate(const std::vector<Network*>& ensemble, BatchSource& source,
                          Communicator* communicator = nullptr, const TestTimeAugmentation& tta = {});

struct TrainingResult {
    std::string reason;            // "completed" | "early_stopped" | "stopped"
    int epochsRun = 0;             // completed epochs, counting earlier sessions
    std::int64_t steps = 0;
    double bestValidationAccuracy = -1;  // -1: no validation split
    int bestEpoch = 0;
    std::optional<EvaluationResult> test;  // on the final model; none when stopped
    double wallSeconds = 0;
    double secondsToTarget = -1;   // training time when validation first reached the target; -1: never
};

// Data parallel when given a communicator of several ranks: every rank runs a Trainer on its
// own shard (the sources shard by rank), gradients are averaged every step, the parameters
// start from rank 0's, batch-norm running statistics are averaged at every epoch end, metrics
// are summed across ranks, a stop is agreed by all ranks at the same step, and only rank 0
// writes checkpoints and the model (events: give the other ranks a non-writing EventWriter).
class Trainer {
public:
    // The trainer makes the optimiser and the TrainingStep for `network`. `communicator` (not
    // owned, may be null for one process) must outlive the trainer.
    Trainer(Network& network, const TrainerConfig& config, EventWriter& events,
            Communicator* communicator = nullptr);
    ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    // Checkpoints go to folder.checkpointFolder(...), the final model to folder.modelFolder().
    // Without a folder nothing but events is written (and resume() is unavailable).
    void setRunFolder(const RunFolder* folder);
    // Checked before every step: when it reads true the trainer writes the latest checkpoint and
    // returns with reason "stopped". Written by a signal handler, hence an atomic. With several
    // ranks the flags are summed across ranks every step, so all ranks stop at the same step.
    void setStopFlag(const std::atomic<bool>* stop);
    // Loads checkpoints/latest (weights, optimiser state, progress) and the best weights.
    void resume();

    // Trains until the configured epochs are done, early stopping triggers or the stop flag is
    // raised. Throws Error on a non-finite loss ("loss became NaN at epoch 3 step 1200") and on
    // a source that misbehaves.
    TrainingResult train(BatchSource& train, BatchSource* validation, BatchSource* test,
                         const RunDescription& description);

    // Where training stands (for a `failed` event after an Error).
    const TrainingProgress& progress() const { return progress_; }
    int currentEpoch() const { return std::min(progress_.epoch + 1, config_.epochs); }  // 1-based
    Optimizer& optimizer() { return *optimizer_; }

private:
    struct Session;
    struct StepSums;
    void uploadBatch(const Batch& batch, const char* split);
    void augmentOnDevice(const Batch& batch);
    StepSums readStepSums();
    void clearStepSums();
    void foldStepSums(const StepSums& sums, int epoch, float learningRate);
    void writeLatestCheckpoint(Session& session);
    void copyLatestCheckpointToBest();
    void emitCheckpointEvent(const std::string& kind, const std::filesystem::path& folder);
    // Whether the cadence asks for a checkpoint now, in the middle of an epoch.
    bool checkpointDue(const Session& session) const;
    void rememberBestWeights();
    nlohmann::json secondsToTargetJson() const;  // null until the target accuracy is reached
    bool distributed() const { return communicator_ && communicator_->world().size > 1; }
    // Whether the run folder holds the finished run's model/ (true without a folder: nothing to write).
    bool hasFinalModel() const;
    bool writesFiles() const { return folder_ && (!communicator_ || communicator_->world().rank == 0); }
    void broadcastParameters();
    TrainingResult finish(const std::string& reason, BatchSource* test, const RunDescription& description,
                          const Session& session);

    Network& network_;
    TrainerConfig config_;
    EventWriter& events_;
    Communicator* communicator_;
    std::unique_ptr<GradientSync> gradientSync_;
    std::unique_ptr<Optimizer> optimizer_;
    // What the training steps add on the backend (Network::accumulateMetrics) since the last
    // read: read at log points, epoch ends and stops, never per step.
    BackendBuffer<double> stepSums_;
    std::int64_t stepSumsSince_ = 0;  // the last step already folded into progress_
    std::unique_ptr<TrainingStep> step_;
    std::unique_ptr<TeacherEnsemble> teachers_;  // with distillation
    std::unique_ptr<LearningRateSchedule> schedule_;
    const RunFolder* folder_ = nullptr;
    const std::atomic<bool>* stop_ = nullptr;
    TrainingProgress progress_;
    bool resumed_ = false;
    std::vector<NamedTensor> bestWeights_;  // host copy; empty until a validation improves
    BackendBuffer<ImageAugmentation> augmentations_;  // the batch's, on the backend; made on first use
};

// Fits a spec to a data set: the Input node takes the images' channels, height and width, and
// the output layer as many units as there are classes. The output layer is found by walking
// back from the network's output through Flatten, GlobalAvgPool, activations, Dropout and
// batch normalisation to the first Dense (its `units`) or Conv2D (its `filters`, as in
// mini-xception). Throws Error naming the node when that walk ends anywhere else.
struct SpecAdaptation {
    NetworkSpec spec;
    std::vector<std::string> changes;  // "node 'input': channels 3 -> 1", empty when none
};
SpecAdaptation adaptSpecToDataset(const NetworkSpec& spec, int channels, int height, int width,
                                  int classes);

}  // namespace cnnstudio
