// ONNX -> spec + weights. One function per ONNX op read, in one table (kOpImports): import maps
// ONNX's ops, not our layer types (PyTorch folds batch norm into Conv, writes Dropout as
// Identity, SiLU as Sigmoid and Mul), so it reads op by op here rather than type by type in the
// LayerType records, which hold the export mapping.
#include "cnnstudio/onnx_import.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

using nlohmann::json;

std::string where(const onnx::NodeProto& node) { return "node '" + node.name() + "'"; }

[[noreturn]] void unsupportedSetting(const onnx::NodeProto& node, const std::string& setting) {
    throw Error("op " + node.op_type() + " with " + setting + " is not one CNN Studio has", where(node),
                "CNN Studio's layer types are listed in docs/interchange.md (ONNX, Import)");
}

const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node, const std::string& name) {
    for (const onnx::AttributeProto& attribute : node.attribute())
        if (attribute.name() == name) return &attribute;
    return nullptr;
}

std::int64_t intAttribute(const onnx::NodeProto& node, const std::string& name, std::int64_t fallback) {
    const onnx::AttributeProto* attribute = findAttribute(node, name);
    return attribute ? attribute->i() : fallback;
}

float floatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
    const onnx::AttributeProto* attribute = findAttribute(node, name);
    return attribute ? attribute->f() : fallback;
}

std::vector<std::int64_t> intsAttribute(const onnx::NodeProto& node, const std::string& name,
                                        std::vector<std::int64_t> fallback) {
    const onnx::AttributeProto* attribute = findAttribute(node, name);
    return attribute ? std::vector<std::int64_t>(attribute->ints().begin(), attribute->ints().end()) : fallback;
}

// Only float tensors can be our weights; others (a Resize's scales, a Reshape's shape) are
// kept by name only, so that reading one as a weight says what it is.
NamedTensor floatTensor(const onnx::TensorProto& proto) {
    NamedTensor tensor{proto.name(), {proto.dims().begin(), proto.dims().end()}, {}};
    if (proto.has_raw_data()) {
        tensor.values.resize(proto.raw_data().size() / sizeof(float));
        std::memcpy(tensor.values.data(), proto.raw_data().data(), tensor.values.size() * sizeof(float));
    } else {
        tensor.values.assign(proto.float_data().begin(), proto.float_data().end());
    }
    return tensor;
}

// The pairs our spec takes for kernel_shape, strides and pads (symmetric only: ours pads both
// sides alike); dilations other than 1 are not ours.
struct Window {
    json kernel, stride, padding;
};

Window readWindow(const onnx::NodeProto& node, std::vector<std::int64_t> defaultKernel) {
    const std::string autoPad = findAttribute(node, "auto_pad") ? findAttribute(node, "auto_pad")->s() : "NOTSET";
    if (autoPad != "NOTSET") unsupportedSetting(node, "auto_pad " + autoPad);
    for (std::int64_t dilation : intsAttribute(node, "dilations", {1, 1}))
        if (dilation != 1) unsupportedSetting(node, "dilations other than 1");
    const auto kernel = intsAttribute(node, "kernel_shape", defaultKernel);
    const auto strides = intsAttribute(node, "strides", {1, 1});
    const auto pads = intsAttribute(node, "pads", {0, 0, 0, 0});
    if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4) unsupportedSetting(node, "a window that is not 2-D");
    if (pads[0] != pads[2] || pads[1] != pads[3]) unsupportedSetting(node, "asymmetric pads");
    return {json::array({kernel[0], kernel[1]}), json::array({strides[0], strides[1]}),
            json::array({pads[0], pads[1]})};
}

class OnnxImporter {
public:
    OnnxImporter(const onnx::GraphProto& graph, std::string networkName);
    ImportedNetwork run();

    // What the op functions use.
    std::string dataInput(const onnx::NodeProto& node, int index);  // our node producing it
    const NamedTensor& weightInput(const onnx::NodeProto& node, int index);
    bool hasInput(const onnx::NodeProto& node, int index) const;
    void addNode(const onnx::NodeProto& node, const std::string& type, json params,
                 std::vector<std::string> inputs, std::vector<std::pair<std::string, NamedTensor>> weights);
    void passThrough(const onnx::NodeProto& node);
    void deferSigmoid(const onnx::NodeProto& node);
    void addConstant(const std::string& value, const onnx::TensorProto& tensor);
    const std::vector<std::int64_t>* int64Constant(const std::string& value) const;
    const onnx::NodeProto* deferredSigmoid(const std::string& value) const;

private:
    void addNetworkInput(const onnx::ValueInfoProto& input);
    std::string uniqueName(const onnx::NodeProto& node);

