#include "onnx/onnx_graph_builder.h"

#include "cnnstudio/error.h"
#include "cnnstudio/shape_inference.h"
#include "layers/layer_type.h"

namespace cnnstudio {

std::vector<OnnxAttribute> onnxWindowAttributes(std::int64_t kernelHeight, std::int64_t kernelWidth,
                                                std::int64_t strideHeight, std::int64_t strideWidth,
                                                std::int64_t padHeight, std::int64_t padWidth) {
    return {{"kernel_shape", std::vector<std::int64_t>{kernelHeight, kernelWidth}},
            {"strides", std::vector<std::int64_t>{strideHeight, strideWidth}},
            {"pads", std::vector<std::int64_t>{padHeight, padWidth, padHeight, padWidth}}};
}

OnnxGraphBuilder::OnnxGraphBuilder(const std::vector<NamedTensor>& weights, OnnxGraph& graph)
    : weights_(weights), graph_(graph) {}

void OnnxGraphBuilder::beginNode(const NodeSpec& node) {
    node_ = &node;
    nodeDone_ = false;
    inputValues_.clear();
    for (const std::string& producer : node.inputs) inputValues_.push_back(valueOfNode_.at(producer));
}

void OnnxGraphBuilder::endNode() {
    if (!nodeDone_)
        throw Error("the ONNX mapping of " + node_->type + " gave the node no value", node_->name,
                    "a LayerType's exportOnnx ends with addResult or passThrough");
}

void OnnxGraphBuilder::declareNetworkInput(std::int64_t channels, std::int64_t height, std::int64_t width) {
    graph_.input = kOnnxInputName;
    graph_.inputChannels = channels, graph_.inputHeight = height, graph_.inputWidth = width;
    rankOfValue_[graph_.input] = OnnxRank::Image;
    passThrough(graph_.input);
}

const std::string& OnnxGraphBuilder::input(std::size_t i) const { return inputValues_.at(i); }

OnnxRank OnnxGraphBuilder::rankOf(const std::string& value) const { return rankOfValue_.at(value); }

std::string OnnxGraphBuilder::imageInput(std::size_t i) {
    const std::string& value = input(i);
    if (rankOf(value) == OnnxRank::Image) return value;
    const std::string image = value + "/as_image";
    if (rankOfValue_.contains(image)) return image;  // another reader made it already
    // (N, features) -> (N, features, 1, 1): 0 keeps the batch, -1 takes the rest.
    const std::string shape = value + "/image_shape";
    graph_.initializers.push_back({shape, {4}, {}, {0, -1, 1, 1}});
    return addOp(image, "Reshape", {value, shape}, OnnxRank::Image, {});
}

std::string OnnxGraphBuilder::matrixInput(std::size_t i) {
    const std::string& value = input(i);
    if (rankOf(value) == OnnxRank::Matrix) return value;
    const std::string matrix = value + "/as_matrix";
    if (rankOfValue_.contains(matrix)) return matrix;  // another reader made it already
    // In NCHW element order, as our Flatten and Dense read it.
    return addOp(matrix, "Flatten", {value}, OnnxRank::Matrix, {{"axis", std::int64_t(1)}});
}

const NamedTensor& OnnxGraphBuilder::findWeight(const std::string& suffix) const {
    const std::string name = node_->name + "." + suffix;
    for (const NamedTensor& tensor : weights_)
        if (tensor.name == name) return tensor;
    throw Error("the weights have no tensor " + name, node_->name,
                "export a model folder whose model.safetensors matches its spec.json");
}

bool OnnxGraphBuilder::hasWeight(const std::string& suffix) const {
    const std::string name = node_->name + "." + suffix;
    for (const NamedTensor& tensor : weights_)
        if (tensor.name == name) return true;
    return false;
}

const std::vector<std::int64_t>& OnnxGraphBuilder::weightShape(const std::string& suffix) const {
    return findWeight(suffix).shape;
}

std::string OnnxGraphBuilder::weight(const std::string& suffix) {
    const NamedTensor& tensor = findWeight(suffix);
    if (weightsAdded_.insert(tensor.name).second)
        graph_.initializers.push_back({tensor.name, tensor.shape, tensor.values, {}});
    return tensor.name;
}

std::string OnnxGraphBuilder::addOp(const std::string& value, const std::string& op,
                                    std::vector<std::string> inputs, OnnxRank rank,
                                    std::vector<OnnxAttribute> attributes) {
    graph_.nodes.push_back({value, op, std::move(inputs), {value}, std::move(attributes)});
    rankOfValue_[value] = rank;
    return value;
}

std::string OnnxGraphBuilder::addStep(const std::string& step, const std::string& op,
                                      std::vector<std::string> inputs, OnnxRank rank,
                                      std::vector<OnnxAttribute> attributes) {
    return addOp(node_->name + "/" + step, op, std::move(inputs), rank, std::move(attributes));
}

// The graph's input and output names are fixed; a node called so (the presets call their last
// Dense "logits") gets another name for its value.
std::string OnnxGraphBuilder::resultValueName() const {
    const bool reserved = node_->name == kOnnxInputName || node_->name == kOnnxOutputName;
    return reserved ? node_->name + "/result" : node_->name;
}

void OnnxGraphBuilder::addResult(const std::string& op, std::vector<std::string> inputs, OnnxRank rank,
                                 std::vector<OnnxAttribute> attributes) {
    valueOfNode_[node_->name] = addOp(resultValueName(), op, std::move(inputs), rank, std::move(attributes));
    nodeDone_ = true;
}

void OnnxGraphBuilder::passThrough(const std::string& value) {
    valueOfNode_[node_->name] = value;
    nodeDone_ = true;
}

void OnnxGraphBuilder::finishWithOutput(const std::string& lastNode, std::int64_t classes) {
    // Flatten with axis 1 leaves a (N, classes) matrix as it is and flattens an image.
    addOp(kOnnxOutputName, "Flatten", {valueOfNode_.at(lastNode)}, OnnxRank::Matrix, {{"axis", std::int64_t(1)}});
    graph_.output = kOnnxOutputName;
    graph_.classes = classes;
}

OnnxGraph describeAsOnnx(const NetworkSpec& spec, const std::vector<NamedTensor>& weights) {
    const ShapeReport shapes = inferShapes(spec);
    if (!shapes.problems.empty()) {
        const auto& [node, problem] = shapes.problems.front();
        throw Error(problem, node.empty() ? spec.name : node, "fix the network before exporting it");
    }
    OnnxGraph graph;
    graph.name = spec.name;
    OnnxGraphBuilder builder(weights, graph);
    for (const NodeInfo& info : shapes.nodes) {
        const NodeSpec& node = *spec.find(info.name);
        const LayerType& type = *findRegisteredLayerType(node.type);
        if (!type.exportOnnx)
            throw Error("layer type " + node.type + " has no ONNX mapping", node.name,
                        "its LayerType record needs an exportOnnx");
        builder.beginNode(node);
        type.exportOnnx(node, builder);
        builder.endNode();
    }
    builder.finishWithOutput(shapes.nodes.back().name, shapes.outputShape.countPerImage());
    return graph;
}

}  // namespace cnnstudio
