// Replacing a whole folder (a checkpoint, the model) so that readers see the old one or the new
// one, never a mix: the new folder is built next to the target and swapped in with one
// renameat2(RENAME_EXCHANGE). File systems without the exchange (NFS) get two renames instead,
// and for the instant between them the old folder waits under "<target>.previous", which
// readers fall back to.
#pragma once

#include <filesystem>

namespace cnnstudio {

// An empty folder beside `target` to build the replacement in (created; stale ones removed).
std::filesystem::path createStagingFolder(const std::filesystem::path& target);

// Drops a staged folder whose writing failed; the error being thrown matters more than one in
// removing it, so that one is not reported.
void removeStagingFolder(const std::filesystem::path& staged);

// Moves `staged` to `target`, replacing and deleting any previous `target`, and makes the change
// durable (the parent folder is synced). Throws Error naming the target on failure.
void replaceFolder(const std::filesystem::path& staged, const std::filesystem::path& target);

// `target` if it exists, else the "<target>.previous" an interrupted two-rename replacement
// left behind, else `target` (whose absence the caller reports).
std::filesystem::path readableFolder(const std::filesystem::path& target);

// fsync on a folder, so that renames inside it survive a power cut. File systems that cannot
// sync a folder (EINVAL) are accepted: the data itself is on disk already.
void syncFolder(const std::filesystem::path& folder);

}  // namespace cnnstudio
