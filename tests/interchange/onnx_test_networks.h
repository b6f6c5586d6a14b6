// Networks and weights the ONNX tests export: every preset, and one network holding every layer
// type and setting the presets leave out (groups, strides, padding, AvgPool2D, LeakyReLU, ELU,
// SiLU, Concat, a three-way Add, Dense straight after a pool). Weights are random, with biases,
// batch-norm scale, shift and running statistics far from their initial values, so a reader
// that ignored them would be caught.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/network.h"
#include "cnnstudio/safetensors.h"
#include "cnnstudio/spec.h"

namespace cnnstudio::testing {

NetworkSpec everyLayerTypeSpec();
// Preset names, then "every-layer-type".
std::vector<std::string> onnxTestNetworkNames();
NetworkSpec onnxTestNetwork(const std::string& name);

// A Network on `backend` at `batch` with the random weights described above; the running
// statistics are those of one batch of other random images.
std::unique_ptr<Network> buildWithRandomWeights(const NetworkSpec& spec, Backend& backend, int batch,
                                                std::uint64_t seed);
// `images` (batch, C, H, W) in, our inference logits (batch, classes) out.
std::vector<float> inferenceLogits(Network& network, const std::vector<float>& images);
std::vector<float> randomImages(const Network& network, std::uint64_t seed);

}  // namespace cnnstudio::testing
