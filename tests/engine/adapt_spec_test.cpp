// Fitting a preset to a data set: the Input node takes the image shape, the layer producing the
// class scores (found by walking back from the output) takes the class count, and a network
// that cannot be fitted is refused naming the node.
#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "cnnstudio/trainer.h"

namespace cnnstudio {
namespace {

std::string errorWhere(const NetworkSpec& spec, int channels, int height, int width, int classes) {
    try {
        adaptSpecToDataset(spec, channels, height, width, classes);
    } catch (const Error& error) {
        return error.where();
    }
    return "no error";
}

TEST(AdaptSpec, DenseOutputTakesTheClassCountAndInputTakesTheImageShape) {
    const SpecAdaptation adapted = adaptSpecToDataset(loadPreset("lenet5"), 3, 32, 32, 7);
    EXPECT_EQ(adapted.spec.find("input")->params["channels"], 3);
    EXPECT_EQ(adapted.spec.find("input")->params["height"], 32);
    EXPECT_EQ(adapted.spec.find("logits")->params["units"], 7);
    ASSERT_EQ(adapted.changes.size(), 2u);
    EXPECT_EQ(adapted.changes[0], "node 'input': channels 1 -> 3, height 28 -> 32, width 28 -> 32");
    EXPECT_EQ(adapted.changes[1], "node 'logits': units 10 -> 7");
    EXPECT_EQ(inferShapes(adapted.spec).outputShape.channels, 7);
}

TEST(AdaptSpec, MatchingDataSetChangesNothing) {
    const SpecAdaptation adapted = adaptSpecToDataset(loadPreset("lenet5"), 1, 28, 28, 10);
    EXPECT_TRUE(adapted.changes.empty());
    EXPECT_EQ(adapted.spec, loadPreset("lenet5"));
}

TEST(AdaptSpec, ConvolutionBeforeGlobalPoolingTakesTheClassCount) {
    // mini-xception ends conv_out -> gap -> flatten.
    const SpecAdaptation adapted = adaptSpecToDataset(loadPreset("mini-xception"), 1, 48, 48, 10);
    EXPECT_EQ(adapted.spec.find("conv_out")->params["filters"], 10);
    ASSERT_EQ(adapted.changes.size(), 1u);
    EXPECT_EQ(adapted.changes[0], "node 'conv_out': filters 7 -> 10");
}

TEST(AdaptSpec, WalkPassesDropoutActivationsAndBatchNorm) {
    const SpecAdaptation adapted = adaptSpecToDataset(loadPreset("vgg-fer"), 1, 48, 48, 3);
    EXPECT_EQ(adapted.spec.find("logits")->params["units"], 3);
    NetworkSpec trailing = loadPreset("fer-cnn");
    trailing.nodes.push_back({"out_drop", "Dropout", {{"rate", 0.1}}, {"logits"}});
    trailing.nodes.push_back({"out_act", "ELU", nlohmann::json::object(), {"out_drop"}});
    EXPECT_EQ(adaptSpecToDataset(trailing, 1, 48, 48, 4).spec.find("logits")->params["units"], 4);
}

TEST(AdaptSpec, AnOutputWithoutScoreLayerNamesTheNode) {
    NetworkSpec pooled = loadPreset("lenet5");
    pooled.nodes.push_back({"final_pool", "MaxPool2D", {{"kernel", 1}}, {"logits"}});
    EXPECT_EQ(errorWhere(pooled, 1, 28, 28, 10), "node 'final_pool'");

    NetworkSpec twoOutputs = loadPreset("lenet5");
    twoOutputs.nodes.push_back({"side", "ReLU", nlohmann::json::object(), {"fc1"}});
    EXPECT_NE(errorWhere(twoOutputs, 1, 28, 28, 10).find("lenet5"), std::string::npos);
}

TEST(AdaptSpec, ImagesTooSmallForTheNetworkNameTheNodeThatBreaks) {
    const std::string where = errorWhere(loadPreset("lenet5"), 1, 6, 6, 10);
    EXPECT_NE(where.find("node '"), std::string::npos) << where;
    EXPECT_EQ(errorWhere(loadPreset("lenet5"), 1, 28, 28, 1), "data set");
}

}  // namespace
}  // namespace cnnstudio
