// Reading a node's params: validation against the layer catalogue, and typed readers that fill
// in the catalogue's defaults. Shape inference uses these; so does whatever builds layers from
// a spec, so that a parameter means the same thing everywhere.
#pragma once

#include <string>

#include "cnnstudio/spec.h"

namespace cnnstudio {

struct SpatialPair {
    int height = 1, width = 1;
    bool operator==(const SpatialPair&) const = default;
};

// Conv2D and SeparableConv2D (whose groups is 1: the depthwise step is implied by the type).
struct ConvSettings {
    int filters = 1;
    SpatialPair kernel, stride, padding;  // padding resolved: "valid" = 0, "same" = (k-1)/2
    int groups = 1;
    bool bias = true;
};

// MaxPool2D and AvgPool2D.
struct PoolSettings {
    SpatialPair kernel, stride, padding;
};

// Empty when node.params fit the catalogue entry `type` (known names, right JSON types, within
// bounds, "same" padding with an odd kernel, pool padding at most half the kernel); otherwise
// the first problem, in words for the user.
std::string checkParams(const NodeSpec& node, const LayerTypeInfo& type);

// Readers for a node whose params passed checkParams; an absent parameter takes its default.
int intParam(const NodeSpec& node, const std::string& name);
double floatParam(const NodeSpec& node, const std::string& name);
bool boolParam(const NodeSpec& node, const std::string& name);
ConvSettings convSettings(const NodeSpec& node);
PoolSettings poolSettings(const NodeSpec& node);

}  // namespace cnnstudio
