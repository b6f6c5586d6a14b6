// The sub-commands that move a model between CNN Studio and other formats: `export` (a model
// folder as an ONNX file) and `import` (an ONNX file as a model folder).
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

namespace cnnstudio::app {

struct ExportCommand {
    std::string target;                // a model folder, a run folder holding model/, or a model's name
    std::filesystem::path onnx;        // the ONNX file to write, or
    std::filesystem::path modelFolder; // the model folder to write, with weights as weightsDtype
    std::string weightsDtype = "fp32"; // fp32 | bf16 | fp16
};

struct ImportCommand {
    std::filesystem::path onnx;    // the file to read
    std::filesystem::path folder;  // the model folder to write
};

// Both throw Error naming the model folder, the file or the ONNX node at fault. Export writes
// the ONNX file, the model folder, or both.
void runExport(const ExportCommand& command, std::FILE* out);
// The model folder's model.json names the classes "class 0", "class 1", ... and has no input
// normalisation (an ONNX file says neither): the network reads pixel / 255.
void runImport(const ImportCommand& command, std::FILE* out);

}  // namespace cnnstudio::app
