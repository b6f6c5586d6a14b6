// The network spec: a JSON document of named nodes (layers) and the edges between them (each
// node lists its inputs), a DAG. Shape inference runs on the spec alone, with no backend, so the
// designer can annotate nodes while the user edits.
//
// JSON form (format "cnnstudio-network", version 1):
//   { "format": "cnnstudio-network", "version": 1, "name": "fer-cnn", "description": "...",
//     "nodes": [ {"name": "input", "type": "Input", "params": {"channels": 1, "height": 48, "width": 48}},
//                {"name": "conv1", "type": "Conv2D", "inputs": ["input"],
//                 "params": {"filters": 64, "kernel": 3, "padding": "same", "bias": false}}, ... ],
//     "layout": { "conv1": [120.0, 40.0], ... } }          // designer positions, optional
// Exactly one Input node; the network's output (the logits) is the one node nobody consumes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cnnstudio/tensor.h"

namespace cnnstudio {

struct NodeSpec {
    std::string name;
    std::string type;                 // one of layerTypes()
    nlohmann::json params = nlohmann::json::object();
    std::vector<std::string> inputs;  // names of the nodes feeding this one, in order

    bool operator==(const NodeSpec&) const = default;
};

struct NetworkSpec {
    std::string name;
    std::string description;
    std::vector<NodeSpec> nodes;
    std::map<std::string, std::pair<double, double>> layout;  // node name -> designer position

    const NodeSpec* find(const std::string& nodeName) const;
    NodeSpec* find(const std::string& nodeName);

    static NetworkSpec fromJson(const nlohmann::json& document);  // throws Error on bad structure
    nlohmann::json toJson() const;
    static NetworkSpec load(const std::filesystem::path& file);  // Error names the file
    void save(const std::filesystem::path& file) const;          // atomic: temp file + rename

    bool operator==(const NetworkSpec&) const = default;
};

// One parameter a layer type takes, for validated editors and the docs.
struct ParamInfo {
    std::string name;         // "filters"
    std::string kind;         // "int", "float", "bool", "int-pair" (n or [h, w]), "padding"
    nlohmann::json defaultValue;  // null: required, unless defaultsTo names another parameter
    std::string defaultsTo;   // "kernel": when absent, takes that parameter's value (pool stride)
    double minimum = 0, maximum = 0;  // for numbers; minimum == maximum: no bound
    std::string help;         // one line for the inspector's tooltip
};

struct LayerTypeInfo {
    std::string type;         // "Conv2D"
    std::string category;     // "Input", "Convolution", "Pooling", "Normalisation", "Activation",
                              // "Regularisation", "Structure", "Dense"
    int minInputs = 1, maxInputs = 1;  // Input: 0, 0; Add/Concat: 2, unbounded (-1)
    std::vector<ParamInfo> params;
    std::string help;
};

const std::vector<LayerTypeInfo>& layerTypes();
const LayerTypeInfo* findLayerType(const std::string& type);

// What shape inference found for one node. Shapes are per image (batch 1).
struct NodeInfo {
    std::string name;
    std::string type;
    TensorShape outputShape{1, 0, 0, 0};  // channels 0: unknown (this node or an input is broken)
    std::int64_t parameters = 0;    // trainable, as PyTorch counts them
    std::int64_t forwardFlops = 0;  // one multiply-add = 2 FLOPs, per image
    std::string problem;            // empty when the node is fine
};

struct ShapeReport {
    std::vector<NodeInfo> nodes;    // topological order (nodes in a cycle come last)
    std::vector<std::pair<std::string, std::string>> problems;  // node ("": network), message
    std::int64_t totalParameters = 0;
    std::int64_t totalForwardFlops = 0;
    std::int64_t activationBytesPerImage = 0;  // all node outputs, float32
    std::string outputNode;         // empty unless there is exactly one
    TensorShape inputShape{1, 0, 0, 0}, outputShape{1, 0, 0, 0};

    bool ok() const { return problems.empty(); }
    const NodeInfo* find(const std::string& nodeName) const;
};

// Never throws for a bad graph: every problem is reported against its node. A node whose
// input is broken is not re-reported; its own info stays empty.
ShapeReport analyseSpec(const NetworkSpec& spec);
// Throws Error naming the first problem's node ("node 'add1': shapes (64,24,24) and (32,24,24) differ").
ShapeReport inferShapes(const NetworkSpec& spec);

// The table the CLI prints for --summary: per node its name, type, output shape (C×H×W),
// parameters and forward FLOPs, then the totals and any problems. UTF-8, ends with a newline.
std::string formatSummaryTable(const ShapeReport& report);

// Built-in presets from resources/presets (compiled into the engine).
std::vector<std::string> presetNames();
NetworkSpec loadPreset(const std::string& name);  // throws Error listing the presets

}  // namespace cnnstudio
