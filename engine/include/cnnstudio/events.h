// EventWriter: the worker's JSON Lines event stream, schema version 1 (docs/architecture.md,
// "Events"); this is the code's one writer of it, event_reader.h its one reader. Every event is one line,
// flushed as soon as it is written, so the dashboard and `tail -f` see it at once. Only rank 0
// writes: other ranks construct the writer with writer = false and it stays silent (its
// listeners still run, so a rank can still watch its own progress).
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cnnstudio {

constexpr int kEventSchemaVersion = 1;

// UTC, ISO 8601 with milliseconds: "2026-11-30T01:02:03.456Z".
std::string utcTimestamp();

class EventWriter {
public:
    explicit EventWriter(bool writer = true);
    ~EventWriter();
    EventWriter(const EventWriter&) = delete;
    EventWriter& operator=(const EventWriter&) = delete;

    bool writer() const { return writer_; }

    // Appends to `file` (a resumed run continues its events.jsonl). Throws Error naming the file
    // when it cannot be opened. Does nothing on a non-writer.
    void addFile(const std::filesystem::path& file);
    // Also writes every line to `stream` (standard output for `--events -`); not owned. A stream
    // that fails (its reader went away) is dropped without an error: the files are the record.
    void addStream(std::ostream& stream);
    // Called with every event (the complete object), writer or not: the CLI's progress display.
    void addListener(std::function<void(const nlohmann::json&)> listener);

    // Adds "schema", "event" and "time" to `fields` and writes the line. Throws Error naming the
    // file when a write fails (a full disk must not go unnoticed).
    void emit(const std::string& event, nlohmann::json fields = nlohmann::json::object());

private:
    bool writer_;
    struct FileOutput {
        std::filesystem::path path;
        std::ofstream stream;
    };
    std::vector<std::unique_ptr<FileOutput>> files_;
    std::vector<std::ostream*> streams_;
    std::vector<std::function<void(const nlohmann::json&)>> listeners_;
};

}  // namespace cnnstudio
