#include "cnnstudio/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

std::string systemReason(int error) { return std::strerror(error); }

// Opens a temporary file next to `file` that no other writer uses: the name carries the process
// id and a per-process counter, and O_EXCL refuses a name that exists already.
int openTemporaryNextTo(const std::filesystem::path& file, std::filesystem::path& temporary) {
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
        temporary = file;
        temporary += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        int descriptor = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (descriptor >= 0) return descriptor;
        if (errno != EEXIST)
            throw Error("cannot create a temporary file: " + systemReason(errno), file.string(),
                        "check that the folder exists and is writable");
    }
    throw Error("cannot find an unused temporary file name", file.string(),
                "remove stale " + file.filename().string() + ".tmp-* files");
}

void writeAll(int descriptor, std::string_view contents, const std::filesystem::path& file) {
    while (!contents.empty()) {
        ssize_t written = ::write(descriptor, contents.data(), contents.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            throw Error("cannot write: " + systemReason(errno), file.string(),
                        "check the free disk space");
        }
        contents.remove_prefix(std::size_t(written));
    }
}

// Makes the rename itself durable. Some file systems cannot sync a folder (EINVAL); the data
// is on disk already then, only the rename may be lost in a power cut.
void syncFolder(const std::filesystem::path& folder, const std::filesystem::path& file) {
    int descriptor = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (descriptor < 0) return;  // the rename has happened; only its durability is in question
    int result = ::fsync(descriptor);
    int error = errno;
    ::close(descriptor);
    if (result != 0 && error != EINVAL)
        throw Error("cannot sync the folder after renaming: " + systemReason(error), file.string());
}

}  // namespace

void writeFileAtomically(const std::filesystem::path& file, std::string_view contents) {
    std::filesystem::path temporary;
    int descriptor = openTemporaryNextTo(file, temporary);
    try {
        writeAll(descriptor, contents, file);
        if (::fsync(descriptor) != 0)
            throw Error("cannot flush to disk: " + systemReason(errno), file.string());
        if (::close(descriptor) != 0) {
            descriptor = -1;
            throw Error("cannot close: " + systemReason(errno), file.string());
        }
        descriptor = -1;
        if (::rename(temporary.c_str(), file.c_str()) != 0)
            throw Error("cannot replace the file: " + systemReason(errno), file.string(),
                        "check that it is not a folder and that the folder is writable");
    } catch (...) {
        if (descriptor >= 0) ::close(descriptor);
        std::error_code ignored;  // the original error is the one worth reporting
        std::filesystem::remove(temporary, ignored);
        throw;
    }
    syncFolder(file.parent_path(), file);
}

}  // namespace cnnstudio