    const onnx::GraphProto& graph_;
    ImportedNetwork result_;
    std::map<std::string, NamedTensor> initializers_;  // float constants: initializers, Constant ops
    std::map<std::string, std::vector<std::int64_t>> int64Constants_;  // shapes, axes
    std::set<std::string> otherConstants_;
    std::map<std::string, std::string> nodeOfValue_;  // ONNX value -> our node computing it
    std::map<std::string, const onnx::NodeProto*> sigmoids_;  // their output, until a Mul makes a SiLU
    std::set<std::string> names_;
};

using OpImport = void (*)(const onnx::NodeProto& node, OnnxImporter& importer);

void importConv(const onnx::NodeProto& node, OnnxImporter& importer) {
    const std::string input = importer.dataInput(node, 0);
    const NamedTensor& weight = importer.weightInput(node, 1);
    if (weight.shape.size() != 4) unsupportedSetting(node, "a weight that is not 4-D");
    const Window window = readWindow(node, {weight.shape[2], weight.shape[3]});
    const bool bias = importer.hasInput(node, 2);
    std::vector<std::pair<std::string, NamedTensor>> weights{{"weight", weight}};
    if (bias) weights.push_back({"bias", importer.weightInput(node, 2)});
    importer.addNode(node, "Conv2D",
                     {{"filters", weight.shape[0]}, {"kernel", window.kernel}, {"stride", window.stride},
                      {"padding", window.padding}, {"groups", intAttribute(node, "group", 1)}, {"bias", bias}},
                     {input}, weights);
}

void importBatchNormalization(const onnx::NodeProto& node, OnnxImporter& importer) {
    const std::string input = importer.dataInput(node, 0);
    importer.addNode(node, "BatchNorm2D", {{"epsilon", floatAttribute(node, "epsilon", 1e-5f)}}, {input},
                     {{"weight", importer.weightInput(node, 1)}, {"bias", importer.weightInput(node, 2)},
                      {"running_mean", importer.weightInput(node, 3)},
                      {"running_var", importer.weightInput(node, 4)}});
}

void importRelu(const onnx::NodeProto& node, OnnxImporter& importer) {
    importer.addNode(node, "ReLU", json::object(), {importer.dataInput(node, 0)}, {});
}

void importLeakyRelu(const onnx::NodeProto& node, OnnxImporter& importer) {
    importer.addNode(node, "LeakyReLU", {{"alpha", floatAttribute(node, "alpha", 0.01f)}},
                     {importer.dataInput(node, 0)}, {});
}

void importElu(const onnx::NodeProto& node, OnnxImporter& importer) {
    importer.addNode(node, "ELU", {{"alpha", floatAttribute(node, "alpha", 1.0f)}}, {importer.dataInput(node, 0)}, {});
}

// x · Sigmoid(x) is SiLU; a Sigmoid waits for its Mul.
void importSigmoid(const onnx::NodeProto& node, OnnxImporter& importer) { importer.deferSigmoid(node); }

void importMul(const onnx::NodeProto& node, OnnxImporter& importer) {
    for (int sigmoidSide : {0, 1}) {
        const onnx::NodeProto* sigmoid = importer.deferredSigmoid(node.input(sigmoidSide));
        if (sigmoid && sigmoid->input(0) == node.input(1 - sigmoidSide)) {
            importer.addNode(node, "SiLU", json::object(), {importer.dataInput(node, 1 - sigmoidSide)}, {});
            return;
        }
    }
    unsupportedSetting(node, "inputs other than x and Sigmoid(x) (SiLU)");
}

void importMaxPool(const onnx::NodeProto& node, OnnxImporter& importer) {
    if (intAttribute(node, "ceil_mode", 0) != 0) unsupportedSetting(node, "ceil_mode 1");
    if (node.output_size() > 1) unsupportedSetting(node, "an indices output");
    const Window window = readWindow(node, {});
    importer.addNode(node, "MaxPool2D", {{"kernel", window.kernel}, {"stride", window.stride}, {"padding", window.padding}},
                     {importer.dataInput(node, 0)}, {});
}

