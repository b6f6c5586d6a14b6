// RunFolder::create takes over only a folder whose run never began (tests/e2e has the whole
// command: a typo in the data set path, then the corrected command into the same --run-dir).

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/run_folder.h"
#include "synthetic_batches.h"

namespace cnnstudio {
namespace {

const char* const kFailedEvent =
    R"({"schema":1,"event":"failed","time":"2026-12-03T10:10:28.344Z","epoch":1,"step":0,"reason":"no data","where":"x"})";
const char* const kRunStartedEvent =
    R"({"schema":1,"event":"run_started","time":"2026-12-03T10:10:20.000Z","run_dir":"r","config":{},"hardware":{},)"
    R"("dataset":{},"model":{},"backend":"cpu"})";

// What the trainer leaves when it fails before its session begins, with `events` as its events.
std::filesystem::path leftOverRun(const std::string& suffix, const std::string& events) {
    const std::filesystem::path folder = testing::freshFolder(suffix);
    std::filesystem::create_directories(folder / RunFolder::kCheckpointsFolderName);
    for (const char* file : {RunFolder::kSpecFileName, RunFolder::kConfigFileName}) std::ofstream(folder / file) << "{}\n";
    std::ofstream(folder / RunFolder::kLockFileName) << "4242";
    std::ofstream(folder / RunFolder::kEventsFileName) << events;
    return folder;
}

TEST(RunFolder, ARunThatFailedBeforeItBeganIsTakenOverAndItsRecordDiscarded) {
    const std::filesystem::path path = leftOverRun("-failed", std::string(kFailedEvent) + "\n");
    const RunFolder folder = RunFolder::create(path);
    {
        const RunFolderLock lock(folder.lockFile());
        folder.discardRunThatNeverBegan();
    }
    EXPECT_FALSE(std::filesystem::exists(folder.eventsFile()));
    EXPECT_FALSE(std::filesystem::exists(folder.configFile()));
    EXPECT_FALSE(std::filesystem::exists(folder.specFile()));
    EXPECT_TRUE(std::filesystem::is_directory(path / RunFolder::kCheckpointsFolderName));
}

TEST(RunFolder, ARunThatBeganIsNeverTakenOver) {
    const std::filesystem::path path =
        leftOverRun("-began", std::string(kRunStartedEvent) + "\n" + kFailedEvent + "\n");
    EXPECT_THROW(RunFolder::create(path), Error);
}

TEST(RunFolder, AFolderHoldingAnythingElseIsNeverTakenOver) {
    const std::filesystem::path extraFile = leftOverRun("-extra", std::string(kFailedEvent) + "\n");
    std::ofstream(extraFile / "notes.txt") << "mine";
    EXPECT_THROW(RunFolder::create(extraFile), Error);

    const std::filesystem::path checkpoint = leftOverRun("-checkpoint", std::string(kFailedEvent) + "\n");
    std::filesystem::create_directories(checkpoint / RunFolder::kCheckpointsFolderName / RunFolder::kLatestCheckpoint);
    EXPECT_THROW(RunFolder::create(checkpoint), Error);

    const std::filesystem::path damaged = leftOverRun("-damaged", std::string(kFailedEvent) + "\n{not json\n");
    EXPECT_THROW(RunFolder::create(damaged), Error) << "events it cannot read may hide a run that began";

    const std::filesystem::path noEvents = leftOverRun("-no-events", "");
    std::filesystem::remove(noEvents / RunFolder::kEventsFileName);
    EXPECT_THROW(RunFolder::create(noEvents), Error);
}

}  // namespace
}  // namespace cnnstudio
