#include "cnnstudio/event_reader.h"

#include <cmath>
#include <fstream>
#include <utility>

#include "cnnstudio/error.h"
#include "cnnstudio/events.h"
#include "cnnstudio/json_text.h"

namespace cnnstudio {

// Every field goes through one of these: present and of the right type, else the
// default, so a reader of an older or damaged log shows what it can instead of throwing.
namespace {

using nlohmann::json;

const json& member(const json& object, const char* key) {
    static const json absent;
    const auto found = object.find(key);
    return found == object.end() ? absent : *found;
}

double number(const json& object, const char* key, double fallback = 0) {
    const json& value = member(object, key);
    return value.is_number() ? value.get<double>() : fallback;
}

// A count written as a whole number; anything else (a fraction, a float or unsigned value past
// long long, which get<long long>() would cast with undefined behaviour) is mistyped.
long long wholeNumber(const json& value, long long fallback) {
    if (value.is_number_unsigned())
        return std::in_range<long long>(value.get<std::uint64_t>()) ? value.get<long long>() : fallback;
    if (value.is_number_integer()) return value.get<long long>();
    if (!value.is_number_float()) return fallback;
    const double number = value.get<double>();
    // 2^63 is exactly representable; every double below it converts without overflow.
    const bool whole = std::trunc(number) == number && number >= -0x1p63 && number < 0x1p63;
    return whole ? static_cast<long long>(number) : fallback;
}

long long integer(const json& object, const char* key, long long fallback = 0) {
    return wholeNumber(member(object, key), fallback);
}

std::optional<double> optionalNumber(const json& object, const char* key) {
    const json& value = member(object, key);
    if (!value.is_number()) return std::nullopt;
    return value.get<double>();
}

std::string text(const json& object, const char* key) {
    const json& value = member(object, key);
    return value.is_string() ? value.get<std::string>() : std::string();
}

bool flag(const json& object, const char* key) {
    const json& value = member(object, key);
    return value.is_boolean() && value.get<bool>();
}

json objectOrEmpty(const json& object, const char* key) {
    const json& value = member(object, key);
    return value.is_object() ? value : json::object();
}

std::vector<std::string> texts(const json& array) {
    std::vector<std::string> values;
    if (array.is_array())
        for (const json& value : array) values.push_back(value.is_string() ? value.get<std::string>() : std::string());
    return values;
}

ConfusionMatrixCounts confusionMatrix(const json& object, const char* key) {
    ConfusionMatrixCounts rows;
    const json& array = member(object, key);
    if (!array.is_array()) return rows;
    for (const json& row : array) {
        std::vector<long long> cells;
        if (row.is_array())
            for (const json& cell : row) cells.push_back(wholeNumber(cell, 0));
        rows.push_back(std::move(cells));
    }
    return rows;
}

std::vector<NamedClassMetrics> perClass(const json& object, const char* key) {
    std::vector<NamedClassMetrics> metrics;
    const json& array = member(object, key);
    if (!array.is_array()) return metrics;
    for (const json& entry : array) {
        NamedClassMetrics one;
        one.className = text(entry, "class");
        one.metrics.precision = number(entry, "precision");
        one.metrics.recall = number(entry, "recall");
        one.metrics.f1 = number(entry, "f1");  // absent before F1 was reported: 0
        one.metrics.support = integer(entry, "support");
        metrics.push_back(std::move(one));
    }
    return metrics;
}

RunStartedEvent parseRunStarted(const json& object) {
    RunStartedEvent event;
    event.runDir = text(object, "run_dir");
    event.config = objectOrEmpty(object, "config");
    event.hardware = objectOrEmpty(object, "hardware");
    const json& dataset = member(object, "dataset");
    event.dataset.name = text(dataset, "name");
    event.dataset.trainSize = integer(dataset, "train_size");
    event.dataset.validationSize = integer(dataset, "validation_size");
    event.dataset.testSize = integer(dataset, "test_size");
    event.dataset.classes = texts(member(dataset, "classes"));
    if (const json& image = member(dataset, "image"); image.is_array())
        for (const json& extent : image) {
            const long long value = wholeNumber(extent, 0);
            event.dataset.image.push_back(std::in_range<int>(value) ? int(value) : 0);
        }
    const json& model = member(object, "model");
    event.model.name = text(model, "name");
    event.model.parameters = integer(model, "parameters");
    event.model.forwardFlops = integer(model, "forward_flops");
    event.backend = text(object, "backend");
    event.epochs = int(integer(object, "epochs"));
    event.stepsPerEpoch = integer(object, "steps_per_epoch");
    event.resumedFromStep = integer(object, "resumed_from_step");
    event.ranks = int(integer(object, "ranks", 1));
    return event;
}

StepEvent parseStep(const json& object) {
    StepEvent event;
    event.epoch = int(integer(object, "epoch"));
    event.step = integer(object, "step");
    event.epochStep = integer(object, "epoch_step");
    event.loss = number(object, "loss");
    event.learningRate = number(object, "learning_rate");
    event.imagesPerSecond = number(object, "images_per_s");
    event.elapsedSeconds = number(object, "elapsed_s");
    return event;
}

EpochEvent parseEpoch(const json& object) {
    EpochEvent event;
    event.epoch = int(integer(object, "epoch"));
    event.step = integer(object, "step");
    event.trainLoss = number(object, "train_loss");
    event.trainAccuracy = number(object, "train_accuracy");
    event.validationLoss = optionalNumber(object, "validation_loss");
    event.validationAccuracy = optionalNumber(object, "validation_accuracy");
    event.learningRate = number(object, "learning_rate");
    event.epochSeconds = number(object, "epoch_time_s");
    event.etaSeconds = number(object, "eta_s", -1);
    event.imagesPerSecond = number(object, "images_per_s");
    event.best = flag(object, "best");
    event.confusionMatrix = confusionMatrix(object, "confusion_matrix");
    event.perClass = perClass(object, "per_class");
    return event;
}

CheckpointEvent parseCheckpoint(const json& object) {
    CheckpointEvent event;
    event.kind = text(object, "kind");
    event.path = text(object, "path");
    event.epoch = int(integer(object, "epoch"));
    event.step = integer(object, "step");
    return event;
}

FinishedEvent parseFinished(const json& object) {
    FinishedEvent event;
    event.reason = text(object, "reason");
    event.epochsRun = int(integer(object, "epochs_run"));
    event.bestValidationAccuracy = optionalNumber(object, "best_validation_accuracy");
    event.bestEpoch = int(integer(object, "best_epoch"));
    event.testAccuracy = optionalNumber(object, "test_accuracy");
    event.testLoss = optionalNumber(object, "test_loss");
    if (const json& path = member(object, "model_path"); path.is_string()) event.modelPath = path.get<std::string>();
    event.wallSeconds = number(object, "wall_time_s");
    event.targetAccuracy = optionalNumber(object, "target_accuracy");
    event.secondsToTarget = optionalNumber(object, "seconds_to_target");
    event.testConfusionMatrix = confusionMatrix(object, "test_confusion_matrix");
    event.testPerClass = perClass(object, "test_per_class");
    return event;
}

FailedEvent parseFailed(const json& object) {
    FailedEvent event;
    event.reason = text(object, "reason");
    event.where = text(object, "where");
    event.step = integer(object, "step");
    event.epoch = int(integer(object, "epoch"));
    event.killedByUser = flag(object, "killed_by_user");
    return event;
}

std::string_view trimmed(std::string_view line) {
    constexpr std::string_view blanks = " \t\r\n";
    const auto first = line.find_first_not_of(blanks);
    if (first == std::string_view::npos) return {};
    return line.substr(first, line.find_last_not_of(blanks) - first + 1);
}

}  // namespace

std::optional<nlohmann::json> parseEventLine(std::string_view line) {
    line = trimmed(line);
    if (line.empty()) return std::nullopt;
    // No event nests that deep; copying such a value (the config of run_started) would recurse
    // once per level and overflow the stack, so the line counts as malformed.
    try {
        rejectDeepJsonNesting(line, "events");
    } catch (const Error&) {
        return std::nullopt;
    }
    json object = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded() || !object.is_object() || !object.contains("event")) return std::nullopt;
    return object;
}