// Ours divides by the non-padding elements: count_include_pad 1 differs only where there is padding.
void importAveragePool(const onnx::NodeProto& node, OnnxImporter& importer) {
    if (intAttribute(node, "ceil_mode", 0) != 0) unsupportedSetting(node, "ceil_mode 1");
    const Window window = readWindow(node, {});
    if (intAttribute(node, "count_include_pad", 0) != 0 && window.padding != json::array({0, 0}))
        unsupportedSetting(node, "count_include_pad 1 and padding");
    importer.addNode(node, "AvgPool2D", {{"kernel", window.kernel}, {"stride", window.stride}, {"padding", window.padding}},
                     {importer.dataInput(node, 0)}, {});
}

void importGlobalAveragePool(const onnx::NodeProto& node, OnnxImporter& importer) {
    importer.addNode(node, "GlobalAvgPool", json::object(), {importer.dataInput(node, 0)}, {});
}

void importFlatten(const onnx::NodeProto& node, OnnxImporter& importer) {
    if (intAttribute(node, "axis", 1) != 1) unsupportedSetting(node, "an axis other than 1");
    importer.addNode(node, "Flatten", json::object(), {importer.dataInput(node, 0)}, {});
}

// A Reshape to (N, features) or (N, features, 1, 1) is our Flatten, whose output is
// (N, C·H·W, 1, 1): our exporter writes the latter where a Dense output feeds a batch norm or a
// convolution. The shape is (0, -1, ...) (0 keeps the batch) or (-1, features, ...).
void importReshape(const onnx::NodeProto& node, OnnxImporter& importer) {
    const std::vector<std::int64_t>* shape = importer.hasInput(node, 1) ? importer.int64Constant(node.input(1)) : nullptr;
    if (!shape) unsupportedSetting(node, "a shape that is not a constant");
    const bool keepsBatch = shape->size() >= 2 && (((*shape)[0] == 0 && (*shape)[1] == -1) ||
                                                  ((*shape)[0] == -1 && (*shape)[1] > 0));
    const bool onesAfter = std::all_of(shape->begin() + std::min<std::size_t>(2, shape->size()), shape->end(),
                                       [](std::int64_t dim) { return dim == 1; });
    if (!keepsBatch || !onesAfter || (shape->size() != 2 && shape->size() != 4))
        unsupportedSetting(node, "a shape other than (N, features) or (N, features, 1, 1)");
    importer.addNode(node, "Flatten", json::object(), {importer.dataInput(node, 0)}, {});
}

// Dense keeps its weight as (units, features): Gemm's B with transB 1, transposed otherwise.
void importGemm(const onnx::NodeProto& node, OnnxImporter& importer) {
    if (intAttribute(node, "transA", 0) != 0 || floatAttribute(node, "alpha", 1) != 1 ||
        floatAttribute(node, "beta", 1) != 1)
        unsupportedSetting(node, "transA, alpha or beta other than 0, 1, 1");
    const std::string input = importer.dataInput(node, 0);
    NamedTensor weight = importer.weightInput(node, 1);
    if (weight.shape.size() != 2) unsupportedSetting(node, "a B that is not 2-D");
    if (intAttribute(node, "transB", 0) == 0) {
        const std::int64_t features = weight.shape[0], units = weight.shape[1];
        std::vector<float> transposed(weight.values.size());
        for (std::int64_t f = 0; f < features; ++f)
            for (std::int64_t u = 0; u < units; ++u) transposed[u * features + f] = weight.values[f * units + u];
        weight = {weight.name, {units, features}, std::move(transposed)};
    }
    const bool bias = importer.hasInput(node, 2);
    std::vector<std::pair<std::string, NamedTensor>> weights{{"weight", weight}};
    if (bias) {
        NamedTensor biasTensor = importer.weightInput(node, 2);
        biasTensor.shape = {std::int64_t(biasTensor.values.size())};  // (units) or (1, units)
        weights.push_back({"bias", biasTensor});
    }
    importer.addNode(node, "Dense", {{"units", weight.shape[0]}, {"bias", bias}}, {input}, weights);
}

void importAdd(const onnx::NodeProto& node, OnnxImporter& importer) {
    importer.addNode(node, "Add", json::object(), {importer.dataInput(node, 0), importer.dataInput(node, 1)}, {});
}

