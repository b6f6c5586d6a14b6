#include "train/model_card.h"

#include <cstdarg>
#include <filesystem>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"
#include "cnnstudio/run_folder.h"

namespace cnnstudio::app {

namespace {

std::string format(const char* pattern, ...) {
    char text[512];
    va_list arguments;
    va_start(arguments, pattern);
    std::vsnprintf(text, sizeof text, pattern, arguments);
    va_end(arguments);
    return text;
}

std::string percent(double fraction) { return format("%.2f%%", 100.0 * fraction); }

std::string confusionTable(const ConfusionMatrixCounts& matrix, const std::vector<std::string>& classes) {
    std::string text = "| true \\ predicted |";
    for (const std::string& name : classes) text += " " + name + " |";
    text += "\n|---|";
    for (std::size_t c = 0; c < classes.size(); ++c) text += "---:|";
    text += "\n";
    for (std::size_t t = 0; t < matrix.size(); ++t) {
        text.append("| ").append(t < classes.size() ? classes[t] : std::to_string(t)).append(" |");
        for (long long count : matrix[t]) text.append(" ").append(std::to_string(count)).append(" |");
        text += "\n";
    }
    return text;
}

std::string perClassTable(const std::vector<NamedClassMetrics>& rows) {
    std::string text = "| class | precision | recall | F1 | images |\n|---|---:|---:|---:|---:|\n";
    for (const NamedClassMetrics& row : rows)
        text += format("| %s | %.3f | %.3f | %.3f | %lld |\n", row.className.c_str(), row.metrics.precision,
                       row.metrics.recall, row.metrics.f1, static_cast<long long>(row.metrics.support));
    return text;
}

// What every FER2013 model card must say, whatever the scores (Goodfellow et al. 2013; Barsoum
// et al. 2016, FER+; the data set's own README).
constexpr const char* kFer2013Caveats = R"(## FER2013: known biases and label noise

- **Label noise.** FER2013's labels came from one annotator per image, after a Google image search
  by emotion keywords. The FER+ relabelling (Barsoum et al. 2016, ten annotators per image) disagrees
  with about a quarter of them, and human accuracy on FER2013 is estimated at 65 ± 5%. Accuracy far
  above that measures agreement with noisy labels, not with people's judgement.
- **Class imbalance.** Happy has about 25% of the training images and Disgust under 2% (436 of 28,709);
  per-class recall above shows how much less reliable the rare classes are.
- **Who is in it.** Faces found by web search: mostly adults, skewed to lighter skin and to posed,
  frontal expressions; children, older people, darker skin, profiles and spontaneous expressions are
  under-represented, and the model is less reliable on them. No demographic labels exist to measure it.
- **What it reads.** A 48×48 grey crop of one centred face. It sees facial configuration, not
  emotion: an expression is not a feeling, and the same face means different things across cultures
  and contexts. Do not use the model to make decisions about people (hiring, policing, health,
  education, access); it is for demonstrations and research on training CNNs.
)";

// "- Distilled from 2 teachers (`a`, `b`): ..." for a run's trainer.distillation record.
std::string distillationLine(const nlohmann::json& distillation) {
    const auto teachers = distillation.value("teachers", std::vector<std::string>{});
    std::string names;
    for (const std::string& teacher : teachers)
        names += (names.empty() ? "`" : ", `") + std::filesystem::path(teacher).filename().string() + "`";
    return format("- Distilled from %zu teacher%s (%s): %g of the loss learns the mean of their probabilities at "
                  "temperature %g, the rest the labels\n",
                  teachers.size(), teachers.size() == 1 ? "" : "s", names.c_str(), distillation.value("weight", 0.0),
                  distillation.value("temperature", 1.0));
}

}  // namespace

