// Bad graphs: every problem is reported against the node that has it, with a reason a user
// can act on, and nodes downstream of a broken node are not reported again.
#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "engine/spec_builders.h"

namespace cnnstudio {
namespace {

using nlohmann::json;
using spec_testing::input;
using spec_testing::network;
using spec_testing::node;
using spec_testing::problemOf;

// Checks that `nodeName` has a problem containing every piece, and that it is the only one.
void expectOnlyProblem(const NetworkSpec& spec, const std::string& nodeName,
                       const std::vector<std::string>& pieces) {
    ShapeReport report = analyseSpec(spec);
    std::string problem = problemOf(report, nodeName);
    ASSERT_FALSE(problem.empty()) << "no problem reported for '" << nodeName << "'";
    for (const auto& piece : pieces)
        EXPECT_NE(problem.find(piece), std::string::npos) << "'" << piece << "' missing from: " << problem;
    EXPECT_EQ(report.problems.size(), 1u) << "also reported: " << report.problems.back().first << ": "
                                          << report.problems.back().second;
    ASSERT_NE(report.find(nodeName), nullptr);
    EXPECT_EQ(report.find(nodeName)->problem, problem);
}

NetworkSpec chainWith(NodeSpec middle) {
    middle.inputs = {"input"};
    std::string name = middle.name;
    return network({input(3, 16, 16), std::move(middle), node("flatten", "Flatten", {name})});
}

TEST(SpecProblems, UnknownLayerTypeListsTheKnownOnes) {
    expectOnlyProblem(chainWith(node("c", "Conv3D")), "c",
                      {"unknown layer type 'Conv3D'", "Conv2D", "SeparableConv2D", "Concat"});
}

TEST(SpecProblems, UnknownParameterIsNamedWithTheKnownOnes) {
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 8}, {"kernel", 3}, {"filtres", 8}})), "c",
                      {"unknown parameter 'filtres'", "filters, kernel, stride, padding, groups, bias"});
    expectOnlyProblem(chainWith(node("r", "ReLU", {}, {{"alpha", 0.1}})), "r", {"'alpha'", "no parameters"});
}

TEST(SpecProblems, MissingRequiredParameterIsNamed) {
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"kernel", 3}})), "c", {"missing parameter 'filters'"});
    expectOnlyProblem(chainWith(node("d", "Dense")), "d", {"missing parameter 'units'"});
}

TEST(SpecProblems, WrongParameterTypeIsNamed) {
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", "64"}, {"kernel", 3}})), "c",
                      {"'filters'", "whole number", "\"64\""});
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", {3, 3, 3}}})), "c",
                      {"'kernel'", "[height, width]"});
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", 3}, {"padding", "full"}})),
                      "c", {"'padding'", "\"valid\", \"same\""});
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", 3}, {"bias", 1}})), "c",
                      {"'bias'", "true or false"});
    expectOnlyProblem(chainWith(node("d", "Dropout", {}, {{"rate", "half"}})), "d", {"'rate'", "number"});
}

TEST(SpecProblems, HugeParameterValueIsDescribedByAnExcerpt) {
    const json hugeList(std::vector<int>(100000, 3));
    const std::string problem =
        problemOf(analyseSpec(chainWith(node("c", "Conv2D", {}, {{"filters", hugeList}, {"kernel", 3}}))), "c");
    EXPECT_LT(problem.size(), 300u) << problem;
    EXPECT_NE(problem.find("'filters' must be a whole number, got a list of 100000 items"), std::string::npos)
        << problem;
}

TEST(SpecProblems, OutOfRangeParameterGivesTheRange) {
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", 3}, {"stride", 0}})), "c",
                      {"'stride' is 0", "from 1 to"});
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", {3, -1}}})), "c",
                      {"'kernel' is [3,-1]", "each size"});
    expectOnlyProblem(chainWith(node("d", "Dropout", {}, {{"rate", -0.1}})), "d", {"'rate' is -0.1"});
    expectOnlyProblem(chainWith(node("b", "BatchNorm2D", {}, {{"momentum", 1.5}})), "b", {"'momentum' is 1.5"});
}

TEST(SpecProblems, DropoutRateOfOneIsRejected) {
    expectOnlyProblem(chainWith(node("d", "Dropout", {}, {{"rate", 1.0}})), "d", {"'rate'", "below 1"});
    EXPECT_TRUE(analyseSpec(chainWith(node("d", "Dropout", {}, {{"rate", 0.0}}))).ok());
}

