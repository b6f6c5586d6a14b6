// The one reader of the worker's event stream (schema version 1, docs/architecture.md, "Events"),
// for the dashboard, the run history and the CLI: typed events, one struct per event name, the
// JSON's snake_case names turned into fields. Events of another schema version or of an unknown
// name are skipped, unknown fields ignored, a missing or mistyped field left at its default: a
// reader of a damaged log shows what it can. EventWriter (events.h) writes the stream; this header
// is apart from it because Qt code, which defines `emit` as a macro, reads events too.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cnnstudio/metrics.h"

namespace cnnstudio {

using ConfusionMatrixCounts = std::vector<std::vector<long long>>;  // rows = true class, columns = predicted

// One row of the events' `per_class` tables.
struct NamedClassMetrics {
    std::string className;
    ClassMetrics metrics;
};

struct RunStartedEvent {
    struct Dataset {
        std::string name;
        long long trainSize = 0, validationSize = 0, testSize = 0;
        std::vector<std::string> classes;
        std::vector<int> image;  // channels, height, width
    };
    struct Model {
        std::string name;
        long long parameters = 0;
        long long forwardFlops = 0;  // per image
    };
    std::string runDir;
    nlohmann::json config = nlohmann::json::object();    // as config.json
    nlohmann::json hardware = nlohmann::json::object();  // as toJson(HardwareInfo)
    Dataset dataset;
    Model model;
    std::string backend;
    int epochs = 0;
    long long stepsPerEpoch = 0, resumedFromStep = 0;
    int ranks = 1;
};

struct StepEvent {
    int epoch = 0;
    long long step = 0, epochStep = 0;
    double loss = 0, learningRate = 0, imagesPerSecond = 0, elapsedSeconds = 0;
};

struct EpochEvent {
    int epoch = 0;
    long long step = 0;
    double trainLoss = 0, trainAccuracy = 0;
    std::optional<double> validationLoss, validationAccuracy;  // none without a validation split
    double learningRate = 0, epochSeconds = 0;
    double etaSeconds = -1;  // -1 when the log does not say
    double imagesPerSecond = 0;
    bool best = false;
    ConfusionMatrixCounts confusionMatrix;  // empty without a validation split
    std::vector<NamedClassMetrics> perClass;
};

struct CheckpointEvent {
    std::string kind;  // "latest" | "best"
    std::string path;
    int epoch = 0;
    long long step = 0;
};

struct FinishedEvent {
    std::string reason;  // "completed" | "early_stopped" | "stopped"
    int epochsRun = 0;
    std::optional<double> bestValidationAccuracy;
    int bestEpoch = 0;
    std::optional<double> testAccuracy, testLoss;
    std::optional<std::string> modelPath;  // none after a stop
    double wallSeconds = 0;
    std::optional<double> targetAccuracy;   // the validation accuracy timed (none before it was recorded)
    std::optional<double> secondsToTarget;  // training time when first reached; none: never
    ConfusionMatrixCounts testConfusionMatrix;  // empty without a test result
    std::vector<NamedClassMetrics> testPerClass;
};

struct FailedEvent {
    std::string reason, where;
    long long step = 0;
    int epoch = 0;
    bool killedByUser = false;  // the app's Kill ended the worker: no error; resumable like any failure
};

struct Event {
    std::string time;  // as written: UTC, ISO 8601 with milliseconds; empty when missing
    std::variant<RunStartedEvent, StepEvent, EpochEvent, CheckpointEvent, FinishedEvent, FailedEvent> body;

    template <typename Body>
    const Body* as() const { return std::get_if<Body>(&body); }
};

// The JSON object on one line of an event stream (a run's events.jsonl or the worker's standard
// output); nullopt when the line holds no event: a line cut short by a crash, or other output.
std::optional<nlohmann::json> parseEventLine(std::string_view line);
// The typed event; nullopt for one this reader does not know (another schema, an unknown name).
std::optional<Event> parseEvent(const nlohmann::json& object);

struct EventLog {
    std::vector<Event> events;  // in file order, the ones this reader knows
    int malformedLines = 0;     // non-empty lines that held no event
};
// Reads a whole events.jsonl. Throws Error naming the file when it cannot be opened; a
// malformed line is counted, not fatal.
EventLog readEvents(const std::filesystem::path& file);

}  // namespace cnnstudio
