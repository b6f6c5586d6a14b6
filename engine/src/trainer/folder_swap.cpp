#include "trainer/folder_swap.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "cnnstudio/error.h"

namespace cnnstudio {

namespace {

std::filesystem::path withSuffix(const std::filesystem::path& target, const std::string& suffix) {
    std::filesystem::path path = target;
    path += suffix;
    return path;
}

[[noreturn]] void renameFailed(const std::filesystem::path& target, int error) {
    throw Error(std::string("cannot put the new folder in place: ") + std::strerror(error),
                target.string(), "check that the run folder is writable and not full");
}

}  // namespace

void syncFolder(const std::filesystem::path& folder) {
    int descriptor = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (descriptor < 0)
        throw Error(std::string("cannot open the folder to sync it: ") + std::strerror(errno),
                    folder.string());
    int result = ::fsync(descriptor);
    int error = errno;
    ::close(descriptor);
    if (result != 0 && error != EINVAL)
        throw Error(std::string("cannot sync the folder: ") + std::strerror(error), folder.string());
}

std::filesystem::path createStagingFolder(const std::filesystem::path& target) {
    // One writer per run folder (rank 0), so a fixed name is enough; a leftover from a crash
    // is removed first.
    std::filesystem::path staged = withSuffix(target, ".partial");
    std::error_code error;
    std::filesystem::remove_all(staged, error);
    std::filesystem::create_directories(staged, error);
    if (error)
        throw Error("cannot create the folder: " + error.message(), staged.string(),
                    "check that the run folder is writable");
    return staged;
}

void removeStagingFolder(const std::filesystem::path& staged) {
    std::error_code ignored;
    std::filesystem::remove_all(staged, ignored);
}

void replaceFolder(const std::filesystem::path& staged, const std::filesystem::path& target) {
    syncFolder(staged);
    const std::filesystem::path parent = target.parent_path();
    std::error_code error;
    if (!std::filesystem::exists(target, error)) {
        if (::rename(staged.c_str(), target.c_str()) != 0) renameFailed(target, errno);
    } else if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
        std::filesystem::remove_all(staged, error);  // the old folder, now under the staged name
    } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
        const std::filesystem::path previous = withSuffix(target, ".previous");
        std::filesystem::remove_all(previous, error);
        if (::rename(target.c_str(), previous.c_str()) != 0) renameFailed(target, errno);
        if (::rename(staged.c_str(), target.c_str()) != 0) renameFailed(target, errno);
        std::filesystem::remove_all(previous, error);
    } else {
        renameFailed(target, errno);
    }
    syncFolder(parent);
}

std::filesystem::path readableFolder(const std::filesystem::path& target) {
    std::error_code error;
    if (std::filesystem::exists(target, error)) return target;
    std::filesystem::path previous = withSuffix(target, ".previous");
    if (std::filesystem::exists(previous, error)) return previous;
    return target;
}

}  // namespace cnnstudio
