#include "train/interchange_commands.h"

#include "cnnstudio/onnx_export.h"
#include "train/model_commands.h"

namespace cnnstudio::app {

void runExport(const ExportCommand& command, std::FILE* out) {
    const LocatedModel located = locateModel(command.target);
    exportOnnx(located.model.spec, located.model.weights, command.onnx);
    std::fprintf(out, "wrote %s (ONNX opset %d, input \"%s\" (N, C, H, W), output \"%s\")\n",
                 command.onnx.string().c_str(), kOnnxOpset, kOnnxInputName, kOnnxOutputName);
}

}  // namespace cnnstudio::app
