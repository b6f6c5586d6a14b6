// OnnxGraph -> onnx::ModelProto. Everything layer-specific happened in the engine; this file
// only fills protobuf messages and asks ONNX's checker whether the result is a valid model.
#include "cnnstudio/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

void fillAttribute(const OnnxAttribute& attribute, onnx::AttributeProto& proto) {
    proto.set_name(attribute.name);
    if (const auto* integer = std::get_if<std::int64_t>(&attribute.value)) {
        proto.set_type(onnx::AttributeProto::INT);
        proto.set_i(*integer);
    } else if (const auto* real = std::get_if<float>(&attribute.value)) {
        proto.set_type(onnx::AttributeProto::FLOAT);
        proto.set_f(*real);
    } else {
        proto.set_type(onnx::AttributeProto::INTS);
        for (std::int64_t value : std::get<std::vector<std::int64_t>>(attribute.value)) proto.add_ints(value);
    }
}

void fillNode(const OnnxNode& node, onnx::NodeProto& proto) {
    proto.set_name(node.name);
    proto.set_op_type(node.op);
    for (const std::string& input : node.inputs) proto.add_input(input);
    for (const std::string& output : node.outputs) proto.add_output(output);
    for (const OnnxAttribute& attribute : node.attributes) fillAttribute(attribute, *proto.add_attribute());
}

// Weights as raw little-endian data, as every ONNX writer stores large tensors.
void fillInitializer(const OnnxInitializer& initializer, onnx::TensorProto& proto) {
    proto.set_name(initializer.name);
    for (std::int64_t dim : initializer.dims) proto.add_dims(dim);
    if (initializer.int64s.empty()) {
        proto.set_data_type(onnx::TensorProto::FLOAT);
        proto.set_raw_data(initializer.floats.data(), initializer.floats.size() * sizeof(float));
    } else {
        proto.set_data_type(onnx::TensorProto::INT64);
        proto.set_raw_data(initializer.int64s.data(), initializer.int64s.size() * sizeof(std::int64_t));
    }
}

// A float tensor value whose first dimension is the dynamic batch "N".
void fillBatchedValue(const std::string& name, const std::vector<std::int64_t>& perImage,
                      onnx::ValueInfoProto& proto) {
    proto.set_name(name);
    onnx::TypeProto_Tensor& tensor = *proto.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(onnx::TensorProto::FLOAT);
    onnx::TensorShapeProto& shape = *tensor.mutable_shape();
    shape.add_dim()->set_dim_param("N");
    for (std::int64_t dim : perImage) shape.add_dim()->set_dim_value(dim);
}

onnx::ModelProto modelProto(const OnnxGraph& graph) {
    onnx::ModelProto model;
    model.set_ir_version(onnx::IR_VERSION);  // 8 in Debian's ONNX 1.12
    model.set_producer_name("CNN Studio");
    model.add_opset_import()->set_version(kOnnxOpset);
    onnx::GraphProto& proto = *model.mutable_graph();
    proto.set_name(graph.name.empty() ? "network" : graph.name);
    fillBatchedValue(graph.input, {graph.inputChannels, graph.inputHeight, graph.inputWidth}, *proto.add_input());
    fillBatchedValue(graph.output, {graph.classes}, *proto.add_output());
    for (const OnnxNode& node : graph.nodes) fillNode(node, *proto.add_node());
    for (const OnnxInitializer& initializer : graph.initializers) fillInitializer(initializer, *proto.add_initializer());
    return model;
}

}  // namespace

std::string serializeOnnxModel(const OnnxGraph& graph) {
    const onnx::ModelProto model = modelProto(graph);
    try {
        onnx::checker::check_model(model);
    } catch (const onnx::checker::ValidationError& error) {
        throw Error(std::string("ONNX's checker refuses the exported model: ") + error.what(), graph.name,
                    "a layer type's exportOnnx writes an invalid op; please report it");
    }
    return model.SerializeAsString();
}

void exportOnnx(const NetworkSpec& spec, const std::vector<NamedTensor>& weights,
                const std::filesystem::path& file) {
    writeFileAtomically(file, serializeOnnxModel(describeAsOnnx(spec, weights)));
}

}  // namespace cnnstudio
