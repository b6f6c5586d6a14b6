// Host-side checks before any launch, so that a bad shape becomes an Error naming the op and
// the offending value instead of a wild memory access on the GPU. The geometry and setting rules
// are every backend's (cnnstudio/op_checks.h); the CUDA kernels add their own limit: they index
// with 32-bit integers, so every tensor an op touches must hold at most 2^30 elements (4 GiB),
// which leaves room for the offsets and grid strides added to an index.
#pragma once

#include <cstdint>
#include <string>

#include "cnnstudio/backend.h"
#include "cnnstudio/error.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::kernels {

using ops::requirePointer;

// For checks of the kernels' own (the layout kernels' sizes, say).
inline void requireOp(bool condition, const char* op, const std::string& what) {
    if (!condition)
        throw Error(what, std::string("op ") + op,
                    "the network's shapes are inconsistent; check the spec's layer settings");
}

constexpr std::int64_t kMaxIndexableElements = std::int64_t(1) << 30;

inline void requireIndexable(std::int64_t count, const char* op, const char* tensor) {
    requireOp(count <= kMaxIndexableElements, op,
              std::string(tensor) + " has " + std::to_string(count) +
                  " elements, more than the 2^30 the CUDA kernels index (lower the batch size)");
}

inline void validateConv(const ConvGeometry& g, const char* op) {
    ops::checkConvGeometry(g, op);
    requireIndexable(g.inputCount(), op, "the input");
    requireIndexable(g.outputCount(), op, "the output");
    requireIndexable(g.weightCount(), op, "the weights");
}

inline void validatePool(const PoolGeometry& g, const char* op) {
    ops::checkPoolGeometry(g, op);
    requireIndexable(g.inputCount(), op, "the input");
}

// `training`: the batch statistics need more than one value per channel.
inline void validateBatchNorm(const BatchNormGeometry& g, bool training, const char* op) {
    ops::checkBatchNormGeometry(g, training, op);
    requireIndexable(g.count(), op, "the input");
}

inline void validateDense(const DenseGeometry& g, const char* op) {
    ops::checkDenseGeometry(g, op);
    requireIndexable(std::int64_t(g.batch) * g.inFeatures, op, "the input");
    requireIndexable(std::int64_t(g.batch) * g.outFeatures, op, "the output");
    requireIndexable(std::int64_t(g.outFeatures) * g.inFeatures, op, "the weights");
}

inline void validateLoss(const LossGeometry& g, const char* op) {
    ops::checkLossGeometry(g, op);
    requireIndexable(std::int64_t(g.batch) * g.classes, op, "the logits");
}

}  // namespace cnnstudio::kernels
