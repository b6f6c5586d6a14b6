// The sub-commands that move a model between CNN Studio and other formats: `export` (a model
// folder as an ONNX file) and `import` (an ONNX file as a model folder).
#pragma once

#include <cstdio>
#include <filesystem>

namespace cnnstudio::app {

struct ExportCommand {
    std::filesystem::path target;  // a model folder, or a run folder holding model/
    std::filesystem::path onnx;    // the file to write
};

struct ImportCommand {
    std::filesystem::path onnx;    // the file to read
    std::filesystem::path folder;  // the model folder to write
};

// Both throw Error naming the model folder, the file or the ONNX node at fault.
void runExport(const ExportCommand& command, std::FILE* out);
// The model folder's model.json names the classes "class 0", "class 1", ... and has no input
// normalisation (an ONNX file says neither): the network reads pixel / 255.
void runImport(const ImportCommand& command, std::FILE* out);

}  // namespace cnnstudio::app
