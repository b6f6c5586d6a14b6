// The layer-type registry: every record is complete and consistent with itself (its defaults
// pass its own checks, its shape rule and its factory agree on the parameter count), the
// traits the graph code relies on name sensible types, and the palette and presets see it.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/presets.h"
#include "layers/layer_params.h"
#include "layers/layer_type.h"

namespace cnnstudio {
namespace {

// The smallest value a required parameter accepts: the parameter's lower bound.
nlohmann::json smallestValue(const ParamInfo& param) {
    if (param.kind == "bool") return false;
    if (param.kind == "float") return param.minimum;
    return int(param.minimum);  // "int", "int-pair", "padding"
}

bool isRequired(const ParamInfo& param) {
    return param.defaultValue.is_null() && param.defaultsTo.empty();
}

// A node of `type` with its required parameters at their smallest value and the others absent.
NodeSpec nodeWithDefaults(const LayerType& type) {
    NodeSpec node{"node", type.info.type, nlohmann::json::object(), {}};
    for (const ParamInfo& param : type.info.params)
        if (isRequired(param)) node.params[param.name] = smallestValue(param);
    for (int i = 0; i < std::max(type.info.minInputs, 0); ++i)
        node.inputs.push_back("input" + std::to_string(i));
    return node;
}

// Per-image shapes of the inputs nodeWithDefaults names: 4 channels of 12x12 each.
std::vector<TensorShape> defaultInputShapes(const NodeSpec& node) {
    return std::vector<TensorShape>(node.inputs.size(), TensorShape{1, 4, 12, 12});
}

std::int64_t elementCount(const std::vector<std::int64_t>& shape) {
    std::int64_t count = 1;
    for (std::int64_t side : shape) count *= side;
    return count;
}

TEST(LayerRegistry, EveryTypeHasAShapeRuleAndAFactory) {
    ASSERT_FALSE(registeredLayerTypes().empty());
    for (const LayerType& type : registeredLayerTypes()) {
        EXPECT_NE(type.inferShape, nullptr) << type.info.type;
        EXPECT_NE(type.create, nullptr) << type.info.type;
    }
}

TEST(LayerRegistry, NamesAreUniqueAndFindTheirRecord) {
    for (const LayerType& type : registeredLayerTypes()) {
        EXPECT_EQ(findRegisteredLayerType(type.info.type), &type) << type.info.type;
        EXPECT_EQ(findLayerType(type.info.type)->type, type.info.type);
    }
    EXPECT_EQ(findRegisteredLayerType("Conv3D"), nullptr);
}

TEST(LayerRegistry, CategoriesComeFromThePaletteList) {
    const std::set<std::string> known{"Input",      "Convolution",    "Pooling",   "Normalisation",
                                      "Activation", "Regularisation", "Structure", "Dense"};
    for (const LayerType& type : registeredLayerTypes())
        EXPECT_TRUE(known.count(type.info.category)) << type.info.type << ": " << type.info.category;
}

TEST(LayerRegistry, DefaultsPassTheTypesOwnChecks) {
    for (const LayerType& type : registeredLayerTypes()) {
        NodeSpec node = nodeWithDefaults(type);
        EXPECT_EQ(checkParams(node, type), "") << type.info.type << " with its defaults left out";
        for (const ParamInfo& param : type.info.params)
            if (!param.defaultValue.is_null()) node.params[param.name] = param.defaultValue;
        EXPECT_EQ(checkParams(node, type), "") << type.info.type << " with its defaults written out";
    }
}

// The shape rule and the layer the factory builds must agree on the trainable parameters:
// the summary shows one, the checkpoint stores the other.
TEST(LayerRegistry, FactoryBuildsWhatTheShapeRuleCounted) {
    auto backend = createBackend("cpu-ref");
    const int batch = 2;
    for (const LayerType& type : registeredLayerTypes()) {
        const NodeSpec node = nodeWithDefaults(type);
        const std::vector<TensorShape> inputs = defaultInputShapes(node);
        const LayerOutcome outcome = type.inferShape(node, inputs);
        ASSERT_EQ(outcome.problem, "") << type.info.type;
        ASSERT_GT(outcome.outputShape.countPerImage(), 0) << type.info.type;

        std::vector<TensorShape> batchInputs;
        for (const TensorShape& shape : inputs) batchInputs.push_back(shape.withBatch(batch));
        const TensorShape batchOutput = outcome.outputShape.withBatch(batch);
        std::unique_ptr<Layer> layer = type.create(
            {*backend, node, batchInputs, batchOutput, Initialisation::Glorot, 1});
        ASSERT_NE(layer, nullptr) << type.info.type;
        std::int64_t requested = 0;
        for (const BufferRequest& request : layer->parameterRequests())
            requested += elementCount(request.shape);
        EXPECT_EQ(requested, outcome.parameters) << type.info.type;
    }
}

TEST(LayerRegistry, ClassCountParamIsOneOfTheTypesWholeNumbers) {
    int producers = 0;
    for (const LayerType& type : registeredLayerTypes()) {
        const std::string& name = type.traits.classCountParam;
        if (name.empty()) continue;
        ++producers;
        const auto& params = type.info.params;
        auto param = std::find_if(params.begin(), params.end(),
                                  [&](const ParamInfo& p) { return p.name == name; });
        ASSERT_NE(param, params.end()) << type.info.type << " has no parameter '" << name << "'";
        EXPECT_EQ(param->kind, "int") << type.info.type << "." << name;
        EXPECT_FALSE(type.traits.passesClassScoresThrough) << type.info.type;
    }
    EXPECT_GE(producers, 1) << "adaptSpecToDataset needs a type that can produce the class scores";
}

TEST(LayerRegistry, OneNetworkInputTypeAndOneRelu) {
    std::vector<std::string> inputs, relus;
    for (const LayerType& type : registeredLayerTypes()) {
        if (type.traits.isNetworkInput) {
            inputs.push_back(type.info.type);
            EXPECT_EQ(type.info.maxInputs, 0) << "the network input is fed by the caller";
        }
        if (type.traits.isRelu) {
            relus.push_back(type.info.type);
            EXPECT_TRUE(type.traits.isActivation) << type.info.type;
        }
    }
    EXPECT_EQ(inputs, std::vector<std::string>{"Input"});
    EXPECT_EQ(relus, std::vector<std::string>{"ReLU"});
}

TEST(LayerRegistry, EveryPresetUsesRegisteredTypesOnly) {
    ASSERT_FALSE(presetNames().empty());
    for (const std::string& preset : presetNames())
        for (const NodeSpec& node : loadPreset(preset).nodes)
            EXPECT_NE(findRegisteredLayerType(node.type), nullptr)
                << "preset " << preset << ", node '" << node.name << "': " << node.type;
}

// The palette lists layerTypes() grouped by category in order of first appearance.
TEST(LayerRegistry, PaletteShowsTheRegistryInItsOrder) {
    const auto& infos = layerTypes();
    ASSERT_EQ(infos.size(), registeredLayerTypes().size());
    for (std::size_t i = 0; i < infos.size(); ++i)
        EXPECT_EQ(infos[i].type, registeredLayerTypes()[i].info.type) << "position " << i;

    std::vector<std::string> categories;
    for (const LayerTypeInfo& info : infos)
        if (std::find(categories.begin(), categories.end(), info.category) == categories.end())
            categories.push_back(info.category);
    EXPECT_EQ(categories, (std::vector<std::string>{"Input", "Convolution", "Pooling", "Normalisation",
                                                    "Activation", "Regularisation", "Structure", "Dense"}));
}

}  // namespace
}  // namespace cnnstudio
