#include "interchange/onnx_test_networks.h"

#include <random>

#include "cnnstudio/checkpoint.h"
#include "cnnstudio/presets.h"

namespace cnnstudio::testing {

NetworkSpec everyLayerTypeSpec() {
    return NetworkSpec::fromJson(nlohmann::json::parse(R"({
      "format": "cnnstudio-network", "version": 1, "name": "every-layer-type",
      "nodes": [
        {"name": "input", "type": "Input", "params": {"channels": 3, "height": 17, "width": 15}},
        {"name": "grouped", "type": "Conv2D", "inputs": ["input"],
         "params": {"filters": 6, "kernel": [3, 5], "stride": [2, 1], "padding": [1, 2], "groups": 3}},
        {"name": "bn", "type": "BatchNorm2D", "inputs": ["grouped"], "params": {"epsilon": 0.001}},
        {"name": "leaky", "type": "LeakyReLU", "inputs": ["bn"], "params": {"alpha": 0.2}},
        {"name": "separable", "type": "SeparableConv2D", "inputs": ["leaky"],
         "params": {"filters": 6, "kernel": 3, "padding": "same"}},
        {"name": "elu", "type": "ELU", "inputs": ["separable"], "params": {"alpha": 0.7}},
        {"name": "plain", "type": "Conv2D", "inputs": ["leaky"], "params": {"filters": 6, "kernel": 1, "bias": false}},
        {"name": "silu", "type": "SiLU", "inputs": ["plain"]},
        {"name": "sum", "type": "Add", "inputs": ["elu", "silu", "leaky"]},
        {"name": "joined", "type": "Concat", "inputs": ["sum", "elu"]},
        {"name": "average", "type": "AvgPool2D", "inputs": ["joined"], "params": {"kernel": 3, "stride": 2, "padding": 1}},
        {"name": "maximum", "type": "MaxPool2D", "inputs": ["average"], "params": {"kernel": 2, "stride": 1, "padding": 1}},
        {"name": "global", "type": "GlobalAvgPool", "inputs": ["maximum"]},
        {"name": "hidden", "type": "Dense", "inputs": ["global"], "params": {"units": 10}},
        {"name": "hidden_relu", "type": "ReLU", "inputs": ["hidden"]},
        {"name": "drop", "type": "Dropout", "inputs": ["hidden_relu"], "params": {"rate": 0.3}},
        {"name": "flat", "type": "Flatten", "inputs": ["maximum"]},
        {"name": "wide", "type": "Dense", "inputs": ["flat"], "params": {"units": 10, "bias": false}},
        {"name": "both", "type": "Add", "inputs": ["drop", "wide"]},
        {"name": "scores", "type": "Dense", "inputs": ["both"], "params": {"units": 5}}
      ]})"));
}

std::vector<std::string> onnxTestNetworkNames() {
    std::vector<std::string> names = presetNames();
    names.push_back("every-layer-type");
    return names;
}

NetworkSpec onnxTestNetwork(const std::string& name) {
    return name == "every-layer-type" ? everyLayerTypeSpec() : loadPreset(name);
}

namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Biases, batch-norm scales and shifts start constant (0, 1, 0): they get random values, scales
// near 1 so that activations keep their size through deep networks. Kernels keep their He /
// Glorot initialisation; running statistics come from calibrate().
void randomiseTensor(NamedTensor& tensor, std::mt19937& generator) {
    std::uniform_real_distribution<float> shift(-0.3f, 0.3f), scale(0.8f, 1.25f);
    if (tensor.shape.size() != 1 || tensor.name.find(".running_") != std::string::npos) return;
    const bool batchNormScale = endsWith(tensor.name, ".weight");
    for (float& value : tensor.values) value = batchNormScale ? scale(generator) : shift(generator);
}

// Every batch norm with momentum 1, so that one training-phase forward pass sets its running
// statistics to those of the batch it saw: far from the initial (0, 1), and of the size real
// statistics have, so logits stay of order 1 (random statistics compound through vgg-fer's 13
// batch norms into logits of order 50, where fp32 summation order alone differs by 1e-4).
NetworkSpec withRunningStatisticsOfOneBatch(NetworkSpec spec) {
    for (NodeSpec& node : spec.nodes)
        if (node.type == "BatchNorm2D") node.params["momentum"] = 1.0;
    return spec;
}

void calibrate(Network& network, const std::vector<float>& images) {
    Tensor& input = network.input();
    network.backend().uploadActivations(input.shape(), images.data(), input.data());
    const StepScalars scalars;
    network.backend().upload(network.stepScalars(), &scalars, sizeof scalars);
    network.forward(Phase::Training);
}

}  // namespace

std::unique_ptr<Network> buildWithRandomWeights(const NetworkSpec& spec, Backend& backend, int batch,
                                                std::uint64_t seed) {
    auto network = std::make_unique<Network>(withRunningStatisticsOfOneBatch(spec), backend, batch, seed);
    std::vector<NamedTensor> tensors = networkTensors(*network);
    std::mt19937 generator(static_cast<std::mt19937::result_type>(seed));
    for (NamedTensor& tensor : tensors) randomiseTensor(tensor, generator);
    loadNetworkTensors(*network, tensors, "random weights");
    calibrate(*network, randomImages(*network, seed + 2));
    return network;
}

std::vector<float> randomImages(const Network& network, std::uint64_t seed) {
    std::mt19937 generator(static_cast<std::mt19937::result_type>(seed));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> images(std::size_t(network.inputShape().count()));
    for (float& value : images) value = normal(generator);
    return images;
}

std::vector<float> inferenceLogits(Network& network, const std::vector<float>& images) {
    Tensor& input = network.input();
    network.backend().uploadActivations(input.shape(), images.data(), input.data());
    network.forward(Phase::Inference);
    const Tensor& logits = network.logits();
    std::vector<float> host(std::size_t(logits.shape().count()));
    network.backend().downloadActivations(logits.shape(), logits.data(), host.data());
    return host;
}

}  // namespace cnnstudio::testing
