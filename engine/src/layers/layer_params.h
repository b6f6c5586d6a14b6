// A node's params: the parameter descriptions several layer families share, the check of a
// node's params against its type's descriptions, and typed readers that fill in the defaults.
// Shape rules and factories read params only through these, so that a parameter means the
// same thing everywhere.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cnnstudio/layer_types.h"
#include "cnnstudio/spec.h"

namespace cnnstudio {

struct LayerType;

// Practical bounds: every size must fit the int fields of the Backend geometry structs, and a
// value beyond these is a typo rather than a design.
constexpr double maxChannels = 65536, maxImageSide = 65536, maxWindow = 1024;

// Descriptions shared by several families.
ParamInfo channelsParam(std::string name, std::string help);  // "filters", "units": required
ParamInfo kernelParam(nlohmann::json defaultValue);           // null: required
ParamInfo biasParam();

struct SpatialPair {
    int height = 1, width = 1;
    bool operator==(const SpatialPair&) const = default;
};

// "3x3", the way problems show a window or padding.
std::string formatPair(SpatialPair pair);

// Empty when node.params fit `type` (known names, right JSON types, within bounds, then the
// type's own checkParams rule); otherwise the first problem, in words for the user.
std::string checkParams(const NodeSpec& node, const LayerType& type);

// Readers for a node whose params passed checkParams; an absent parameter takes its default.
const nlohmann::json& paramValue(const NodeSpec& node, const std::string& name);
int intParam(const NodeSpec& node, const std::string& name);
double floatParam(const NodeSpec& node, const std::string& name);
bool boolParam(const NodeSpec& node, const std::string& name);
SpatialPair pairParam(const NodeSpec& node, const std::string& name);  // "int-pair": n or [h, w]

}  // namespace cnnstudio
