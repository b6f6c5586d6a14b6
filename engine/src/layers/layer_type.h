// The layer-type registry: one LayerType record per type, everything the engine knows about
// it in one place. Each family's file under engine/src/layers/ (convolution.cpp, pooling.cpp,
// ...) defines its records next to its Layer classes and shape rules; layer_registry.cpp lists
// them, in palette order. Shape inference, parameter checks, Network and adaptSpecToDataset ask
// the record, never compare type names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/tensor.h"
#include "layers/layer.h"

namespace cnnstudio {

// What one layer makes of the shapes of its inputs, per image.
struct LayerOutcome {
    TensorShape outputShape{1, 0, 0, 0};
    std::int64_t parameters = 0;    // trainable, as PyTorch counts them
    std::int64_t forwardFlops = 0;  // one multiply-add = 2 FLOPs
    std::string problem;            // empty when the layer fits its inputs
};

// What a factory builds a layer from. The shapes carry the batch.
struct LayerBuild {
    Backend& backend;
    const NodeSpec& node;                       // passed shape inference
    const std::vector<TensorShape>& inputShapes;
    const TensorShape& outputShape;
    Initialisation initialisation;              // for the layer's weights
    std::uint64_t seed;                         // for the layer's random masks (dropout)
};

// Roles the graph code asks about. Each is true for exactly the types that need the behaviour.
struct LayerTraits {
    // The node the caller fills with the images (Input): exactly one per network, and no
    // gradient is computed for it.
    bool isNetworkInput = false;
    // Learned weights mixing inputs (Conv2D, SeparableConv2D, Dense): initialised He when the
    // layer feeds an activation, Glorot otherwise.
    bool hasWeights = false;
    // A ReLU-like nonlinearity: weights feeding one get He initialisation.
    bool isActivation = false;
    // May sit between weights and their activation without changing which initialisation
    // suits them (BatchNorm2D, Dropout).
    bool transparentToInitialisation = false;
    // Exactly max(x, 0): what a batch norm before it fuses with.
    bool isRelu = false;
    // Trains together with a ReLU that alone reads its output (Layer::forwardWithRelu).
    bool absorbsFollowingRelu = false;
    // May sit between the layer producing the class scores and the network's output:
    // adaptSpecToDataset walks back through it.
    bool passesClassScoresThrough = false;
    // Non-empty where this layer can produce the class scores: the parameter holding their
    // count ("units", "filters"), which adaptSpecToDataset sets to the data set's classes.
    std::string classCountParam;
};

class OnnxGraphBuilder;  // onnx/onnx_graph_builder.h

using ParamRule = std::string (*)(const NodeSpec& node);
using ShapeRule = LayerOutcome (*)(const NodeSpec& node, const std::vector<TensorShape>& inputShapes);
using LayerFactory = std::unique_ptr<Layer> (*)(const LayerBuild& build);
using OnnxExport = void (*)(const NodeSpec& node, OnnxGraphBuilder& graph);

// Everything about one layer type, its ONNX mapping included.
struct LayerType {
    LayerTypeInfo info;  // name, category, inputs, parameters: what the palette and inspector show
    LayerTraits traits;
    // Rules that tie parameters together or that a plain range cannot say; runs once every
    // parameter has passed its own kind and bounds check. Returns the problem in words for the
    // user, or "". Null where the ranges say everything.
    ParamRule checkParams = nullptr;
    // Output shape, parameters and forward FLOPs for a node that passed its parameter checks
    // and has as many inputs as the type takes; inputShapes[i] is the shape of node.inputs[i].
    ShapeRule inferShape = nullptr;
    LayerFactory create = nullptr;
    // The ONNX ops (opset kOnnxOpset) the type becomes at inference, with their attributes and
    // weights, for a node that passed shape inference (cnnstudio/onnx_graph.h).
    OnnxExport exportOnnx = nullptr;
};

// Every registered type, in the order the palette shows them.
const std::vector<LayerType>& registeredLayerTypes();
// Null for a name no layer type has.
const LayerType* findRegisteredLayerType(std::string_view name);

}  // namespace cnnstudio
