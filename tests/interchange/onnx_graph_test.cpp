// The graph description the engine gives the ONNX writer: what it covers and what it names.
#include <gtest/gtest.h>

#include <set>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/onnx_export.h"
#include "interchange/onnx_test_networks.h"
#include "layers/layer_type.h"

namespace cnnstudio {
namespace {

// The OpenCV and onnxruntime checks run this network; a new layer type must join it.
TEST(OnnxGraph, EveryLayerTypeNetworkHoldsEveryRegisteredType) {
    std::set<std::string> used;
    for (const NodeSpec& node : testing::everyLayerTypeSpec().nodes) used.insert(node.type);
    for (const LayerType& type : registeredLayerTypes()) {
        EXPECT_TRUE(used.contains(type.info.type)) << type.info.type << " is missing from every-layer-type";
        EXPECT_NE(type.exportOnnx, nullptr) << type.info.type << " has no ONNX mapping";
    }
}

TEST(OnnxGraph, NamesInputAndLogitsEvenWhereANodeIsCalledLogits) {
    std::unique_ptr<Backend> backend = createBackend("cpu-ref", {});
    const NetworkSpec spec = loadPreset("lenet5");
    ASSERT_NE(spec.find("logits"), nullptr) << "the preset no longer has a node called logits";
    Network network(spec, *backend, 1, 1);
    const OnnxGraph graph = describeAsOnnx(spec, networkTensors(network));
    EXPECT_EQ(graph.input, "input");
    EXPECT_EQ(graph.output, "logits");
    EXPECT_EQ(graph.classes, network.classes());
    std::set<std::string> outputs;
    for (const OnnxNode& node : graph.nodes)
        for (const std::string& output : node.outputs) EXPECT_TRUE(outputs.insert(output).second) << output;
}

TEST(OnnxGraph, MissingWeightNamesTheTensor) {
    const NetworkSpec spec = loadPreset("lenet5");
    try {
        describeAsOnnx(spec, {});
        FAIL() << "exported without weights";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(".weight"), std::string::npos) << error.what();
    }
}

}  // namespace
}  // namespace cnnstudio
