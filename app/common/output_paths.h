// The headless programs' outputs checked against their inputs before any work: an output path
// that names an input (the video being read, the data set, the model's own weights) would be
// overwritten by the run that reads it.
#pragma once

#include <filesystem>
#include <string>

namespace cnnstudio {

// Throws Error naming both options when `output` (given as `outputOption`) is the same file as
// `input` (given as `inputOption`), or lies inside it where `input` is a folder. The same file is
// the same device and inode, so another spelling of the path, a symbolic link or a hard link is
// caught too; an output that does not exist yet is no input. Either path empty: nothing to check.
void requireOutputIsNotInput(const std::filesystem::path& output, const std::string& outputOption,
                             const std::filesystem::path& input, const std::string& inputOption);

// Throws Error naming `option` and the path when a file cannot be written at `output` (its folder
// is missing, not a folder or not writable, or `output` is a folder): checked before the work, so
// that hours of it are not lost to a typo found at the end. Empty: nothing to check.
void requireWritableOutput(const std::filesystem::path& output, const std::string& option);

}  // namespace cnnstudio
