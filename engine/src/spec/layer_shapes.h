// What one layer makes of the shapes of its inputs: output shape, trainable parameters and
// forward FLOPs, per image. The graph walk around it lives in shape_inference.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cnnstudio/spec.h"

namespace cnnstudio {

struct LayerOutcome {
    TensorShape outputShape{1, 0, 0, 0};
    std::int64_t parameters = 0;
    std::int64_t forwardFlops = 0;
    std::string problem;  // empty when the layer fits its inputs
};

// `node` passed checkParams and has as many inputs as its type takes; inputShapes[i] is the
// (known) shape of node.inputs[i].
LayerOutcome inferLayer(const NodeSpec& node, const std::vector<TensorShape>& inputShapes);

// "(64,24,24)": channels, height, width, the way problems and summaries show a per-image shape.
std::string formatChw(const TensorShape& shape);

}  // namespace cnnstudio
