#include "cnnstudio/run_folder.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"
#include "cnnstudio/event_reader.h"

namespace cnnstudio {

namespace {

// The pid the lock's holder wrote into the lock file, or "unknown" before it has written it.
std::string lockHolderPid(int fd) {
    char text[32] = {};
    const ssize_t length = ::pread(fd, text, sizeof text - 1, 0);
    return length > 0 ? std::string(text, std::size_t(length)) : std::string("unknown");
}

// What a run that failed before its session began leaves (a data set that would not load, a
// teacher of other data, a batch too large for the GPU): its config, spec, lock and events, an
// empty checkpoints/, and no `run_started` among the events. Nothing was trained, so a corrected
// command may take the folder over. Anything else in it, or unreadable events, and it is kept.
bool holdsRunThatNeverBegan(const std::filesystem::path& path) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
        const std::string name = entry.path().filename().string();
        if (name == RunFolder::kCheckpointsFolderName) {
            if (!entry.is_directory(error) || !std::filesystem::is_empty(entry.path(), error)) return false;
        } else if (name != RunFolder::kSpecFileName && name != RunFolder::kConfigFileName &&
                   name != RunFolder::kEventsFileName && name != RunFolder::kLockFileName) {
            return false;
        }
    }
    if (error) return false;
    try {
        const EventLog log = readEvents(path / RunFolder::kEventsFileName);
        if (log.malformedLines > 0) return false;
        for (const Event& event : log.events)
            if (event.as<RunStartedEvent>()) return false;
        return true;
    } catch (const Error&) {
        return false;  // no events file: not a run folder this trainer wrote
    }
}

}  // namespace

RunFolderLock::RunFolderLock(const std::filesystem::path& lockFile) {
    const std::string folder = lockFile.parent_path().string();
    fd_ = ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
        throw Error(std::string("cannot create the lock file ") + lockFile.filename().string() + ": " +
                        std::strerror(errno),
                    folder, "check that the run folder is writable");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int lockError = errno;
        const std::string holder = lockHolderPid(fd_);
        ::close(fd_);
        if (lockError == EWOULDBLOCK)
            throw Error("another trainer (pid " + holder + ") is writing this run folder", folder,
                        "wait for it to end or stop it, or train into another --run-dir");
        throw Error(std::string("cannot lock the run folder: ") + std::strerror(lockError), folder,
                    "put run folders on a filesystem that supports flock");
    }
    // The holder's pid, for the message a second trainer prints.
    const std::string pid = std::to_string(::getpid());
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
        const std::string why = std::strerror(errno);
        ::close(fd_);
        throw Error("cannot write the lock file " + lockFile.filename().string() + ": " + why, folder,
                    "check the free space and permissions of the run folder");
    }
}

RunFolderLock::~RunFolderLock() { ::close(fd_); }  // closing the descriptor releases the flock

RunFolder RunFolder::create(const std::filesystem::path& path) {
    std::error_code error;
    if (std::filesystem::exists(path, error)) {
        if (!std::filesystem::is_directory(path, error))
            throw Error("exists and is not a folder", path.string(), "choose another --run-dir");
        if (!std::filesystem::is_empty(path, error) && !holdsRunThatNeverBegan(path))
            throw Error("the run folder holds files already", path.string(),
                        "choose another --run-dir, or continue that run with --resume");
    }
    std::filesystem::create_directories(path / kCheckpointsFolderName, error);
    if (error)
        throw Error("cannot create the run folder: " + error.message(), path.string(),
                    "check that the parent folder is writable");
    return RunFolder(path);
}

RunFolder RunFolder::open(const std::filesystem::path& path) {
    if (!std::filesystem::is_directory(path))
        throw Error("no such run folder", path.string(), "pass the --run-dir of an earlier run");
    RunFolder folder(path);
    for (const auto& file : {folder.specFile(), folder.configFile()})
        if (!std::filesystem::exists(file))
            throw Error("not a run folder: " + file.filename().string() + " is missing", path.string(),
                        "pass the --run-dir of an earlier run");
    std::error_code error;
    std::filesystem::create_directories(path / kCheckpointsFolderName, error);
    return folder;
}

void RunFolder::discardRunThatNeverBegan() const {
    if (!holdsRunThatNeverBegan(path_)) return;
    std::error_code error;
    for (const auto& file : {specFile(), configFile(), eventsFile()}) {
        std::filesystem::remove(file, error);
        if (error)
            throw Error("cannot remove " + file.filename().string() + " of the run that never began: " +
                            error.message(),
                        path_.string(), "check that the run folder is writable, or choose another --run-dir");
    }
}

void RunFolder::writeSpec(const NetworkSpec& spec) const { spec.save(specFile()); }

void RunFolder::writeConfig(const nlohmann::json& config) const {
    writeFileAtomically(configFile(), config.dump(2) + "\n");
}

NetworkSpec RunFolder::readSpec() const { return NetworkSpec::load(specFile()); }

nlohmann::json RunFolder::readConfig() const {
    std::ifstream stream(configFile());
    if (!stream) throw Error("cannot open the file", configFile().string());
    try {
        return nlohmann::json::parse(stream);
    } catch (const nlohmann::json::exception& error) {
        throw Error(std::string("not valid JSON: ") + error.what(), configFile().string(),
                    "the file is damaged; start a new run");
    }
}

}  // namespace cnnstudio
