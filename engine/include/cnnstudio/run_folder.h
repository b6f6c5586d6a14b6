// A run is a folder (DESIGN.md):
//   spec.json      the network as trained (adapted to the data set)
//   config.json    the fully resolved configuration; `--resume` reads it back
//   events.jsonl   the event stream (docs/events.md)
//   checkpoints/   latest/ and best/ (checkpoint.h)
//   model/         the final model (checkpoint.h)
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cnnstudio/spec.h"

namespace cnnstudio {

class RunFolder {
public:
    // Creates the folder (and its parents) for a new run; refuses one that holds files already.
    static RunFolder create(const std::filesystem::path& path);
    // An existing run, for resuming or evaluating: spec.json and config.json must be there.
    static RunFolder open(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path specFile() const { return path_ / "spec.json"; }
    std::filesystem::path configFile() const { return path_ / "config.json"; }
    std::filesystem::path eventsFile() const { return path_ / "events.jsonl"; }
    std::filesystem::path checkpointFolder(const std::string& kind) const {  // "latest" | "best"
        return path_ / "checkpoints" / kind;
    }
    std::filesystem::path modelFolder() const { return path_ / "model"; }

    void writeSpec(const NetworkSpec& spec) const;        // atomic
    void writeConfig(const nlohmann::json& config) const;  // atomic
    NetworkSpec readSpec() const;
    nlohmann::json readConfig() const;

private:
    explicit RunFolder(std::filesystem::path path) : path_(std::move(path)) {}
    std::filesystem::path path_;
};

}  // namespace cnnstudio
