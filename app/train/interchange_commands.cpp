#include "train/interchange_commands.h"

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/safetensors.h"
#include "cnnstudio/network.h"
#include "cnnstudio/onnx_export.h"
#include "cnnstudio/onnx_import.h"
#include "common/output_paths.h"
#include "train/model_commands.h"

namespace cnnstudio::app {

void runExport(const ExportCommand& command, std::FILE* out) {
    const LocatedModel located = locateModel(command.target);
    if (command.onnx.empty() && command.modelFolder.empty())
        throw Error("nothing to write", "export", "give --onnx FILE, --model-folder DIR or both");
    if (!command.modelFolder.empty()) requireReplaceableByModelFolder(command.modelFolder, located.folder);
    // Weights that do not fit the spec would be written as they are, into a file no reader can
    // use: they are checked as predict and evaluate check them, by building the network (on
    // cpu-ref, which every build has).
    const std::unique_ptr<Backend> backend = createBackend("cpu-ref");
    buildModel(located, *backend, 1);
    for (const char* modelFile : {"model.safetensors", "spec.json", "model.json"})
        requireOutputIsNotInput(command.onnx, "--onnx", located.folder / modelFile, "model file");
    if (!command.onnx.empty()) {
        exportOnnx(located.model.spec, located.model.weights, command.onnx);
        std::fprintf(out, "wrote %s (ONNX opset %d, input \"%s\" (N, C, H, W), output \"%s\")\n",
                     command.onnx.string().c_str(), kOnnxOpset, kOnnxInputName, kOnnxOutputName);
    }
    if (!command.modelFolder.empty()) {
        writeModelFolder(command.modelFolder, located.model, parseWeightsDtype(command.weightsDtype));
        std::fprintf(out, "wrote %s (weights as %s)\n", command.modelFolder.string().c_str(),
                     command.weightsDtype.c_str());
    }
}

void runImport(const ImportCommand& command, std::FILE* out) {
    requireReplaceableByModelFolder(command.folder, command.onnx);
    const ImportedNetwork imported = importOnnx(command.onnx);
    // Building the network checks the spec and every weight's name and shape; cpu-ref is the
    // backend every build has.
    std::unique_ptr<Backend> backend = createBackend("cpu-ref");
    Network network(imported.spec, *backend, 1, 0);
    loadNetworkTensors(network, imported.weights, command.onnx);
    ModelInfo info;
    for (int c = 0; c < network.classes(); ++c) info.classNames.push_back("class " + std::to_string(c));
    info.trainedOn = {{"imported_from", std::filesystem::absolute(command.onnx).string()}};
    saveModel(command.folder, network, info);
    std::fprintf(out, "wrote %s (%zu layers, %d classes)\n", command.folder.string().c_str(),
                 imported.spec.nodes.size(), network.classes());
}

}  // namespace cnnstudio::app
