// One `failed` event (docs/architecture.md, "Events") appended to a run's events.jsonl by the
// app, for a run its worker left without a final event. Declared without Qt types: its source includes the engine's
// EventWriter, whose `emit` member a Qt header would turn into its keyword.
#pragma once

#include <filesystem>
#include <string>

namespace cnnstudio::ui {

// Throws Error naming the file when it cannot be written.
void appendFailedEvent(const std::filesystem::path& eventsFile, const std::string& reason, long long step, int epoch,
                       bool killedByUser);

}  // namespace cnnstudio::ui