TEST(SpecProblems, ZeroFiltersOrUnitsAreRejected) {
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 0}, {"kernel", 3}})), "c",
                      {"'filters' is 0", "from 1"});
    expectOnlyProblem(chainWith(node("s", "SeparableConv2D", {}, {{"filters", 0}, {"kernel", 3}})), "s",
                      {"'filters' is 0"});
    expectOnlyProblem(chainWith(node("d", "Dense", {}, {{"units", 0}})), "d", {"'units' is 0", "from 1"});
}

TEST(SpecProblems, SamePaddingNeedsAnOddKernel) {
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 4}, {"kernel", {3, 4}}, {"padding", "same"}})),
                      "c", {"\"same\"", "odd kernel", "3x4"});
}

TEST(SpecProblems, PoolPaddingOverHalfTheKernelIsRejected) {
    expectOnlyProblem(chainWith(node("p", "MaxPool2D", {}, {{"kernel", 3}, {"padding", 2}})), "p",
                      {"padding 2x2", "half the kernel 3x3"});
}

TEST(SpecProblems, GroupsMustDivideFiltersAndInputChannels) {
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 10}, {"kernel", 1}, {"groups", 4}})), "c",
                      {"filters 10", "not divisible by groups 4"});
    expectOnlyProblem(chainWith(node("c", "Conv2D", {}, {{"filters", 6}, {"kernel", 1}, {"groups", 2}})), "c",
                      {"input channels 3", "'input'", "groups 2"});
}

TEST(SpecProblems, NetworkWithoutInputIsReportedForTheNetwork) {
    NetworkSpec spec = network({node("a", "Flatten", {"b"}), node("b", "Flatten", {"a"})}, "loop");
    ShapeReport report = analyseSpec(spec);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.problems.front().first, "");
    EXPECT_NE(report.problems.front().second.find("no Input node"), std::string::npos);
    try {
        inferShapes(spec);
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), "network 'loop'");
        EXPECT_NE(error.reason().find("no Input node"), std::string::npos);
    }
    EXPECT_NE(analyseSpec(network({})).problems.front().second.find("no nodes"), std::string::npos);
}

TEST(SpecProblems, SecondInputNodeIsReportedAndItsConsumersAreNot) {
    NetworkSpec spec = network({input(1, 8, 8), input(1, 8, 8, "second"), node("sum", "Add", {"input", "second"})});
    expectOnlyProblem(spec, "second", {"more than one Input node", "'input'", "'second'"});
}

TEST(SpecProblems, CycleNamesItsNodes) {
    NetworkSpec spec = network({input(1, 8, 8), node("a", "Add", {"input", "c"}), node("b", "ReLU", {"a"}),
                                node("c", "ELU", {"b"}), node("after", "Flatten", {"c"})});
    ShapeReport report = analyseSpec(spec);
    for (const std::string name : {"a", "b", "c"}) {
        std::string problem = problemOf(report, name);
        EXPECT_NE(problem.find("cycle"), std::string::npos) << name << ": " << problem;
        for (const std::string member : {"a", "b", "c"})
            EXPECT_NE(problem.find(member + " ->"), std::string::npos) << problem;
    }
    EXPECT_NE(problemOf(report, "a").find("a -> b -> c -> a"), std::string::npos) << problemOf(report, "a");
    EXPECT_EQ(problemOf(report, "after"), "");  // downstream of the cycle, not in it
    EXPECT_EQ(problemOf(report, "input"), "");
    EXPECT_EQ(report.problems.size(), 3u);
    // Nodes in a cycle come last in the report.
    EXPECT_EQ(report.nodes.front().name, "input");
}

// conv's input moved from the Input to relu: the Input now feeds nothing and seems a second
// output, but the cycle is the cause, and it is what inferShapes reports first.
TEST(SpecProblems, ACycleIsReportedBeforeTheOutputsItCutsOff) {
    NetworkSpec spec = network({input(1, 8, 8), node("conv", "Conv2D", {"relu"}, {{"filters", 2}, {"kernel", 3}}),
                                node("relu", "ReLU", {"conv"}), node("flat", "Flatten", {"relu"}),
                                node("logits", "Dense", {"flat"}, {{"units", 3}})});
    try {
        inferShapes(spec);
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("part of a cycle"), std::string::npos) << error.what();
    }
    EXPECT_NE(problemOf(analyseSpec(spec), "input").find("more than one output"), std::string::npos);
}

