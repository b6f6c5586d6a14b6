// Reading a file whole: the checkpoint, model and safetensors readers all start this way.
#pragma once

#include <filesystem>
#include <string>

namespace cnnstudio {

// The file's bytes. Throws Error naming the file when it cannot be opened or read.
std::string readWholeFile(const std::filesystem::path& file);

}  // namespace cnnstudio
