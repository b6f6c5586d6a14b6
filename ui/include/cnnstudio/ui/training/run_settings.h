// RunSettings: everything the user chooses for one training run, and the argument list of the
// headless worker (`cnnstudio-train`) that carries it out. No widgets: RunSettingsPanel edits one,
// TrainingController launches one, and the tests check the arguments directly.
#pragma once

#include <optional>

#include <QList>
#include <QString>
#include <QStringList>
#include <QVariantMap>

namespace cnnstudio::ui {

struct RunSettings {
    QString backend = "cpu";      // cpu | cpu-ref | cuda | cudnn
    QString precision = "fp32";   // fp32 | tf32 | bf16 (GPU backends only)
    int gpuCount = 1;             // ranks per node on GPU backends
    QList<int> gpuIndices;        // which GPUs (CUDA_VISIBLE_DEVICES); empty: the first gpuCount
    int nodeCount = 1;
    QString hostfileText;         // OpenMPI hostfile, needed when nodeCount > 1
    QString dataset = "fashion-mnist";  // fashion-mnist | fer2013:PATH | idx:DIR | folder:DIR
    int batchSize = 64;
    int epochs = 10;
    QString optimizer = "adam";   // sgd | adam | adamw
    double learningRate = 1e-3;
    QString schedule = "cosine";  // constant | step | cosine | plateau
    QString augmentation = "none";
    int threads = 0;              // CPU threads per rank; 0: every core
    int cpuRankCount = 1;         // data-parallel ranks per node on the CPU backends (MPI)
    int seed = 42;
    int limit = 0;                // training images used; 0: all
    // The rest as the worker's own defaults (cnnstudio-train --help), except logEvery.
    double momentum = 0.9;        // SGD only
    double weightDecay = 0.0;     // L2 for sgd and adam, decoupled for adamw
    int warmupEpochs = 0;         // linear warm-up from lr/100
    double labelSmoothing = 0.0;
    QString classWeights = "none";  // none | balanced
    int earlyStopPatience = 0;    // epochs without a better validation accuracy; 0: off
    bool scaleLearningRate = false;  // multiply by the rank count, with a warm-up
    bool skipBad = false;         // skip malformed rows and unreadable images
    // Distillation: trained models (installed names, model or run folders) whose probabilities
    // the network also learns; none: plain training.
    QStringList teachers;
    double distillWeight = 0.5;       // the share of the loss that learns the teachers
    double distillTemperature = 1.0;  // the teachers' probabilities are softmax(logits / T)
    // The worker's default is 50; the dashboard wants points from the first steps of short runs.
    int logEvery = 10;
    // The Train page's predicted run time (RunTimeEstimate), passed to the worker to record in
    // config.json; computed afresh before each run, never saved with the settings.
    struct Prediction {
        double epochSeconds = 0, totalSeconds = 0;
        QString basis;
        bool operator==(const Prediction&) const = default;
    };
    std::optional<Prediction> prediction;

    bool usesGpu() const { return backend == "cuda" || backend == "cudnn"; }
    int ranksPerNode() const { return usesGpu() ? gpuCount : cpuRankCount; }
    // One message per problem, each saying what to change; empty when the run can start.
    QStringList problems() const;
    // The worker's arguments (no program name), for `--events -` on standard output.
    // hostfilePath: where hostfileText was written (used only when nodeCount > 1).
    QStringList workerArguments(const QString& specFile, const QString& runDir,
                                const QString& hostfilePath = {}) const;
    // The value of CUDA_VISIBLE_DEVICES for the chosen GPUs; empty when none were picked.
    QString visibleDevices() const;

    QVariantMap toVariantMap() const;  // for QSettings
    static RunSettings fromVariantMap(const QVariantMap& map);
    bool operator==(const RunSettings&) const = default;
};

// The precisions `backend` trains in, for messages: "fp32 or bf16".
QString trainedPrecisionsText(const QString& backend);

// Problems of an OpenMPI hostfile for `nodes` nodes of `ranksPerNode` ranks: lines that are not
// "host" or "host slots=N" (comments with #), too few hosts, too few slots. Each message names
// its line ("line 3: ...").
QStringList hostfileProblems(const QString& text, int nodes, int ranksPerNode);

}  // namespace cnnstudio::ui