void importConcat(const onnx::NodeProto& node, OnnxImporter& importer) {
    if (intAttribute(node, "axis", 0) != 1) unsupportedSetting(node, "an axis other than 1 (channels)");
    std::vector<std::string> inputs;
    for (int i = 0; i < node.input_size(); ++i) inputs.push_back(importer.dataInput(node, i));
    importer.addNode(node, "Concat", json::object(), inputs, {});
}

// A constant (PyTorch writes some as ops rather than initializers): a weight, if float.
void importConstant(const onnx::NodeProto& node, OnnxImporter& importer) {
    const onnx::AttributeProto* value = findAttribute(node, "value");
    if (!value || !value->has_t()) unsupportedSetting(node, "a value that is not a tensor");
    importer.addConstant(node.output(0), value->t());
}

// Identity at inference (PyTorch writes eval-mode Dropout as Identity).
void importIdentity(const onnx::NodeProto& node, OnnxImporter& importer) { importer.passThrough(node); }

const std::map<std::string, OpImport> kOpImports{
    {"Conv", importConv},
    {"BatchNormalization", importBatchNormalization},
    {"Relu", importRelu},
    {"LeakyRelu", importLeakyRelu},
    {"Elu", importElu},
    {"Sigmoid", importSigmoid},
    {"Mul", importMul},
    {"MaxPool", importMaxPool},
    {"AveragePool", importAveragePool},
    {"GlobalAveragePool", importGlobalAveragePool},
    {"Flatten", importFlatten},
    {"Reshape", importReshape},
    {"Gemm", importGemm},
    {"Add", importAdd},
    {"Concat", importConcat},
    {"Dropout", importIdentity},
    {"Identity", importIdentity},
    {"Constant", importConstant},
};

OnnxImporter::OnnxImporter(const onnx::GraphProto& graph, std::string networkName) : graph_(graph) {
    result_.spec.name = std::move(networkName);
    for (const onnx::TensorProto& initializer : graph.initializer()) addConstant(initializer.name(), initializer);
}

void OnnxImporter::addConstant(const std::string& value, const onnx::TensorProto& tensor) {
    if (tensor.data_type() == onnx::TensorProto::FLOAT) {
        initializers_[value] = floatTensor(tensor);
    } else if (tensor.data_type() == onnx::TensorProto::INT64) {
        std::vector<std::int64_t>& values = int64Constants_[value];
        if (tensor.has_raw_data()) {
            values.resize(tensor.raw_data().size() / sizeof(std::int64_t));
            std::memcpy(values.data(), tensor.raw_data().data(), values.size() * sizeof(std::int64_t));
        } else {
            values.assign(tensor.int64_data().begin(), tensor.int64_data().end());
        }
        otherConstants_.insert(value);
    } else {
        otherConstants_.insert(value);
    }
}

const std::vector<std::int64_t>* OnnxImporter::int64Constant(const std::string& value) const {
    const auto constant = int64Constants_.find(value);
    return constant == int64Constants_.end() ? nullptr : &constant->second;
}

ImportedNetwork OnnxImporter::run() {
    for (const onnx::ValueInfoProto& input : graph_.input())
        if (!initializers_.contains(input.name()) && !otherConstants_.contains(input.name())) addNetworkInput(input);
    for (const onnx::NodeProto& node : graph_.node()) {
        const auto op = kOpImports.find(node.op_type());
        if (op == kOpImports.end())
            throw Error("op " + node.op_type() + " is not one CNN Studio has", where(node),
                        "CNN Studio's layer types are listed in docs/interchange.md (ONNX, Import)");
        op->second(node, *this);
    }
    if (graph_.output_size() != 1)
        throw Error("the model has " + std::to_string(graph_.output_size()) + " outputs", "ONNX model",
                    "CNN Studio networks give one tensor of class scores");
    if (const onnx::NodeProto* sigmoid = deferredSigmoid(graph_.output(0).name()))
        throw Error("op Sigmoid (not as part of x · Sigmoid(x)) is not one CNN Studio has", where(*sigmoid),
                    "CNN Studio has SiLU, not Sigmoid alone");
    return std::move(result_);
}