TEST(SpecProblems, NodeFeedingItselfIsACycle) {
    NetworkSpec spec = network({input(1, 8, 8), node("sum", "Add", {"input", "sum"}), node("out", "Flatten", {"sum"})});
    expectOnlyProblem(spec, "sum", {"cycle", "sum -> sum"});
}

TEST(SpecProblems, DanglingInputNamesTheMissingNode) {
    NetworkSpec spec = network({input(1, 8, 8), node("relu", "ReLU", {"conv9"}), node("out", "Flatten", {"relu"})});
    ShapeReport report = analyseSpec(spec);
    EXPECT_NE(problemOf(report, "relu").find("input 'conv9' does not exist"), std::string::npos);
    // 'input' now feeds nothing, so the network has two outputs as well.
    EXPECT_NE(problemOf(report, "input").find("more than one output"), std::string::npos);
}

TEST(SpecProblems, WrongNumberOfInputsSaysWhatTheTypeTakes) {
    NetworkSpec twoIntoConv = network({input(1, 8, 8), node("relu", "ReLU", {"input"}),
                                       node("conv", "Conv2D", {"input", "relu"}, {{"filters", 2}, {"kernel", 1}})});
    expectOnlyProblem(twoIntoConv, "conv", {"wrong number of inputs", "Conv2D takes 1 input", "has 2", "'relu'"});
    expectOnlyProblem(network({input(1, 8, 8), node("sum", "Add", {"input"})}), "sum",
                      {"Add takes at least 2 inputs", "has 1"});
    NetworkSpec fedInput = network({input(1, 8, 8), node("relu", "ReLU", {"input"}), input(1, 8, 8, "input2")});
    fedInput.nodes[2].inputs = {"relu"};
    ShapeReport report = analyseSpec(fedInput);
    EXPECT_NE(problemOf(report, "input2").find("Input takes no inputs"), std::string::npos);
    NetworkSpec unconnected = network({input(1, 8, 8), node("relu", "ReLU", {"input"}), node("orphan", "ELU")});
    EXPECT_NE(problemOf(analyseSpec(unconnected), "orphan").find("has none"), std::string::npos);
}

TEST(SpecProblems, AddShapeMismatchShowsBothShapes) {
    NetworkSpec spec = network({input(3, 24, 24),
                                node("wide", "Conv2D", {"input"}, {{"filters", 64}, {"kernel", 3}, {"padding", "same"}}),
                                node("narrow", "Conv2D", {"input"}, {{"filters", 32}, {"kernel", 3}, {"padding", 1}}),
                                node("add1", "Add", {"wide", "narrow"}), node("out", "Flatten", {"add1"})});
    expectOnlyProblem(spec, "add1", {"(64,24,24) from 'wide'", "(32,24,24) from 'narrow'", "differ"});
    try {
        inferShapes(spec);
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), "node 'add1'");
    }
}

TEST(SpecProblems, ConcatSizeMismatchShowsHeightAndWidth) {
    NetworkSpec spec = network({input(3, 24, 24), node("pool", "MaxPool2D", {"input"}),
                                node("join", "Concat", {"input", "pool"}), node("out", "Flatten", {"join"})});
    expectOnlyProblem(spec, "join", {"24x24 from 'input'", "12x12 from 'pool'", "height and width"});
}

TEST(SpecProblems, SpatialSizeReachingZeroIsExplained) {
    NetworkSpec spec = network({input(1, 2, 2), node("conv", "Conv2D", {"input"}, {{"filters", 4}, {"kernel", 3}}),
                                node("out", "Flatten", {"conv"})});
    expectOnlyProblem(spec, "conv", {"output would be 0x0: input 2x2 is smaller than kernel 3"});
    NetworkSpec pooled = network({input(1, 5, 1), node("pool", "AvgPool2D", {"input"}, {{"kernel", {2, 2}}}),
                                  node("out", "Flatten", {"pool"})});
    expectOnlyProblem(pooled, "pool", {"output would be 2x0", "input 5x1", "kernel 2"});
    NetworkSpec padded = network({input(1, 1, 1), node("conv", "Conv2D", {"input"}, {{"filters", 1}, {"kernel", 5}, {"padding", 1}}),
                                  node("out", "Flatten", {"conv"})});
    expectOnlyProblem(padded, "conv", {"padded to 3x3", "kernel 5"});
}

