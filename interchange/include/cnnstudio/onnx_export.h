// A trained network as an ONNX model file (opset 13): input "input" (N, C, H, W) float with a
// dynamic batch, output "logits" (N, classes). Inference semantics: batch norm with its running
// statistics, dropout the identity. docs/interchange.md has the op mapping.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cnnstudio/onnx_graph.h"
#include "cnnstudio/safetensors.h"
#include "cnnstudio/spec.h"

namespace cnnstudio {

// The serialised ModelProto of `graph`, after ONNX's own checker passed it. Throws Error
// naming the graph when the checker refuses it.
std::string serializeOnnxModel(const OnnxGraph& graph);

// Writes `spec` with `weights` (named as networkTensors() names them) to `file`, atomically.
void exportOnnx(const NetworkSpec& spec, const std::vector<NamedTensor>& weights,
                const std::filesystem::path& file);

}  // namespace cnnstudio
