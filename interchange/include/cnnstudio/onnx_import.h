// An ONNX model (ours, or PyTorch's torch.onnx.export of a network made of our op set) as a CNN
// Studio spec and weights. docs/interchange.md lists the ops read and what each becomes.
#pragma once

#include <filesystem>
#include <vector>

#include "cnnstudio/safetensors.h"
#include "cnnstudio/spec.h"

namespace cnnstudio {

struct ImportedNetwork {
    NetworkSpec spec;
    std::vector<NamedTensor> weights;  // named as networkTensors() names them
};

// Throws Error naming the ONNX node ("node 'Resize_12'") for an op or setting CNN Studio has
// not, and the file for one that is not an ONNX model.
ImportedNetwork importOnnx(const std::filesystem::path& file);

}  // namespace cnnstudio
