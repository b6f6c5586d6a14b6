// Layered auto-layout of a network drawing: top to bottom by topological depth (the longest path
// from the Input node), each layer centred, nodes within a layer ordered by where their inputs are.
// A long network is wrapped into several columns, read left to right, so that all of it fits a
// landscape canvas at a size where the cards can be read; a column only ends where a single edge
// leads on to the next one, from a card alone in its row to a card alone in its row.
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
    // Between the columns of a wrapped layout: room for the edge that climbs to the next column.
    static constexpr double columnGap = 100;
};

// The canvas the wrapping is chosen for, in pixels: the Design page's canvas in the app's
// default 1400x880 window. Columns are added until the network, fitted into it, is shown at
// readableZoom (or as large as any wrapping can show it).
struct LayoutTarget {
    static constexpr double canvasWidth = 880;
    static constexpr double canvasHeight = 560;
    static constexpr double readableZoom = 0.75;
};

// Top-left corner of every node. Nodes in a cycle (which the analysis reports) go in a last row.
std::map<std::string, std::pair<double, double>> layeredLayout(const NetworkSpec& spec);

}  // namespace cnnstudio::ui
