// Helpers the layer families' shape rules share. A rule computes, per image, the output
// shape, the trainable parameters (counted as PyTorch counts them: the running statistics of
// batch normalisation are buffers, not parameters) and the forward FLOPs (a multiply-add counts
// 2; data movement counts 0). Each family's file states its own formula next to its rule.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "cnnstudio/tensor.h"
#include "layers/layer_params.h"
#include "layers/layer_type.h"

namespace cnnstudio {

// Product of the factors, or nothing when it does not fit an int64.
std::optional<std::int64_t> checkedProduct(std::initializer_list<std::int64_t> factors);

// Sets the outcome's shape, or its problem when the shape is too large for the backends,
// which index with int.
void setShape(LayerOutcome& outcome, std::int64_t channels, std::int64_t height, std::int64_t width);

// Sets the outcome's FLOPs, or its problem when they overflowed.
void setFlops(LayerOutcome& outcome, std::optional<std::int64_t> flops);

// Sliding a window over the input (PyTorch semantics, no ceil mode):
// out = floor((in + 2·pad - kernel) / stride) + 1 per side. Sets the problem when a side would
// be 0 or less.
std::optional<SpatialPair> slideWindow(const TensorShape& input, SpatialPair kernel,
                                       SpatialPair stride, SpatialPair padding,
                                       LayerOutcome& outcome);

// The output is the input's shape, at `flopsPerElement` per element (activations, dropout).
LayerOutcome sameShape(const TensorShape& input, std::int64_t flopsPerElement);

// "24x24", the way problems show a height and width.
std::string formatHxw(std::int64_t height, std::int64_t width);

// "(64,24,24)": channels, height, width, the way problems and summaries show a per-image shape.
std::string formatChw(const TensorShape& shape);

}  // namespace cnnstudio
