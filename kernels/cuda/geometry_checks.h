// Checks of op geometry done on the host before any launch, so that a bad shape becomes an
// Error naming the op and the offending value instead of a wild memory access on the GPU.
// The kernels index with 32-bit integers; every tensor an op touches must hold at most 2^30
// elements (4 GiB), which leaves room for the offsets and grid strides added to an index.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "cnnstudio/backend.h"
#include "cnnstudio/error.h"

namespace cnnstudio::kernels {

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

inline void requirePointer(const void* pointer, const char* op, const char* name) {
    requireOp(pointer != nullptr, op, std::string(name) + " is null");
}

// The output size a convolution or pooling window produces along one axis.
inline int windowOutputSize(int in, int kernel, int stride, int pad) {
    return (in + 2 * pad - kernel) / stride + 1;
}

inline void validateConv(const ConvGeometry& g, const char* op) {
    requireOp(g.batch > 0 && g.inChannels > 0 && g.inHeight > 0 && g.inWidth > 0 &&
                  g.outChannels > 0 && g.outHeight > 0 && g.outWidth > 0,
              op, "every convolution size must be positive");
    requireOp(g.kernelHeight > 0 && g.kernelWidth > 0 && g.strideHeight > 0 &&
                  g.strideWidth > 0 && g.padHeight >= 0 && g.padWidth >= 0,
              op, "kernel and stride must be positive and padding non-negative");
    requireOp(g.groups > 0 && g.inChannels % g.groups == 0 && g.outChannels % g.groups == 0, op,
              "groups (" + std::to_string(g.groups) + ") must divide input channels (" +
                  std::to_string(g.inChannels) + ") and output channels (" +
                  std::to_string(g.outChannels) + ")");
    requireOp(g.outHeight == windowOutputSize(g.inHeight, g.kernelHeight, g.strideHeight,
                                              g.padHeight) &&
                  g.outWidth == windowOutputSize(g.inWidth, g.kernelWidth, g.strideWidth,
                                                 g.padWidth),
              op, "output size " + std::to_string(g.outHeight) + "x" + std::to_string(g.outWidth) +
                      " does not follow from input " + std::to_string(g.inHeight) + "x" +
                      std::to_string(g.inWidth) + ", kernel, stride and padding");
    requireIndexable(g.inputCount(), op, "the input");
    requireIndexable(g.outputCount(), op, "the output");
    requireIndexable(g.weightCount(), op, "the weights");
}

inline void validatePool(const PoolGeometry& g, const char* op) {
    requireOp(g.batch > 0 && g.channels > 0 && g.inHeight > 0 && g.inWidth > 0 &&
                  g.outHeight > 0 && g.outWidth > 0,
              op, "every pooling size must be positive");
    requireOp(g.kernelHeight > 0 && g.kernelWidth > 0 && g.strideHeight > 0 &&
                  g.strideWidth > 0 && g.padHeight >= 0 && g.padWidth >= 0,
              op, "kernel and stride must be positive and padding non-negative");
    // As PyTorch: padding beyond half the window would create windows of padding only.
    requireOp(2 * g.padHeight <= g.kernelHeight && 2 * g.padWidth <= g.kernelWidth, op,
              "padding must be at most half the pooling window");
    requireOp(g.outHeight == windowOutputSize(g.inHeight, g.kernelHeight, g.strideHeight,
                                              g.padHeight) &&
                  g.outWidth == windowOutputSize(g.inWidth, g.kernelWidth, g.strideWidth,
                                                 g.padWidth),
              op, "output size " + std::to_string(g.outHeight) + "x" + std::to_string(g.outWidth) +
                      " does not follow from input " + std::to_string(g.inHeight) + "x" +
                      std::to_string(g.inWidth) + ", window, stride and padding");
    requireIndexable(g.inputCount(), op, "the input");
}

inline void validateBatchNorm(const BatchNormGeometry& g, const char* op) {
    requireOp(g.batch > 0 && g.channels > 0 && g.spatial > 0, op,
              "batch, channels and spatial size must be positive");
    requireOp(g.epsilon > 0.0f && g.epsilon < std::numeric_limits<float>::infinity(), op,
              "epsilon must be a positive number");
    requireOp(g.momentum >= 0.0f && g.momentum <= 1.0f, op, "momentum must lie in [0, 1]");
    requireIndexable(g.count(), op, "the input");
}

inline void validateDense(const DenseGeometry& g, const char* op) {
    requireOp(g.batch > 0 && g.inFeatures > 0 && g.outFeatures > 0, op,
              "batch and feature counts must be positive");
    requireIndexable(std::int64_t(g.batch) * g.inFeatures, op, "the input");
    requireIndexable(std::int64_t(g.batch) * g.outFeatures, op, "the output");
    requireIndexable(std::int64_t(g.outFeatures) * g.inFeatures, op, "the weights");
}

inline void validateLoss(const LossGeometry& g, const char* op) {
    requireOp(g.batch > 0 && g.classes > 0, op, "batch and class count must be positive");
    requireOp(g.labelSmoothing >= 0.0f && g.labelSmoothing <= 1.0f, op,
              "label smoothing must lie in [0, 1]");
    requireIndexable(std::int64_t(g.batch) * g.classes, op, "the logits");
}

inline void validateSgd(const SgdSettings& s, const char* op) {
    requireOp(s.momentum >= 0.0f, op, "SGD momentum must not be negative");
    requireOp(s.weightDecay >= 0.0f, op, "weight decay must not be negative");
    requireOp(!s.nesterov || s.momentum > 0.0f, op, "Nesterov momentum needs a positive momentum");
}

inline void validateAdam(const AdamSettings& s, const char* op) {
    requireOp(s.beta1 >= 0.0f && s.beta1 < 1.0f && s.beta2 >= 0.0f && s.beta2 < 1.0f, op,
              "Adam betas must lie in [0, 1)");
    requireOp(s.epsilon > 0.0f, op, "Adam epsilon must be positive");
    requireOp(s.weightDecay >= 0.0f, op, "weight decay must not be negative");
}

}  // namespace cnnstudio::kernels
