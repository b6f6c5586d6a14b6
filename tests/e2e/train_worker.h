// Running the built cnnstudio-train as a user does, for the end-to-end suites.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "run_process.h"

namespace cnnstudio::e2e {

inline const std::string kTrainProgram = CNNSTUDIO_TRAIN_BINARY;
// Waiting OpenMP threads sleep: CI's two cores are shared with other tests.
inline const std::vector<std::string> kQuietOpenMp = {"OMP_WAIT_POLICY=passive"};

// An empty folder `name` under `root`, made afresh.
inline std::filesystem::path freshFolder(const std::filesystem::path& root, const std::string& name) {
    const auto folder = root / name;
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    return folder;
}

// cnnstudio-train with `arguments`, its output under `work`.
inline ProcessResult train(std::vector<std::string> arguments, const std::filesystem::path& work) {
    arguments.insert(arguments.begin(), kTrainProgram);
    return runProcess(arguments, work.string(), kQuietOpenMp);
}

}  // namespace cnnstudio::e2e
