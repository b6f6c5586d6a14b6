// The network spec: a JSON document of named nodes (layers) and the edges between them (each
// node lists its inputs), a DAG. This is the document only: reading, writing and checking its
// structure. What the layer types are and what shapes flow through the graph is the engine's
// (cnnstudio/layer_types.h, cnnstudio/shape_inference.h), which runs on the spec alone, with no
// backend, so the designer can annotate nodes while the user edits.
//
// JSON form (format "cnnstudio-network", version 1):
//   { "format": "cnnstudio-network", "version": 1, "name": "fer-cnn", "description": "...",
//     "nodes": [ {"name": "input", "type": "Input", "params": {"channels": 1, "height": 48, "width": 48}},
//                {"name": "conv1", "type": "Conv2D", "inputs": ["input"],
//                 "params": {"filters": 64, "kernel": 3, "padding": "same", "bias": false}}, ... ],
//     "layout": { "conv1": [120.0, 40.0], ... } }          // designer positions, optional
// Exactly one Input node; the network's output (the logits) is the one node nobody consumes.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cnnstudio {

struct NodeSpec {
    std::string name;
    std::string type;                 // a layer type name, e.g. "Conv2D"
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

}  // namespace cnnstudio
