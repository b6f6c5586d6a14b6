// The shared event reader (event_reader.h): a line of each event type parses into the right fields,
// what the writer writes reads back, a malformed line is counted and skipped, events of another
// schema or name are skipped, and the runs the GUI tests replay read completely.
#include <fstream>

#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/event_reader.h"
#include "cnnstudio/events.h"
#include "cnnstudio/run_folder.h"

namespace cnnstudio {
namespace {

Event parsedLine(const std::string& line) {
    const std::optional<nlohmann::json> object = parseEventLine(line);
    if (!object) throw std::runtime_error("not an event line: " + line);
    const std::optional<Event> event = parseEvent(*object);
    if (!event) throw std::runtime_error("not a known event: " + line);
    return *event;
}

std::filesystem::path scratchFile(const std::string& name) {
    const auto folder = std::filesystem::temp_directory_path() /
                        ("cnnstudio-event-reader-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::create_directories(folder);
    return folder / name;
}

void writeLines(const std::filesystem::path& file, const std::string& text) {
    std::ofstream stream(file, std::ios::binary | std::ios::trunc);
    stream << text;
}

TEST(EventReader, RunStartedParsesIntoItsFields) {
    const Event event = parsedLine(
        R"({"schema":1,"event":"run_started","time":"2026-11-30T01:41:19.231Z","backend":"cpu",)"
        R"("config":{"backend":"cpu","epochs":4},"dataset":{"classes":["a","b"],"image":[1,28,28],"name":"fashion-mnist",)"
        R"("test_size":10000,"train_size":3200,"validation_size":6000},"epochs":4,"hardware":{"gpus":[]},)"
        R"("model":{"forward_flops":852370,"name":"lenet5","parameters":61706},"ranks":2,"resumed_from_step":100,)"
        R"("run_dir":"/runs/a","steps_per_epoch":50})");
    EXPECT_EQ(event.time, "2026-11-30T01:41:19.231Z");
    const auto* started = event.as<RunStartedEvent>();
    ASSERT_NE(started, nullptr);
    EXPECT_EQ(started->runDir, "/runs/a");
    EXPECT_EQ(started->config.value("epochs", 0), 4);
    EXPECT_TRUE(started->hardware.contains("gpus"));
    EXPECT_EQ(started->dataset.name, "fashion-mnist");
    EXPECT_EQ(started->dataset.classes, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(started->dataset.image, (std::vector<int>{1, 28, 28}));
    EXPECT_EQ(started->dataset.trainSize, 3200);
    EXPECT_EQ(started->dataset.validationSize, 6000);
    EXPECT_EQ(started->dataset.testSize, 10000);
    EXPECT_EQ(started->model.name, "lenet5");
    EXPECT_EQ(started->model.parameters, 61706);
    EXPECT_EQ(started->model.forwardFlops, 852370);
    EXPECT_EQ(started->backend, "cpu");
    EXPECT_EQ(started->epochs, 4);
    EXPECT_EQ(started->stepsPerEpoch, 50);
    EXPECT_EQ(started->resumedFromStep, 100);
    EXPECT_EQ(started->ranks, 2);
}

TEST(EventReader, StepParsesIntoItsFields) {
    const Event event = parsedLine(R"({"schema":1,"event":"step","time":"t","elapsed_s":1.5,"epoch":2,)"
                                   R"("epoch_step":10,"images_per_s":1234.5,"learning_rate":0.002,"loss":0.75,"step":60})");
    const auto* step = event.as<StepEvent>();
    ASSERT_NE(step, nullptr);
    EXPECT_EQ(step->epoch, 2);
    EXPECT_EQ(step->step, 60);
    EXPECT_EQ(step->epochStep, 10);
    EXPECT_DOUBLE_EQ(step->loss, 0.75);
    EXPECT_DOUBLE_EQ(step->learningRate, 0.002);
    EXPECT_DOUBLE_EQ(step->imagesPerSecond, 1234.5);
    EXPECT_DOUBLE_EQ(step->elapsedSeconds, 1.5);
}

TEST(EventReader, EpochParsesIntoItsFieldsWithTheConfusionMatrix) {
    const Event event = parsedLine(
        R"({"schema":1,"event":"epoch","time":"t","best":true,"confusion_matrix":[[5,1],[2,7]],"epoch":3,)"
        R"("epoch_time_s":4.5,"eta_s":9.0,"images_per_s":800.0,"learning_rate":0.01,)"
        R"("per_class":[{"class":"a","precision":0.7,"recall":0.8,"support":6}],"step":150,"train_accuracy":0.9,)"
        R"("train_loss":0.3,"validation_accuracy":0.8,"validation_loss":0.4})");
    const auto* epoch = event.as<EpochEvent>();
    ASSERT_NE(epoch, nullptr);
    EXPECT_EQ(epoch->epoch, 3);
    EXPECT_EQ(epoch->step, 150);
    EXPECT_DOUBLE_EQ(epoch->trainLoss, 0.3);
    EXPECT_DOUBLE_EQ(epoch->trainAccuracy, 0.9);
    EXPECT_EQ(epoch->validationLoss, 0.4);
    EXPECT_EQ(epoch->validationAccuracy, 0.8);
    EXPECT_DOUBLE_EQ(epoch->learningRate, 0.01);
    EXPECT_DOUBLE_EQ(epoch->epochSeconds, 4.5);
    EXPECT_DOUBLE_EQ(epoch->etaSeconds, 9.0);
    EXPECT_DOUBLE_EQ(epoch->imagesPerSecond, 800.0);
    EXPECT_TRUE(epoch->best);
    EXPECT_EQ(epoch->confusionMatrix, (ConfusionMatrixCounts{{5, 1}, {2, 7}}));
    ASSERT_EQ(epoch->perClass.size(), 1u);
    EXPECT_EQ(epoch->perClass[0].className, "a");
    EXPECT_DOUBLE_EQ(epoch->perClass[0].metrics.precision, 0.7);
    EXPECT_DOUBLE_EQ(epoch->perClass[0].metrics.recall, 0.8);
    EXPECT_EQ(epoch->perClass[0].metrics.support, 6);
}

TEST(EventReader, EpochWithoutValidationHasNoValidationFigures) {
    const Event event = parsedLine(R"({"schema":1,"event":"epoch","epoch":1,"step":10,"train_loss":0.5,)"
                                   R"("validation_accuracy":null,"validation_loss":null})");
    const auto* epoch = event.as<EpochEvent>();
    ASSERT_NE(epoch, nullptr);
    EXPECT_FALSE(epoch->validationLoss.has_value());
    EXPECT_FALSE(epoch->validationAccuracy.has_value());
    EXPECT_TRUE(epoch->confusionMatrix.empty());
    EXPECT_DOUBLE_EQ(epoch->etaSeconds, -1);  // the log does not say
}

TEST(EventReader, CheckpointParsesIntoItsFields) {
    const Event event =
        parsedLine(R"({"schema":1,"event":"checkpoint","epoch":2,"kind":"best","path":"/runs/a/checkpoints/best","step":100})");
    const auto* checkpoint = event.as<CheckpointEvent>();
    ASSERT_NE(checkpoint, nullptr);
    EXPECT_EQ(checkpoint->kind, "best");
    EXPECT_EQ(checkpoint->path, "/runs/a/checkpoints/best");
    EXPECT_EQ(checkpoint->epoch, 2);
    EXPECT_EQ(checkpoint->step, 100);
}

TEST(EventReader, FinishedParsesIntoItsFields) {
    const Event completed = parsedLine(
        R"({"schema":1,"event":"finished","best_epoch":4,"best_validation_accuracy":0.79,"epochs_run":4,)"
        R"("model_path":"/runs/a/model","reason":"completed","test_accuracy":0.78,"test_confusion_matrix":[[1,0],[0,1]],)"
        R"("test_loss":0.6,"test_per_class":[{"class":"a","precision":1,"recall":1,"support":1}],"wall_time_s":20.5})");
    const auto* finished = completed.as<FinishedEvent>();
    ASSERT_NE(finished, nullptr);
    EXPECT_EQ(finished->reason, "completed");
    EXPECT_EQ(finished->epochsRun, 4);
    EXPECT_EQ(finished->bestValidationAccuracy, 0.79);
    EXPECT_EQ(finished->bestEpoch, 4);
    EXPECT_EQ(finished->testAccuracy, 0.78);
    EXPECT_EQ(finished->testLoss, 0.6);
    EXPECT_EQ(finished->modelPath, std::optional<std::string>("/runs/a/model"));
    EXPECT_DOUBLE_EQ(finished->wallSeconds, 20.5);
    EXPECT_EQ(finished->testConfusionMatrix, (ConfusionMatrixCounts{{1, 0}, {0, 1}}));
    ASSERT_EQ(finished->testPerClass.size(), 1u);

    const Event stopped = parsedLine(R"({"schema":1,"event":"finished","best_epoch":0,"best_validation_accuracy":null,)"
                                     R"("epochs_run":3,"model_path":null,"reason":"stopped","test_accuracy":null})");
    ASSERT_NE(stopped.as<FinishedEvent>(), nullptr);
    EXPECT_FALSE(stopped.as<FinishedEvent>()->modelPath.has_value());
    EXPECT_FALSE(stopped.as<FinishedEvent>()->testAccuracy.has_value());
    EXPECT_FALSE(stopped.as<FinishedEvent>()->bestValidationAccuracy.has_value());
}

TEST(EventReader, FailedParsesIntoItsFields) {
    const Event event = parsedLine(R"({"schema":1,"event":"failed","epoch":1,"reason":"loss became NaN",)"
                                   R"("step":7,"where":"trainer"})");
    const auto* failed = event.as<FailedEvent>();
    ASSERT_NE(failed, nullptr);
    EXPECT_EQ(failed->reason, "loss became NaN");
    EXPECT_EQ(failed->where, "trainer");
    EXPECT_EQ(failed->step, 7);
    EXPECT_EQ(failed->epoch, 1);
    EXPECT_FALSE(failed->killedByUser);

    const Event killed = parsedLine(R"({"schema":1,"event":"failed","epoch":1,"reason":"You killed the worker",)"
                                    R"("step":7,"where":"cnnstudio","killed_by_user":true})");
    ASSERT_NE(killed.as<FailedEvent>(), nullptr);
    EXPECT_TRUE(killed.as<FailedEvent>()->killedByUser);
}

TEST(EventReader, MistypedFieldsFallBackToTheirDefaults) {
    const Event event = parsedLine(R"({"schema":1,"event":"step","epoch":"two","loss":null,"step":5,"extra":[1]})");
    const auto* step = event.as<StepEvent>();
    ASSERT_NE(step, nullptr);
    EXPECT_EQ(step->epoch, 0);
    EXPECT_DOUBLE_EQ(step->loss, 0);
    EXPECT_EQ(step->step, 5);
}

// Found with tests/fuzz/events_fuzz: a count of 1e300 was cast to long long (undefined
// behaviour) and a line nested 100,000 levels deep overflowed the stack when its config was copied.
TEST(EventReader, CountsOutOfRangeAreMistyped) {
    const Event event = parsedLine(
        R"({"schema":1,"event":"step","epoch":1e300,"step":18446744073709551615,"epoch_step":2.5,"elapsed_s":3})");
    const auto* step = event.as<StepEvent>();
    ASSERT_NE(step, nullptr);
    EXPECT_EQ(step->epoch, 0);
    EXPECT_EQ(step->step, 0);
    EXPECT_EQ(step->epochStep, 0);
    EXPECT_EQ(parsedLine(R"({"schema":1,"event":"step","step":7.0})").as<StepEvent>()->step, 7);
}

TEST(EventReader, DeeplyNestedLineIsMalformed) {
    const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
    const std::string deepLine = R"({"schema":1,"event":"run_started","config":{"a":)" + deep + "}}";
    EXPECT_FALSE(parseEventLine(deepLine).has_value());
    const auto file = scratchFile("deep.jsonl");
    writeLines(file, deepLine + "\n" + R"({"schema":1,"event":"step","step":3})" + "\n");
    const EventLog log = readEvents(file);
    EXPECT_EQ(log.malformedLines, 1);
    ASSERT_EQ(log.events.size(), 1u);
    EXPECT_EQ(log.events[0].as<StepEvent>()->step, 3);
}

TEST(EventReader, LinesThatHoldNoEventAreNotEvents) {
    EXPECT_FALSE(parseEventLine("").has_value());
    EXPECT_FALSE(parseEventLine("a line that is not an event").has_value());
    EXPECT_FALSE(parseEventLine(R"({"schema":1,"event":"step","ste)").has_value());  // cut short by a crash
    EXPECT_FALSE(parseEventLine(R"([1,2])").has_value());
    EXPECT_FALSE(parseEventLine(R"({"schema":1})").has_value());
    EXPECT_TRUE(parseEventLine("  {\"schema\":1,\"event\":\"step\"}\r\n").has_value());
}

TEST(EventReader, OtherSchemasAndUnknownNamesAreSkipped) {
    EXPECT_FALSE(parseEvent(nlohmann::json{{"schema", 2}, {"event", "step"}}).has_value());
    EXPECT_FALSE(parseEvent(nlohmann::json{{"event", "step"}}).has_value());
    EXPECT_FALSE(parseEvent(nlohmann::json{{"schema", 1}, {"event", "benchmark"}}).has_value());
    EXPECT_TRUE(parseEvent(nlohmann::json{{"schema", 1}, {"event", "step"}}).has_value());
}

TEST(EventReader, MalformedLineIsCountedNotFatal) {
    const auto file = scratchFile("malformed.jsonl");
    writeLines(file, "{\"schema\":1,\"event\":\"step\",\"step\":10}\n"
                     "\n"
                     "not json at all\n"
                     "{\"schema\":2,\"event\":\"step\",\"step\":20}\n"
                     "{\"schema\":1,\"event\":\"finished\",\"reason\":\"completed\"}\n"
                     "{\"schema\":1,\"event\":\"step\",\"st");  // the last line of a crashed worker
    const EventLog log = readEvents(file);
    EXPECT_EQ(log.malformedLines, 2);
    ASSERT_EQ(log.events.size(), 2u);  // the schema-2 event is skipped, not counted
    ASSERT_NE(log.events[0].as<StepEvent>(), nullptr);
    EXPECT_EQ(log.events[0].as<StepEvent>()->step, 10);
    ASSERT_NE(log.events[1].as<FinishedEvent>(), nullptr);
}

TEST(EventReader, AMissingLogNamesItsFile) {
    const auto file = scratchFile("no-such-events.jsonl");
    std::filesystem::remove(file);
    try {
        readEvents(file);
        FAIL() << "readEvents of a missing file did not throw";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(file.string()), std::string::npos) << error.what();
    }
}

TEST(EventReader, WhatTheWriterWritesReadsBack) {
    const auto file = scratchFile("written.jsonl");
    std::filesystem::remove(file);
    {
        EventWriter writer;
        writer.addFile(file);
        writer.emit("step", {{"epoch", 1}, {"step", 3}, {"epoch_step", 3}, {"loss", 1.25}});
        writer.emit("failed", {{"reason", "out of memory"}, {"where", "conv1"}, {"step", 3}, {"epoch", 1}});
    }
    const EventLog log = readEvents(file);
    EXPECT_EQ(log.malformedLines, 0);
    ASSERT_EQ(log.events.size(), 2u);
    EXPECT_FALSE(log.events[0].time.empty());
    ASSERT_NE(log.events[0].as<StepEvent>(), nullptr);
    EXPECT_DOUBLE_EQ(log.events[0].as<StepEvent>()->loss, 1.25);
    ASSERT_NE(log.events[1].as<FailedEvent>(), nullptr);
    EXPECT_EQ(log.events[1].as<FailedEvent>()->where, "conv1");
}

// The runs recorded by cnnstudio-train for the GUI tests (tests/gui/data/README.md).
TEST(EventReader, RecordedRunsReadCompletely) {
    const std::filesystem::path runs = std::filesystem::path(CNNSTUDIO_SOURCE_DIR) / "tests/gui/data/runs";
    const EventLog adam = readEvents(runs / "20261130-014119-lenet5-adam" / RunFolder::kEventsFileName);
    EXPECT_EQ(adam.malformedLines, 0);
    int steps = 0, epochs = 0;
    for (const Event& event : adam.events) {
        steps += event.as<StepEvent>() != nullptr;
        epochs += event.as<EpochEvent>() != nullptr;
    }
    EXPECT_EQ(steps, 20);
    EXPECT_EQ(epochs, 4);
    ASSERT_NE(adam.events.front().as<RunStartedEvent>(), nullptr);
    EXPECT_EQ(adam.events.front().as<RunStartedEvent>()->dataset.classes.size(), 10u);
    ASSERT_NE(adam.events.back().as<FinishedEvent>(), nullptr);
    EXPECT_EQ(adam.events.back().as<FinishedEvent>()->testAccuracy, 0.7783);

    const EventLog sgd = readEvents(runs / "20261130-014251-lenet5-sgd" / RunFolder::kEventsFileName);
    ASSERT_NE(sgd.events.back().as<FinishedEvent>(), nullptr);
    EXPECT_EQ(sgd.events.back().as<FinishedEvent>()->reason, "stopped");
    EXPECT_EQ(sgd.events.back().as<FinishedEvent>()->epochsRun, 3);
}

}  // namespace
}  // namespace cnnstudio
