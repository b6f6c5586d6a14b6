// What a LayerType's exportOnnx writes its ONNX ops through: the node's input values, its
// weights as initializers, and the ops themselves. It tracks each value's rank because our
// tensors are always (N, C, H, W) while ONNX's Gemm takes and gives (N, features): a Dense
// output stays a matrix, and an op that needs an image gets one back by a Reshape to
// (N, features, 1, 1), which is the same memory as ours.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cnnstudio/onnx_graph.h"

namespace cnnstudio {

enum class OnnxRank { Image, Matrix };  // (N, C, H, W) or (N, features)

// kernel_shape, strides and pads (top, left, bottom, right: ours pads both sides alike) of a
// Conv or a pool.
std::vector<OnnxAttribute> onnxWindowAttributes(std::int64_t kernelHeight, std::int64_t kernelWidth,
                                                std::int64_t strideHeight, std::int64_t strideWidth,
                                                std::int64_t padHeight, std::int64_t padWidth);

class OnnxGraphBuilder {
public:
    OnnxGraphBuilder(const std::vector<NamedTensor>& weights, OnnxGraph& graph);

    // Called by describeAsOnnx around each node's exportOnnx.
    void beginNode(const NodeSpec& node);
    void endNode();

    // The network's input (the Input type): becomes this node's value.
    void declareNetworkInput(std::int64_t channels, std::int64_t height, std::int64_t width);
    // The node's i-th input value as it is, or made 4-D or 2-D for ops that need that rank.
    const std::string& input(std::size_t i) const;
    OnnxRank rankOf(const std::string& value) const;
    std::string imageInput(std::size_t i);
    std::string matrixInput(std::size_t i);
    std::size_t inputCount() const { return node_->inputs.size(); }

    // The node's tensor "<node>.<suffix>" as an initializer, named so; Error when missing.
    std::string weight(const std::string& suffix);
    bool hasWeight(const std::string& suffix) const;
    const std::vector<std::int64_t>& weightShape(const std::string& suffix) const;

    // An op computing an inner value "<node>/<step>"; returns that value's name.
    std::string addStep(const std::string& step, const std::string& op, std::vector<std::string> inputs,
                        OnnxRank rank, std::vector<OnnxAttribute> attributes = {});
    // The op computing the node's own value (named as the node, unless that is "input" or
    // "logits").
    void addResult(const std::string& op, std::vector<std::string> inputs, OnnxRank rank,
                   std::vector<OnnxAttribute> attributes = {});
    // The node computes nothing at inference (Dropout): its value is its input's.
    void passThrough(const std::string& value);

    // The last node's value as (N, classes), named kOnnxOutputName.
    void finishWithOutput(const std::string& lastNode, std::int64_t classes);

private:
    std::string addOp(const std::string& value, const std::string& op, std::vector<std::string> inputs,
                      OnnxRank rank, std::vector<OnnxAttribute> attributes);
    std::string resultValueName() const;
    const NamedTensor& findWeight(const std::string& suffix) const;

    const std::vector<NamedTensor>& weights_;
    OnnxGraph& graph_;
    const NodeSpec* node_ = nullptr;
    std::map<std::string, std::string> valueOfNode_;  // our node -> the ONNX value holding its output
    std::map<std::string, OnnxRank> rankOfValue_;  // of every op output and the graph input
    std::set<std::string> weightsAdded_;            // as initializers
    std::vector<std::string> inputValues_;  // of the current node
    bool nodeDone_ = false;
};

}  // namespace cnnstudio
