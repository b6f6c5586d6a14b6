// Layered auto-layout of a network drawing: top to bottom by topological depth (the longest path
// from the Input node), each layer centred, nodes within a layer ordered by where their inputs are.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "cnnstudio/spec.h"

namespace cnnstudio::ui {

// The size of a node on the canvas and the gaps the layout leaves, in scene units.
struct NodeMetrics {
    static constexpr double width = 210;
    static constexpr double height = 84;
    static constexpr double horizontalGap = 40;
    static constexpr double verticalGap = 60;
};

// Top-left corner of every node. Nodes in a cycle (which the analysis reports) go in a last row.
std::map<std::string, std::pair<double, double>> layeredLayout(const NetworkSpec& spec);

}  // namespace cnnstudio::ui