void OnnxImporter::addNetworkInput(const onnx::ValueInfoProto& input) {
    if (!result_.spec.nodes.empty())
        throw Error("the model has more than one input", "input '" + input.name() + "'",
                    "CNN Studio networks take one image tensor");
    const auto& dims = input.type().tensor_type().shape().dim();
    if (dims.size() != 4 || !dims[1].has_dim_value() || !dims[2].has_dim_value() || !dims[3].has_dim_value())
        throw Error("the input is not (N, C, H, W) with fixed C, H and W", "input '" + input.name() + "'",
                    "export with a fixed image size");
    NodeSpec node{"input", "Input",
                  {{"channels", dims[1].dim_value()}, {"height", dims[2].dim_value()}, {"width", dims[3].dim_value()}},
                  {}};
    names_.insert(node.name);
    nodeOfValue_[input.name()] = node.name;
    result_.spec.nodes.push_back(std::move(node));
}

// "/conv1_1/Conv" (PyTorch's module path and op) -> "conv1_1"; other characters than letters,
// digits, '_' and '-' become '_'; a name taken already gets "_2", "_3", ...
std::string OnnxImporter::uniqueName(const onnx::NodeProto& node) {
    std::string name = node.name();
    const std::string opSuffix = "/" + node.op_type();
    if (name.size() > opSuffix.size() && name.ends_with(opSuffix)) name.resize(name.size() - opSuffix.size());
    while (!name.empty() && name.front() == '/') name.erase(name.begin());
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
    if (name.empty()) name = node.op_type();
    std::string unique = name;
    for (int suffix = 2; names_.contains(unique); ++suffix) unique = name + "_" + std::to_string(suffix);
    names_.insert(unique);
    return unique;
}

bool OnnxImporter::hasInput(const onnx::NodeProto& node, int index) const {
    return index < node.input_size() && !node.input(index).empty();
}

std::string OnnxImporter::dataInput(const onnx::NodeProto& node, int index) {
    const std::string& value = node.input(index);
    if (const onnx::NodeProto* sigmoid = deferredSigmoid(value))
        throw Error("op Sigmoid (not as part of x · Sigmoid(x)) is not one CNN Studio has", where(*sigmoid),
                    "CNN Studio has SiLU, not Sigmoid alone");
    const auto producer = nodeOfValue_.find(value);
    if (producer == nodeOfValue_.end())
        throw Error("input " + value + " is a constant or unknown, where CNN Studio takes a layer's output",
                    where(node), "CNN Studio's " + node.op_type() + " reads layer outputs only");
    return producer->second;
}

const NamedTensor& OnnxImporter::weightInput(const onnx::NodeProto& node, int index) {
    const auto initializer = hasInput(node, index) ? initializers_.find(node.input(index)) : initializers_.end();
    if (hasInput(node, index) && otherConstants_.contains(node.input(index)))
        throw Error("input " + std::to_string(index) + " is a constant of another type than float32", where(node),
                    "CNN Studio reads fp32 weights only");
    if (initializer == initializers_.end())
        throw Error("input " + std::to_string(index) + " is not a constant", where(node),
                    "CNN Studio reads weights from the model's initializers");
    return initializer->second;
}

void OnnxImporter::addNode(const onnx::NodeProto& node, const std::string& type, json params,
                           std::vector<std::string> inputs, std::vector<std::pair<std::string, NamedTensor>> weights) {
    const std::string name = uniqueName(node);
    for (auto& [suffix, tensor] : weights) {
        tensor.name = name + "." + suffix;
        result_.weights.push_back(std::move(tensor));
    }
    nodeOfValue_[node.output(0)] = name;
    result_.spec.nodes.push_back({name, type, std::move(params), std::move(inputs)});
}

void OnnxImporter::passThrough(const onnx::NodeProto& node) {
    nodeOfValue_[node.output(0)] = dataInput(node, 0);
}

void OnnxImporter::deferSigmoid(const onnx::NodeProto& node) { sigmoids_[node.output(0)] = &node; }

const onnx::NodeProto* OnnxImporter::deferredSigmoid(const std::string& value) const {
    const auto sigmoid = sigmoids_.find(value);
    return sigmoid == sigmoids_.end() ? nullptr : sigmoid->second;
}

}  // namespace

ImportedNetwork importOnnx(const std::filesystem::path& file) {
    std::ifstream stream(file, std::ios::binary);
    if (!stream) throw Error("cannot open the file", file.string(), "check the path");
    onnx::ModelProto model;
    if (!model.ParseFromIstream(&stream) || !model.has_graph())
        throw Error("not an ONNX model", file.string(), "pass a .onnx file (a serialised ModelProto)");
    return OnnxImporter(model.graph(), file.stem().string()).run();
}

}  // namespace cnnstudio
