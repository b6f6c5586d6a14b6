// Shape inference on good graphs: output shapes, parameter counts as PyTorch counts them, FLOPs
// by the documented convention (worked out by hand here), the presets and the summary table.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/layer_types.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "engine/spec_builders.h"

namespace cnnstudio {
namespace {

using nlohmann::json;
using spec_testing::input;
using spec_testing::network;
using spec_testing::node;

TensorShape chw(int channels, int height, int width) { return {1, channels, height, width}; }

// Shape inference of input -> layer -> Flatten, returning the layer's info.
NodeInfo inferOne(TensorShape in, NodeSpec layer) {
    layer.inputs = {"input"};
    std::string name = layer.name;
    ShapeReport report = inferShapes(network({input(in.channels, in.height, in.width), std::move(layer),
                                              node("out", "Flatten", {name})}));
    return *report.find(name);
}

TEST(SpecShapes, ConvFlopsAndParametersMatchTheHandCount) {
    NodeInfo conv = inferOne(chw(3, 32, 32), node("conv", "Conv2D", {}, {{"filters", 16}, {"kernel", 3}, {"padding", "same"}}));
    EXPECT_EQ(conv.outputShape, chw(16, 32, 32));
    EXPECT_EQ(conv.parameters, 16 * 3 * 3 * 3 + 16);
    // 2 * outC*outH*outW * inC*kh*kw multiply-adds, plus one add per output for the bias.
    EXPECT_EQ(conv.forwardFlops, 2 * 16 * 32 * 32 * 3 * 9 + 16 * 32 * 32);
    EXPECT_EQ(conv.forwardFlops, 901120);
}

TEST(SpecShapes, StridedConvWithoutBiasFollowsTheFloorFormula) {
    NodeInfo conv = inferOne(chw(2, 7, 7), node("conv", "Conv2D", {}, {{"filters", 4}, {"kernel", 3}, {"stride", 2}, {"bias", false}}));
    EXPECT_EQ(conv.outputShape, chw(4, 3, 3));  // floor((7 - 3) / 2) + 1
    EXPECT_EQ(conv.parameters, 4 * 2 * 9);
    EXPECT_EQ(conv.forwardFlops, 2 * 4 * 3 * 3 * 2 * 9);
    NodeInfo padded = inferOne(chw(2, 8, 8), node("conv", "Conv2D", {}, {{"filters", 4}, {"kernel", 3}, {"stride", 2}, {"padding", 1}}));
    EXPECT_EQ(padded.outputShape, chw(4, 4, 4));  // floor((8 + 2 - 3) / 2) + 1
}

TEST(SpecShapes, KernelStrideAndPaddingAcceptHeightWidthPairs) {
    NodeInfo conv = inferOne(chw(1, 10, 10), node("conv", "Conv2D", {}, {{"filters", 2}, {"kernel", {3, 5}}, {"stride", {1, 2}}, {"padding", {1, 0}}}));
    EXPECT_EQ(conv.outputShape, chw(2, 10, 3));  // height (10+2-3)/1+1, width floor((10-5)/2)+1
    EXPECT_EQ(conv.parameters, 2 * 1 * 3 * 5 + 2);
}

TEST(SpecShapes, SamePaddingKeepsTheSizeAtStrideOne) {
    NodeInfo conv = inferOne(chw(1, 9, 11), node("conv", "Conv2D", {}, {{"filters", 2}, {"kernel", {5, 3}}, {"padding", "same"}}));
    EXPECT_EQ(conv.outputShape, chw(2, 9, 11));
}

TEST(SpecShapes, GroupedConvCountsOneGroupOfInputChannelsPerFilter) {
    NodeInfo conv = inferOne(chw(8, 5, 5), node("conv", "Conv2D", {}, {{"filters", 16}, {"kernel", 3}, {"padding", 1}, {"groups", 4}}));
    EXPECT_EQ(conv.outputShape, chw(16, 5, 5));
    EXPECT_EQ(conv.parameters, 16 * 2 * 9 + 16);
    EXPECT_EQ(conv.forwardFlops, 2 * 16 * 25 * 2 * 9 + 16 * 25);
}

TEST(SpecShapes, SeparableConvIsDepthwiseThenPointwise) {
    NodeInfo conv = inferOne(chw(4, 6, 6), node("sep", "SeparableConv2D", {}, {{"filters", 8}, {"kernel", 3}, {"padding", "same"}}));
    EXPECT_EQ(conv.outputShape, chw(8, 6, 6));
    EXPECT_EQ(conv.parameters, 4 * 9 + 4 * 8 + 8);  // depthwise, pointwise, bias
    EXPECT_EQ(conv.forwardFlops, 2 * 4 * 36 * 9 + 2 * 8 * 36 * 4 + 8 * 36);
}

TEST(SpecShapes, PoolingStrideDefaultsToTheKernel) {
    NodeInfo pool = inferOne(chw(3, 7, 7), node("pool", "MaxPool2D", {}, {{"kernel", 2}}));
    EXPECT_EQ(pool.outputShape, chw(3, 3, 3));  // floor((7 - 2) / 2) + 1, no ceil mode
    EXPECT_EQ(pool.parameters, 0);
    EXPECT_EQ(pool.forwardFlops, 27 * 4);
    NodeInfo defaults = inferOne(chw(3, 8, 6), node("pool", "AvgPool2D"));
    EXPECT_EQ(defaults.outputShape, chw(3, 4, 3));
    NodeInfo overlapping = inferOne(chw(3, 7, 7), node("pool", "AvgPool2D", {}, {{"kernel", 3}, {"stride", 2}, {"padding", 1}}));
    EXPECT_EQ(overlapping.outputShape, chw(3, 4, 4));
}

TEST(SpecShapes, DenseFlattensItsInput) {
    NodeInfo dense = inferOne(chw(2, 3, 4), node("fc", "Dense", {}, {{"units", 5}}));
    EXPECT_EQ(dense.outputShape, chw(5, 1, 1));
    EXPECT_EQ(dense.parameters, 24 * 5 + 5);
    EXPECT_EQ(dense.forwardFlops, 2 * 24 * 5 + 5);
    EXPECT_EQ(inferOne(chw(2, 3, 4), node("fc", "Dense", {}, {{"units", 5}, {"bias", false}})).parameters, 120);
}

TEST(SpecShapes, ElementwiseLayersKeepTheShape) {
    NodeInfo bn = inferOne(chw(3, 4, 4), node("bn", "BatchNorm2D"));
    EXPECT_EQ(bn.outputShape, chw(3, 4, 4));
    EXPECT_EQ(bn.parameters, 6);  // gamma and beta; running statistics are not trainable
    EXPECT_EQ(bn.forwardFlops, 2 * 48);
    EXPECT_EQ(inferOne(chw(3, 4, 4), node("a", "ReLU")).forwardFlops, 48);
    EXPECT_EQ(inferOne(chw(3, 4, 4), node("a", "LeakyReLU", {}, {{"alpha", 0.2}})).forwardFlops, 96);
    EXPECT_EQ(inferOne(chw(3, 4, 4), node("a", "ELU")).forwardFlops, 144);
    EXPECT_EQ(inferOne(chw(3, 4, 4), node("a", "SiLU")).outputShape, chw(3, 4, 4));
    EXPECT_EQ(inferOne(chw(3, 4, 4), node("a", "SiLU")).forwardFlops, 192);
    EXPECT_EQ(inferOne(chw(3, 4, 4), node("a", "Dropout", {}, {{"rate", 0.3}})).outputShape, chw(3, 4, 4));
    NodeInfo gap = inferOne(chw(3, 4, 4), node("gap", "GlobalAvgPool"));
    EXPECT_EQ(gap.outputShape, chw(3, 1, 1));
    EXPECT_EQ(gap.forwardFlops, 48);
    EXPECT_EQ(inferOne(chw(3, 4, 4), node("f", "Flatten")).outputShape, chw(48, 1, 1));
}

TEST(SpecShapes, AddAndConcatJoinBranches) {
    NetworkSpec spec = network({input(2, 4, 4), node("a", "ReLU", {"input"}), node("b", "ELU", {"input"}),
                                node("wide", "Conv2D", {"input"}, {{"filters", 3}, {"kernel", 1}}),
                                node("sum", "Add", {"input", "a", "b"}), node("join", "Concat", {"sum", "wide"}),
                                node("out", "Flatten", {"join"})});
    ShapeReport report = inferShapes(spec);
    EXPECT_EQ(report.find("sum")->outputShape, chw(2, 4, 4));
    EXPECT_EQ(report.find("sum")->forwardFlops, 2 * 32);
    EXPECT_EQ(report.find("join")->outputShape, chw(5, 4, 4));
    EXPECT_EQ(report.outputShape, chw(80, 1, 1));
}

TEST(SpecShapes, TotalsAddUpEveryNode) {
    NetworkSpec spec = network({input(1, 4, 4), node("conv", "Conv2D", {"input"}, {{"filters", 2}, {"kernel", 3}}),
                                node("flat", "Flatten", {"conv"}), node("logits", "Dense", {"flat"}, {{"units", 3}})});
    ShapeReport report = inferShapes(spec);
    EXPECT_EQ(report.activationBytesPerImage, (16 + 8 + 8 + 3) * 4);
    EXPECT_EQ(report.totalParameters, (2 * 9 + 2) + (8 * 3 + 3));
    EXPECT_EQ(report.totalForwardFlops, (2 * 8 * 9 + 8) + (2 * 8 * 3 + 3));
    EXPECT_EQ(report.inputShape, chw(1, 4, 4));
    EXPECT_EQ(report.outputNode, "logits");
}

TEST(SpecShapes, NodesComeInTopologicalOrderWhateverTheFileOrder) {
    NetworkSpec spec = network({node("logits", "Dense", {"flat"}, {{"units", 3}}), node("flat", "Flatten", {"input"}),
                                input(1, 4, 4)});
    ShapeReport report = inferShapes(spec);
    std::vector<std::string> order;
    for (const auto& info : report.nodes) order.push_back(info.name);
    EXPECT_EQ(order, (std::vector<std::string>{"input", "flat", "logits"}));
}

TEST(SpecCatalogue, ListsEveryLayerTypeWithItsInputs) {
    std::vector<std::string> types;
    for (const auto& info : layerTypes()) types.push_back(info.type);
    EXPECT_EQ(types, (std::vector<std::string>{"Input", "Conv2D", "SeparableConv2D", "MaxPool2D", "AvgPool2D",
                                               "GlobalAvgPool", "BatchNorm2D", "ReLU", "LeakyReLU", "ELU", "SiLU",
                                               "Dropout", "Flatten", "Dense", "Add", "Concat"}));
    EXPECT_EQ(findLayerType("Input")->maxInputs, 0);
    EXPECT_EQ(findLayerType("Add")->minInputs, 2);
    EXPECT_EQ(findLayerType("Concat")->maxInputs, -1);
    EXPECT_EQ(findLayerType("Conv3D"), nullptr);
    for (const auto& info : layerTypes()) {
        EXPECT_FALSE(info.help.empty()) << info.type;
        for (const auto& param : info.params) {
            EXPECT_FALSE(param.help.empty()) << info.type << "." << param.name;
            if (param.defaultValue.is_number()) {
                EXPECT_TRUE(param.minimum <= param.defaultValue.get<double>() &&
                            param.defaultValue.get<double>() <= param.maximum)
                    << info.type << "." << param.name << " default outside its bounds";
            }
        }
    }
    const auto& poolParams = findLayerType("MaxPool2D")->params;
    auto stride = std::find_if(poolParams.begin(), poolParams.end(), [](const ParamInfo& p) { return p.name == "stride"; });
    ASSERT_NE(stride, poolParams.end());
    EXPECT_EQ(stride->defaultsTo, "kernel");
}

TEST(SpecPresets, AreTheSevenBuiltInNetworks) {
    EXPECT_EQ(presetNames(), (std::vector<std::string>{"fer-cnn", "lenet5", "mini-xception", "resnet-fer", "resnet4-fer",
                                                       "vgg-fer", "vgg-wide"}));
    try {
        loadPreset("resnet50");
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("unknown preset 'resnet50'"), std::string::npos);
        EXPECT_NE(error.hint().find("fer-cnn, lenet5, mini-xception, resnet-fer, resnet4-fer, vgg-fer, vgg-wide"), std::string::npos);
    }
}

// The stronger FER2013 networks stay within 8 MB of bf16 weights (issue #12): under 4 M parameters.
TEST(SpecPresets, StrongerFerNetworksFitEightMegabytesOfBf16Weights) {
    EXPECT_EQ(inferShapes(loadPreset("vgg-wide")).totalParameters, 2577511);
    EXPECT_EQ(inferShapes(loadPreset("resnet-fer")).totalParameters, 2775751);
    EXPECT_EQ(inferShapes(loadPreset("resnet4-fer")).totalParameters, 3909879);
    for (const char* name : {"vgg-wide", "resnet-fer", "resnet4-fer", "mini-xception", "fer-cnn"})
        EXPECT_LE(inferShapes(loadPreset(name)).totalParameters * 2, 8 * 1024 * 1024) << name;
}

TEST(SpecPresets, EachHasADescriptionAndATopToBottomLayout) {
    for (const auto& name : presetNames()) {
        NetworkSpec spec = loadPreset(name);
        EXPECT_EQ(spec.name, name);
        EXPECT_FALSE(spec.description.empty()) << name;
        EXPECT_EQ(spec.layout.size(), spec.nodes.size()) << name;
        std::set<std::pair<double, double>> positions;
        for (const auto& node : spec.nodes) {
            ASSERT_TRUE(spec.layout.count(node.name)) << name << ": no position for " << node.name;
            auto [x, y] = spec.layout.at(node.name);
            EXPECT_TRUE(positions.insert({x, y}).second) << name << ": " << node.name << " overlaps another node";
            for (const auto& input : node.inputs)
                EXPECT_GE(y, spec.layout.at(input).second + 100) << name << ": " << node.name << " not below " << input;
        }
    }
}

TEST(SpecPresets, FerCnnIsThePyTorchReferenceNetwork) {
    ShapeReport report = inferShapes(loadPreset("fer-cnn"));
    EXPECT_EQ(report.totalParameters, 3506503);  // sum(p.numel() for p in fer_cnn().parameters())
    EXPECT_EQ(report.inputShape, chw(1, 48, 48));
    EXPECT_EQ(report.outputShape, chw(7, 1, 1));
    EXPECT_EQ(report.outputNode, "logits");
    EXPECT_EQ(report.find("pool3")->outputShape, chw(256, 6, 6));
    EXPECT_EQ(report.find("flatten")->outputShape, chw(256 * 6 * 6, 1, 1));
    EXPECT_EQ(report.find("conv1_2")->forwardFlops, std::int64_t(2) * 64 * 48 * 48 * 64 * 9);
    EXPECT_EQ(report.find("fc1")->parameters, 9216 * 256 + 256);
}

TEST(SpecPresets, MiniXceptionMatchesTheKerasOriginal) {
    ShapeReport report = inferShapes(loadPreset("mini-xception"));
    EXPECT_EQ(report.totalParameters, 56951);  // Keras' "Trainable params" of mini_XCEPTION(48x48, 7)
    EXPECT_EQ(report.find("relu2")->outputShape, chw(8, 44, 44));
    EXPECT_EQ(report.find("m1_add")->outputShape, chw(16, 22, 22));
    EXPECT_EQ(report.find("m2_add")->outputShape, chw(32, 11, 11));
    EXPECT_EQ(report.find("m3_add")->outputShape, chw(64, 6, 6));
    EXPECT_EQ(report.find("m4_add")->outputShape, chw(128, 3, 3));
    EXPECT_EQ(report.find("gap")->outputShape, chw(7, 1, 1));
    EXPECT_EQ(report.outputShape, chw(7, 1, 1));
}

TEST(SpecPresets, Lenet5IsTheClassicSize) {
    ShapeReport report = inferShapes(loadPreset("lenet5"));
    EXPECT_EQ(report.totalParameters, 61706);
    EXPECT_EQ(report.inputShape, chw(1, 28, 28));
    EXPECT_EQ(report.find("conv1")->outputShape, chw(6, 28, 28));
    EXPECT_EQ(report.find("pool2")->outputShape, chw(16, 5, 5));
    EXPECT_EQ(report.outputShape, chw(10, 1, 1));
}

TEST(SpecPresets, VggFerShrinks48To3) {
    ShapeReport report = inferShapes(loadPreset("vgg-fer"));
    EXPECT_EQ(report.find("pool4")->outputShape, chw(512, 3, 3));
    EXPECT_EQ(report.totalParameters, 9413959);
    EXPECT_EQ(report.outputShape, chw(7, 1, 1));
}

TEST(SpecSummary, TableShowsEveryNodeAndTheTotals) {
    std::string table = formatSummaryTable(inferShapes(loadPreset("fer-cnn")));
    for (const std::string piece : {"conv1_1", "Conv2D", "64×48×48", "logits", "7×1×1", "3,506,503", "2,359,552",
                                    "MFLOPs", "KiB"})
        EXPECT_NE(table.find(piece), std::string::npos) << "'" << piece << "' missing from:\n" << table;
}

TEST(SpecSummary, TableListsProblemsAndUnknownShapes) {
    NetworkSpec spec = network({input(1, 2, 2), node("conv", "Conv2D", {"input"}, {{"filters", 4}, {"kernel", 3}}),
                                node("out", "Flatten", {"conv"})});
    std::string table = formatSummaryTable(analyseSpec(spec));
    EXPECT_NE(table.find("Problems (1)"), std::string::npos) << table;
    EXPECT_NE(table.find("node 'conv': output would be 0x0"), std::string::npos) << table;
    EXPECT_NE(table.find("conv (!)"), std::string::npos) << table;
}

}  // namespace
}  // namespace cnnstudio
