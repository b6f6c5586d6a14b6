// The CUDA kernels' own limit, which their ops check after Backend's shared checks: they index
// with 32-bit integers, so every tensor an op touches must hold at most 2^30 elements (4 GiB of
// fp32), which leaves room for the offsets and grid strides added to an index. Errors carry the
// op's label ("cuda convForward"), and the message is built only when a check fails.
#pragma once

#include <cstdint>
#include <string>

#include "cnnstudio/backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::kernels {

constexpr std::int64_t kMaxIndexableElements = std::int64_t(1) << 30;

inline void requireIndexable(std::int64_t count, const OpLabel& op, const char* tensor) {
    if (count > kMaxIndexableElements)
        ops::failOp(op,
                    std::string(tensor) + " has " + std::to_string(count) +
                        " elements, more than the 2^30 the CUDA kernels index",
                    "lower the batch size");
}

inline void requireIndexable(const ConvGeometry& g, const OpLabel& op) {
    requireIndexable(g.inputCount(), op, "the input");
    requireIndexable(g.outputCount(), op, "the output");
    requireIndexable(g.weightCount(), op, "the weights");
}

inline void requireIndexable(const PoolGeometry& g, const OpLabel& op) {
    requireIndexable(g.inputCount(), op, "the input");
}

inline void requireIndexable(const BatchNormGeometry& g, const OpLabel& op) {
    requireIndexable(g.count(), op, "the input");
}

inline void requireIndexable(const DenseGeometry& g, const OpLabel& op) {
    requireIndexable(std::int64_t(g.batch) * g.inFeatures, op, "the input");
    requireIndexable(std::int64_t(g.batch) * g.outFeatures, op, "the output");
    requireIndexable(std::int64_t(g.outFeatures) * g.inFeatures, op, "the weights");
}

inline void requireIndexable(const LossGeometry& g, const OpLabel& op) {
    requireIndexable(std::int64_t(g.batch) * g.classes, op, "the logits");
}

}  // namespace cnnstudio::kernels
