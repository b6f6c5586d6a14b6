// A network as an ONNX graph, described without protobuf: the engine knows what each layer type
// becomes in ONNX (each LayerType record holds its mapping), the interchange library
// (cnnstudio/onnx_export.h) turns this description into an ONNX model file. Keeping protobuf
// out of the engine keeps every other user of the engine free of it.
//
// The graph computes our inference forward pass: batch norm with its running statistics,
// dropout as the identity. Values are named after our nodes; a layer type that becomes several
// ONNX ops names the inner values "<node>/<step>".
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cnnstudio/safetensors.h"
#include "cnnstudio/spec.h"

namespace cnnstudio {

inline constexpr int kOnnxOpset = 13;

struct OnnxAttribute {
    std::string name;
    std::variant<std::int64_t, float, std::vector<std::int64_t>> value;
};

struct OnnxNode {
    std::string name;  // unique in the graph
    std::string op;    // an ONNX operator of the default domain, e.g. "Conv"
    std::vector<std::string> inputs, outputs;
    std::vector<OnnxAttribute> attributes;
};

// A constant: a weight (floats) or an operand such as a Reshape's target shape (int64s).
struct OnnxInitializer {
    std::string name;
    std::vector<std::int64_t> dims;
    std::vector<float> floats;       // for a float tensor
    std::vector<std::int64_t> int64s;  // for an int64 tensor; floats is then empty
};

struct OnnxGraph {
    std::string name;
    std::string input;   // (N, C, H, W) float, N dynamic
    std::int64_t inputChannels = 0, inputHeight = 0, inputWidth = 0;
    std::string output;  // (N, classes) float
    std::int64_t classes = 0;
    std::vector<OnnxNode> nodes;  // topological order
    std::vector<OnnxInitializer> initializers;
};

inline constexpr const char* kOnnxInputName = "input";
inline constexpr const char* kOnnxOutputName = "logits";

// Throws Error naming the node when the spec is invalid or a weight is missing or misshaped.
// `weights` are named as networkTensors() names them ("conv1.weight", "bn1.running_mean").
OnnxGraph describeAsOnnx(const NetworkSpec& spec, const std::vector<NamedTensor>& weights);

}  // namespace cnnstudio