TEST(SpecProblems, ImageTooLargeForTheBackendsIsRejected) {
    NetworkSpec spec = network({input(4096, 65536, 65536), node("out", "Flatten", {"input"})});
    expectOnlyProblem(spec, "input", {"more than 2^31 - 1 values per image"});
}

// Every Dense is within its own limits; together they pass the int sizes of the one tensor that
// holds a network's parameters. The node whose parameters cross the limit is the one named.
TEST(SpecProblems, ParameterTotalBeyondWhatANetworkHoldsNamesTheNodeThatCrossesIt) {
    NetworkSpec spec = network({input(1, 256, 256), node("flat", "Flatten", {"input"}),
                                node("fc1", "Dense", {"flat"}, {{"units", 20000}}),
                                node("fc2", "Dense", {"fc1"}, {{"units", 65536}}),
                                node("logits", "Dense", {"fc2"}, {{"units", 7}})});
    expectOnlyProblem(spec, "fc2", {"1310785536 parameters", "total to 2621525536", "2147483647 (2^31 - 1)"});
    EXPECT_EQ(analyseSpec(spec).totalParameters, 2621984295);
    try {
        inferShapes(spec);
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), "node 'fc2'");
    }
}

TEST(SpecProblems, SeveralOutputsAreAllNamed) {
    NetworkSpec spec = network({input(1, 8, 8), node("head1", "Flatten", {"input"}), node("head2", "ReLU", {"input"})});
    ShapeReport report = analyseSpec(spec);
    ASSERT_EQ(report.problems.size(), 2u);
    for (const std::string name : {"head1", "head2"}) {
        std::string problem = problemOf(report, name);
        EXPECT_NE(problem.find("more than one output"), std::string::npos) << problem;
        EXPECT_NE(problem.find("'head1', 'head2'"), std::string::npos) << problem;
    }
    EXPECT_EQ(report.outputNode, "");
}

TEST(SpecProblems, NodesDownstreamOfABrokenNodeAreNotReportedAgain) {
    NetworkSpec spec = network({input(1, 4, 4), node("conv", "Conv2D", {"input"}, {{"filters", 8}, {"kernel", 7}}),
                                node("relu", "ReLU", {"conv"}), node("flat", "Flatten", {"relu"}),
                                node("logits", "Dense", {"flat"}, {{"units", 7}})});
    expectOnlyProblem(spec, "conv", {"smaller than kernel 7"});
    ShapeReport report = analyseSpec(spec);
    EXPECT_EQ(report.find("logits")->outputShape.channels, 0);  // unknown
    EXPECT_EQ(report.outputNode, "logits");
    EXPECT_EQ(report.outputShape.channels, 0);
    EXPECT_EQ(report.inputShape, (TensorShape{1, 1, 4, 4}));
}

TEST(SpecProblems, DownstreamNodeStillReportsItsOwnBadParams) {
    NetworkSpec spec = network({input(1, 4, 4), node("conv", "Conv2D", {"input"}, {{"filters", 8}, {"kernel", 7}}),
                                node("logits", "Dense", {"conv"}, {{"units", -1}})});
    ShapeReport report = analyseSpec(spec);
    EXPECT_EQ(report.problems.size(), 2u);
    EXPECT_NE(problemOf(report, "logits").find("'units' is -1"), std::string::npos);
}

TEST(SpecProblems, InferShapesThrowsTheFirstProblemAndCountsTheRest) {
    NetworkSpec spec = network({input(1, 8, 8), node("a", "Magic", {"input"}), node("b", "Dense", {"a"}),
                                node("c", "Add", {"b"})});
    try {
        inferShapes(spec);
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), "node 'a'");
        EXPECT_NE(error.reason().find("unknown layer type 'Magic'"), std::string::npos);
        EXPECT_EQ(error.hint(), "2 more problems after this one");
    }
}

TEST(SpecProblems, DuplicateNamesBuiltInCodeAreReported) {
    // fromJson refuses duplicates; a spec edited in memory (the designer) can still have them.
    NetworkSpec spec = network({input(1, 8, 8), node("x", "ReLU", {"input"}), node("x", "ELU", {"x"})});
    EXPECT_NE(problemOf(analyseSpec(spec), "x").find("also named 'x'"), std::string::npos);
    NetworkSpec unnamed = network({input(1, 8, 8), node("", "ReLU", {"input"})});
    EXPECT_NE(problemOf(analyseSpec(unnamed), "").find("a ReLU node has no name"), std::string::npos);
}

}  // namespace
}  // namespace cnnstudio
