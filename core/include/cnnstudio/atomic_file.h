// Writing a file so that readers see either the old contents or the new, never a torn mix:
// the bytes go to a temporary file in the same folder, are flushed to disk, and the temporary
// file is renamed over the target (rename is atomic within one file system).
#pragma once

#include <filesystem>
#include <string_view>

namespace cnnstudio {

// Throws Error naming the file when any step fails; the temporary file is removed then.
void writeFileAtomically(const std::filesystem::path& file, std::string_view contents);

}  // namespace cnnstudio
