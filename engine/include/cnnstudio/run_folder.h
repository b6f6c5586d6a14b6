// A run is a folder:
//   spec.json      the network as trained (adapted to the data set)
//   config.json    the fully resolved configuration; `--resume` reads it back
//   events.jsonl   the event stream (written by EventWriter, read by readEvents: event_reader.h)
//   checkpoints/   latest/ and best/ (checkpoint.h)
//   model/         the final model: model.json, spec.json, model.safetensors (checkpoint.h)
//   train.lock     flock()ed by the trainer writing the run, holding its pid (RunFolderLock)
// The names below are the only spelling of these in the code: the worker, the CLI and the GUI
// all build their paths from them.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cnnstudio/spec.h"

namespace cnnstudio {

// An advisory lock (flock) on a run folder's lock file, held while this object lives, so that
// two trainers never write one run. The kernel drops it when the process ends, however it ends,
// so a killed trainer leaves no stale lock behind.
class RunFolderLock {
public:
    // Throws Error naming the folder and the holder's pid when another process holds the lock.
    explicit RunFolderLock(const std::filesystem::path& lockFile);
    ~RunFolderLock();
    RunFolderLock(const RunFolderLock&) = delete;
    RunFolderLock& operator=(const RunFolderLock&) = delete;

private:
    int fd_ = -1;
};

class RunFolder {
public:
    static constexpr const char* kSpecFileName = "spec.json";
    static constexpr const char* kConfigFileName = "config.json";
    static constexpr const char* kEventsFileName = "events.jsonl";
    static constexpr const char* kCheckpointsFolderName = "checkpoints";
    static constexpr const char* kLatestCheckpoint = "latest";  // the one a resume continues from
    static constexpr const char* kModelFolderName = "model";
    // The file that makes a folder a model folder, in model/ or wherever a model was saved.
    static constexpr const char* kModelInfoFileName = "model.json";
    static constexpr const char* kLockFileName = "train.lock";

    // Creates the folder (and its parents) for a new run; refuses one that holds files already,
    // unless they are only what a run that failed before it began left there.
    static RunFolder create(const std::filesystem::path& path);
    // An existing run, for resuming or evaluating: spec.json and config.json must be there.
    static RunFolder open(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path specFile() const { return path_ / kSpecFileName; }
    std::filesystem::path configFile() const { return path_ / kConfigFileName; }
    std::filesystem::path eventsFile() const { return path_ / kEventsFileName; }
    std::filesystem::path checkpointFolder(const std::string& kind) const {  // "latest" | "best"
        return path_ / kCheckpointsFolderName / kind;
    }
    std::filesystem::path modelFolder() const { return path_ / kModelFolderName; }
    std::filesystem::path lockFile() const { return path_ / kLockFileName; }

    // Removes what a run that failed before it began left here (its config, spec and `failed`
    // event), so that a new run's record starts clean; call it holding the folder's lock, so that
    // a trainer still setting up there is refused by the lock before anything of it is removed.
    void discardRunThatNeverBegan() const;

    void writeSpec(const NetworkSpec& spec) const;        // atomic
    void writeConfig(const nlohmann::json& config) const;  // atomic
    NetworkSpec readSpec() const;
    nlohmann::json readConfig() const;

private:
    explicit RunFolder(std::filesystem::path path) : path_(std::move(path)) {}
    std::filesystem::path path_;
};

}  // namespace cnnstudio
