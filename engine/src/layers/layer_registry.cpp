// The one list of layer types. Each record is built by a function in its family's file; the
// list below is the palette's order (grouped there by category, first appearance first).
// Built on first use, not by static initialisers, so the order is this list's and a debugger
// can step through it.
#include "layers/layer_type.h"

#include "cnnstudio/error.h"

namespace cnnstudio {

// structure.cpp
LayerType inputLayerType();
LayerType flattenLayerType();
LayerType addLayerType();
LayerType concatLayerType();
// convolution.cpp
LayerType conv2dLayerType();
LayerType separableConv2dLayerType();
// pooling.cpp
LayerType maxPool2dLayerType();
LayerType avgPool2dLayerType();
LayerType globalAvgPoolLayerType();
// batch_norm.cpp
LayerType batchNorm2dLayerType();
// activations.cpp
LayerType reluLayerType();
LayerType leakyReluLayerType();
LayerType eluLayerType();
LayerType siluLayerType();
// dropout.cpp
LayerType dropoutLayerType();
// dense.cpp
LayerType denseLayerType();

const std::vector<LayerType>& registeredLayerTypes() {
    static const std::vector<LayerType> registry{
        inputLayerType(),
        conv2dLayerType(),
        separableConv2dLayerType(),
        maxPool2dLayerType(),
        avgPool2dLayerType(),
        globalAvgPoolLayerType(),
        batchNorm2dLayerType(),
        reluLayerType(),
        leakyReluLayerType(),
        eluLayerType(),
        siluLayerType(),
        dropoutLayerType(),
        flattenLayerType(),
        denseLayerType(),
        addLayerType(),
        concatLayerType(),
    };
    return registry;
}

const LayerType* findRegisteredLayerType(std::string_view name) {
    for (const LayerType& type : registeredLayerTypes())
        if (type.info.type == name) return &type;
    return nullptr;
}

const std::vector<LayerTypeInfo>& layerTypes() {
    static const std::vector<LayerTypeInfo> infos = [] {
        std::vector<LayerTypeInfo> list;
        for (const LayerType& type : registeredLayerTypes()) list.push_back(type.info);
        return list;
    }();
    return infos;
}

const LayerTypeInfo* findLayerType(const std::string& type) {
    for (const LayerTypeInfo& info : layerTypes())
        if (info.type == type) return &info;
    return nullptr;
}

std::unique_ptr<Layer> createLayer(Backend& backend, const NodeSpec& node,
                                   const std::vector<TensorShape>& inputShapes,
                                   const TensorShape& outputShape, Initialisation init,
                                   std::uint64_t seed) {
    const LayerType* type = findRegisteredLayerType(node.type);
    if (!type) throw Error("layer type '" + node.type + "' cannot be built", "node '" + node.name + "'");
    return type->create({backend, node, inputShapes, outputShape, init, seed});
}

}  // namespace cnnstudio
