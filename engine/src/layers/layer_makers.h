// One maker per layer family; createLayer (layer_factory.cpp) picks by node type.
// `in` holds the input shapes, `out` the output shape, both with the batch.
#pragma once

#include "layers/layer.h"

namespace cnnstudio {

using Shapes = std::vector<TensorShape>;

std::unique_ptr<Layer> makeConv2D(Backend&, const NodeSpec&, const Shapes& in, const TensorShape& out, Initialisation);
std::unique_ptr<Layer> makeSeparableConv2D(Backend&, const NodeSpec&, const Shapes& in, const TensorShape& out, Initialisation);
std::unique_ptr<Layer> makeDense(Backend&, const NodeSpec&, const Shapes& in, const TensorShape& out, Initialisation);
std::unique_ptr<Layer> makePool(Backend&, const NodeSpec&, const Shapes& in, const TensorShape& out);
std::unique_ptr<Layer> makeBatchNorm(Backend&, const NodeSpec&, const Shapes& in);
std::unique_ptr<Layer> makeActivation(Backend&, const NodeSpec&, const Shapes& in);
std::unique_ptr<Layer> makeDropout(Backend&, const NodeSpec&, const Shapes& in, std::uint64_t seed);
std::unique_ptr<Layer> makeInput();
std::unique_ptr<Layer> makeFlatten(Backend&, const Shapes& in);
std::unique_ptr<Layer> makeAdd(Backend&, const Shapes& in);
std::unique_ptr<Layer> makeConcat(Backend&, const Shapes& in, const TensorShape& out);

}  // namespace cnnstudio
