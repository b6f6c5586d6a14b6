#include "layers/layer_makers.h"
#include "cnnstudio/error.h"

namespace cnnstudio {

std::unique_ptr<Layer> createLayer(Backend& backend, const NodeSpec& node, const Shapes& in,
                                   const TensorShape& out, Initialisation init, std::uint64_t seed) {
    const std::string& type = node.type;
    if (type == "Conv2D") return makeConv2D(backend, node, in, out, init);
    if (type == "SeparableConv2D") return makeSeparableConv2D(backend, node, in, out, init);
    if (type == "Dense") return makeDense(backend, node, in, out, init);
    if (type == "MaxPool2D" || type == "AvgPool2D" || type == "GlobalAvgPool")
        return makePool(backend, node, in, out);
    if (type == "BatchNorm2D") return makeBatchNorm(backend, node, in);
    if (type == "ReLU" || type == "LeakyReLU" || type == "ELU") return makeActivation(backend, node, in);
    if (type == "Dropout") return makeDropout(backend, node, in, seed);
    if (type == "Input") return makeInput();
    if (type == "Flatten") return makeFlatten(backend, in);
    if (type == "Add") return makeAdd(backend, in);
    if (type == "Concat") return makeConcat(backend, in, out);
    throw Error("layer type '" + type + "' cannot be built", "node '" + node.name + "'");
}

}  // namespace cnnstudio
