// Running the built cnnstudio-train as a user does, for the end-to-end suites.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "run_process.h"

namespace cnnstudio::e2e {

inline const std::string kTrainProgram = CNNSTUDIO_TRAIN_BINARY;
// Waiting OpenMP threads sleep: CI's two cores are shared with other tests.
inline const std::vector<std::string> kQuietOpenMp = {"OMP_WAIT_POLICY=passive"};

inline bool mpirunOnPath() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

// Why ranks started by mpirun cannot train here, or "" when they can: they need mpirun and a
// build with MPI support (ranks of a build without it stop at once, saying so).
inline std::string whyRanksCannotRun() {
    if (!CNNSTUDIO_BUILT_WITH_MPI) return "this build has no MPI support (CNNSTUDIO_MPI=OFF or no libopenmpi-dev)";
    if (!mpirunOnPath()) return "mpirun is not on the PATH (install openmpi-bin)";
    return "";
}

// The root of this process's scratch folders, `prefix`-PID under the test temporary folder; it is
// removed when the tests end if every test passed (a failure keeps it to look at).
inline std::filesystem::path scratchRootRemovedOnSuccess(const std::string& prefix) {
    class RemoveOnSuccess : public ::testing::Environment {
    public:
        explicit RemoveOnSuccess(std::filesystem::path root) : root_(std::move(root)) {}
        void TearDown() override {
            if (!::testing::UnitTest::GetInstance()->Failed()) std::filesystem::remove_all(root_);
        }

    private:
        std::filesystem::path root_;
    };
    const std::filesystem::path root =
        std::filesystem::path(::testing::TempDir()) / (prefix + "-" + std::to_string(::getpid()));
    ::testing::AddGlobalTestEnvironment(new RemoveOnSuccess(root));
    return root;
}

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

// The lines of RUN_DIR/events.jsonl.
inline std::vector<std::string> eventLines(const std::filesystem::path& runDir) {
    std::vector<std::string> lines;
    std::ifstream stream(runDir / "events.jsonl");
    for (std::string line; std::getline(stream, line);) lines.push_back(line);
    return lines;
}

// The run's events that parse (a line cut by a kill does not), in order.
inline std::vector<nlohmann::json> readEventObjects(const std::filesystem::path& runDir) {
    std::vector<nlohmann::json> events;
    for (const auto& line : eventLines(runDir)) {
        nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
        if (event.is_object()) events.push_back(std::move(event));
    }
    return events;
}

// The last event called `name`; null when there is none.
inline nlohmann::json lastEventNamed(const std::filesystem::path& runDir, const std::string& name) {
    nlohmann::json found;
    for (const auto& event : readEventObjects(runDir))
        if (event.value("event", "") == name) found = event;
    return found;
}

}  // namespace cnnstudio::e2e