std::optional<Event> parseEvent(const nlohmann::json& object) {
    if (!object.is_object() || number(object, "schema", -1) != kEventSchemaVersion) return std::nullopt;
    const std::string name = text(object, "event");
    Event event;
    event.time = text(object, "time");
    if (name == "run_started") event.body = parseRunStarted(object);
    else if (name == "step") event.body = parseStep(object);
    else if (name == "epoch") event.body = parseEpoch(object);
    else if (name == "checkpoint") event.body = parseCheckpoint(object);
    else if (name == "finished") event.body = parseFinished(object);
    else if (name == "failed") event.body = parseFailed(object);
    else return std::nullopt;
    return event;
}

EventLog readEvents(const std::filesystem::path& file) {
    std::ifstream stream(file, std::ios::binary);
    if (!stream)
        throw Error("cannot read the event log", file.string(), "pick a run folder that holds an events.jsonl");
    EventLog log;
    for (std::string line; std::getline(stream, line);) {
        if (trimmed(line).empty()) continue;
        const std::optional<json> object = parseEventLine(line);
        if (!object) {
            ++log.malformedLines;
            continue;
        }
        if (std::optional<Event> event = parseEvent(*object)) log.events.push_back(std::move(*event));
    }
    return log;
}

}  // namespace cnnstudio
