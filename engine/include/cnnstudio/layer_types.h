// The layer types a network spec may use, as the designer shows them: each type's category,
// how many inputs it takes, and its parameters with their kinds, bounds, defaults and help.
// The palette lists layerTypes() in this order, grouped by category; the inspector builds its
// editors from a type's params. Behind each entry is the engine's registry record (shape rule,
// factory, flags), one file per layer family under engine/src/layers/.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cnnstudio {

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

// Every layer type, in the order the palette shows them.
const std::vector<LayerTypeInfo>& layerTypes();
// Null for a name no layer type has.
const LayerTypeInfo* findLayerType(const std::string& type);

}  // namespace cnnstudio