std::string modelCardText(const EventLog& log, const std::string& runName, std::optional<double> ttaAccuracy) {
    const RunStartedEvent* started = nullptr;
    const FinishedEvent* finished = nullptr;
    for (const Event& event : log.events) {
        if (const auto* s = event.as<RunStartedEvent>(); s && !started) started = s;
        if (const auto* f = event.as<FinishedEvent>()) finished = f;
    }
    if (!started || !finished || finished->reason == "stopped" || !finished->modelPath)
        throw Error("the run has not finished with a model", runName,
                    "finish it (continue a stopped run with --resume) before writing its card");
    const EpochEvent* bestEpoch = nullptr;
    for (const Event& event : log.events)
        if (const auto* e = event.as<EpochEvent>(); e && e->epoch == finished->bestEpoch) bestEpoch = e;

    const nlohmann::json& config = started->config;
    const nlohmann::json trainer = config.value("trainer", nlohmann::json::object());
    const nlohmann::json optimizer = trainer.value("optimizer", nlohmann::json::object());
    const nlohmann::json schedule = trainer.value("schedule", nlohmann::json::object());
    const std::string recipe = config.value("recipe", "");
    const std::vector<std::string>& classes = started->dataset.classes;

    std::string card = "# Model card: " + started->model.name + "\n\n";
    card += format("A %s network (%lld parameters, %.1f MFLOPs per image) that classifies a face image into %zu classes",
                   started->model.name.c_str(), started->model.parameters, double(started->model.forwardFlops) / 1e6,
                   classes.size());
    card += ": ";
    for (std::size_t c = 0; c < classes.size(); ++c) card += (c ? ", " : "") + classes[c];
    card += ".\nWritten by `cnnstudio-train card` from run `" + runName + "`.\n\n";

    card += "## Training\n\n";
    card += "- Data: `" + started->dataset.name + "`: " + std::to_string(started->dataset.trainSize) +
            " training images; selected on the validation split (" + std::to_string(started->dataset.validationSize) +
            " images; for FER2013, PublicTest)" +
            (started->dataset.testSize > 0 ? ", scored once on the test split (" + std::to_string(started->dataset.testSize) + " images)" : "") +
            ".\n";
    card += "- Recipe: " + (recipe.empty() ? std::string("none (options given one by one)") : "`" + recipe + "`") + "\n";
    card += format("- %d epochs (best at epoch %d), batch %d, %s on %s (%s), %.0f s of training\n", finished->epochsRun,
                   finished->bestEpoch, config.value("batch", 0), optimizer.value("kind", "?").c_str(),
                   started->backend.c_str(), config.value("precision", "?").c_str(), finished->wallSeconds);
    card += format("- Optimiser: learning rate %g, momentum %g%s, weight decay %g; schedule %s; label smoothing %g; "
                   "augmentation %s; seed %llu\n",
                   optimizer.value("learning_rate", 0.0), optimizer.value("momentum", 0.0),
                   optimizer.value("nesterov", false) ? " (Nesterov)" : "", optimizer.value("weight_decay", 0.0),
                   schedule.value("kind", "?").c_str(), trainer.value("label_smoothing", 0.0),
                   config.value("augment", "none").c_str(), static_cast<unsigned long long>(trainer.value("seed", 0ULL)));
    if (const nlohmann::json distillation = trainer.value("distillation", nlohmann::json()); distillation.is_object())
        card += distillationLine(distillation);
    if (finished->targetAccuracy)
        card += "- " + percent(*finished->targetAccuracy) + " validation accuracy " +
                (finished->secondsToTarget ? format("first reached after %.1f s of training", *finished->secondsToTarget)
                                           : std::string("never reached")) + "\n";
    card += "\n## Accuracy\n\n| split | without test-time augmentation | with flip test-time augmentation |\n|---|---:|---:|\n";
    if (finished->bestValidationAccuracy)
        card += "| validation (selection) | " + percent(*finished->bestValidationAccuracy) + " | " +
                (ttaAccuracy ? percent(*ttaAccuracy) : std::string("not measured")) + " |\n";
    if (finished->testAccuracy) card += "| test | " + percent(*finished->testAccuracy) + " | not measured |\n";
    card += "\nThe flip figure comes from `cnnstudio-train evaluate RUN_DIR --split validation --tta flip`.\n\n";

    if (bestEpoch && !bestEpoch->confusionMatrix.empty()) {
        card += format("## Validation split, epoch %d\n\nConfusion matrix (rows: true class, columns: predicted):\n\n",
                       bestEpoch->epoch);
        card += confusionTable(bestEpoch->confusionMatrix, classes) + "\nPer class:\n\n" + perClassTable(bestEpoch->perClass) + "\n";
    }
    if (!finished->testConfusionMatrix.empty()) {
        card += "## Test split\n\nConfusion matrix (rows: true class, columns: predicted):\n\n";
        card += confusionTable(finished->testConfusionMatrix, classes) + "\nPer class:\n\n" +
                perClassTable(finished->testPerClass) + "\n";
    }
    if (started->dataset.name.rfind("fer2013", 0) == 0) card += kFer2013Caveats;
    return card;
}

void writeModelCard(const std::filesystem::path& runDir, std::optional<double> ttaAccuracy, std::FILE* out) {
    const std::filesystem::path events = runDir / RunFolder::kEventsFileName;
    if (!std::filesystem::exists(events))
        throw Error("no events.jsonl: not a run folder", runDir.string(), "pass the folder of a finished run");
    const std::string text = modelCardText(readEvents(events), runDir.filename().string(), ttaAccuracy);
    const std::filesystem::path card = runDir / RunFolder::kModelFolderName / "MODEL_CARD.md";
    writeFileAtomically(card, text);
    std::fprintf(out, "wrote %s\n", card.string().c_str());
}

}  // namespace cnnstudio::app
