// The sub-commands that move a model between CNN Studio and other formats: `export` (a model
// folder as an ONNX file).
#pragma once

#include <cstdio>
#include <filesystem>

namespace cnnstudio::app {

struct ExportCommand {
    std::filesystem::path target;  // a model folder, or a run folder holding model/
    std::filesystem::path onnx;    // the file to write
};

// Throws Error naming the model folder or the file at fault.
void runExport(const ExportCommand& command, std::FILE* out);

}  // namespace cnnstudio::app
