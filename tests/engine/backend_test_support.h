// Helpers for tests that run Backend ops: cpu-ref on host vectors, seeded random inputs (the seed printed on failure),
// tensors filled through Tensor::fromHost and read through toHost (so GPU backends work too),
// activation tensors in the backend's activation format, NaN-poisoned outputs, raw backend
// buffers for labels and StepScalars, relative errors, and the one table of tolerances per
// precision.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <source_location>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_buffer.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio::test {

// cpu-ref through the Backend interface, for tests that hand an op host vectors: cpu-ref's
// memory is host memory, so a std::vector's data() is a valid buffer for it.
inline Backend& cpuRef() {
    static const std::unique_ptr<Backend> backend = createBackend("cpu-ref");
    return *backend;
}

// ---- tolerances: ||out - ref|| / ||ref|| allowed for a backend of each precision -------------
inline double relativeTolerance(Precision precision) {
    switch (precision) {
    case Precision::Fp32: return 1e-4;  // float rounding, different summation orders
    case Precision::Tf32: return 5e-3;  // 10-bit mantissa inputs of matrix products
    case Precision::Bf16: return 2e-2;  // 7-bit mantissa storage or inputs
    }
    return 1e-4;
}

// The unit roundoff of the activations a backend of `precision` stores: bf16 keeps 8 significant
// bits, tf32 and fp32 store fp32.
inline double activationRoundoff(Precision precision) {
    return precision == Precision::Bf16 ? 0x1p-8 : 0x1p-24;
}

// ---- seeded random numbers ----------------------------------------------------------------
// A fresh seed every run (or CNNSTUDIO_TEST_SEED to replay one), shown in the message of every
// failure that happens while the generator is alive.
inline std::uint64_t freshTestSeed() {
    if (const char* fixed = std::getenv("CNNSTUDIO_TEST_SEED"))
        return std::strtoull(fixed, nullptr, 10);
    std::random_device device;
    return (std::uint64_t(device()) << 32) ^ device();
}

class SeededRandom {
public:
    explicit SeededRandom(std::source_location where = std::source_location::current())
        : seed_(freshTestSeed()), engine_(seed_),
          trace_(where.file_name(), int(where.line()),
                 "random seed " + std::to_string(seed_) + " (replay with CNNSTUDIO_TEST_SEED=" +
                     std::to_string(seed_) + ")") {}

    std::uint64_t seed() const { return seed_; }
    std::mt19937_64& engine() { return engine_; }

    float uniform(float low, float high) {
        return std::uniform_real_distribution<float>(low, high)(engine_);
    }
    int integer(int low, int high) {  // inclusive
        return std::uniform_int_distribution<int>(low, high)(engine_);
    }
    std::vector<float> uniforms(std::size_t count, float low = -1.0f, float high = 1.0f) {
        std::vector<float> values(count);
        for (float& value : values) value = uniform(low, high);
        return values;
    }
    std::vector<std::int32_t> labels(std::size_t count, int classes) {
        std::vector<std::int32_t> values(count);
        for (auto& value : values) value = integer(0, classes - 1);
        return values;
    }
    // `rows` random probability distributions over `classes` (each row sums to one), as a
    // teacher network's softmax gives.
    std::vector<float> probabilityRows(int rows, int classes) {
        std::vector<float> values = uniforms(std::size_t(rows) * classes, 0.01f, 1.0f);
        for (int row = 0; row < rows; ++row) {
            float* begin = values.data() + std::size_t(row) * classes;
            float sum = 0.0f;
            for (int k = 0; k < classes; ++k) sum += begin[k];
            for (int k = 0; k < classes; ++k) begin[k] /= sum;
        }
        return values;
    }

private:
    std::uint64_t seed_;
    std::mt19937_64 engine_;
    ::testing::ScopedTrace trace_;
};

// ---- tensors --------------------------------------------------------------------------------
inline TensorShape flatShape(std::int64_t count) { return {int(count), 1, 1, 1}; }

inline Tensor tensorFromHost(Backend& backend, std::span<const float> values) {
    Tensor tensor(backend, flatShape(std::int64_t(values.size())));
    tensor.fromHost(values);
    return tensor;
}

// An output tensor full of NaN, so an element the op forgets to write shows up in the error.
inline Tensor poisonedTensor(Backend& backend, std::int64_t count) {
    std::vector<float> nan(std::size_t(count), std::numeric_limits<float>::quiet_NaN());
    return tensorFromHost(backend, nan);
}

// Activations (Tensor::activations): the backend keeps them in its activation format (bf16
// channels-last on some GPU backends), so every one needs its true NCHW shape; fromHost and
// toHost convert from and to fp32 NCHW.
inline Tensor activationsFromHost(Backend& backend, TensorShape shape, std::span<const float> values) {
    Tensor tensor = Tensor::activations(backend, shape);
    tensor.fromHost(values);
    return tensor;
}

// An activation output full of NaN (NaN in every activation format).
inline Tensor poisonedActivations(Backend& backend, TensorShape shape) {
    std::vector<float> nan(std::size_t(shape.count()), std::numeric_limits<float>::quiet_NaN());
    return activationsFromHost(backend, shape, nan);
}

// `values` as the backend stores them: through its activation format and back. What an exact
// op (a copy, a mask) must give on that backend when the reference computed `values` in fp32.
inline std::vector<float> asStoredActivations(Backend& backend, TensorShape shape,
                                              std::span<const float> values) {
    return activationsFromHost(backend, shape, values).toHost();
}

// The activation shapes of each op's geometry (backend.h): images NCHW, dense rows (N, F, 1, 1).
inline TensorShape convInputShape(const ConvGeometry& g) {
    return {g.batch, g.inChannels, g.inHeight, g.inWidth};
}
inline TensorShape convOutputShape(const ConvGeometry& g) {
    return {g.batch, g.outChannels, g.outHeight, g.outWidth};
}
inline TensorShape poolInputShape(const PoolGeometry& g) {
    return {g.batch, g.channels, g.inHeight, g.inWidth};
}
inline TensorShape poolOutputShape(const PoolGeometry& g) {
    return {g.batch, g.channels, g.outHeight, g.outWidth};
}
inline TensorShape batchNormShape(const BatchNormGeometry& g) { return {g.batch, g.channels, g.spatial, 1}; }
inline TensorShape denseInputShape(const DenseGeometry& g) { return {g.batch, g.inFeatures, 1, 1}; }
inline TensorShape denseOutputShape(const DenseGeometry& g) { return {g.batch, g.outFeatures, 1, 1}; }

// Backend memory for what is not a float tensor (int32 labels, StepScalars), filled from the host.
template <typename T>
BackendBuffer<T> bufferFromHost(Backend& backend, std::span<const T> values) {
    BackendBuffer<T> buffer(backend, values.size());
    backend.upload(buffer.data(), values.data(), buffer.bytes());
    return buffer;
}
template <typename T>
BackendBuffer<T> bufferFromHost(Backend& backend, const T& value) {
    return bufferFromHost(backend, std::span<const T>(&value, 1));
}

// ---- comparisons --------------------------------------------------------------------------
// ||out - ref|| / ||ref|| in double; ||out - ref|| alone when ref is all zeros. Infinite when out
// holds a non-finite value where ref is finite (an unwritten, NaN-poisoned element, say).
inline double relativeError(std::span<const float> out, std::span<const float> ref) {
    if (out.size() != ref.size()) return std::numeric_limits<double>::infinity();
    double difference = 0.0, reference = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (std::isfinite(ref[i]) && !std::isfinite(out[i])) return std::numeric_limits<double>::infinity();
        const double delta = double(out[i]) - double(ref[i]);
        difference += delta * delta;
        reference += double(ref[i]) * double(ref[i]);
    }
    return reference > 0.0 ? std::sqrt(difference / reference) : std::sqrt(difference);
}

// Passes when relativeError(out, ref) < tolerance and no single element is off by more than
// kLocalErrorFactor * tolerance * rms(ref): the norm alone would let one wrong element (a
// border pixel, say) hide among many right ones. Otherwise says how far off, how many elements
// are non-finite and where the largest difference is.
// `scale`: the typical size of the values when ref may be far smaller — a sum whose terms
// nearly cancel (a weight gradient over a few samples) is only as exact as its terms; errors
// are then measured against max(rms(ref), scale).
inline constexpr double kLocalErrorFactor = 10.0;

inline double rootMeanSquare(std::span<const float> values) {
    double squares = 0.0;
    for (float value : values) squares += double(value) * double(value);
    return values.empty() ? 0.0 : std::sqrt(squares / double(values.size()));
}

inline ::testing::AssertionResult closeTo(std::span<const float> out, std::span<const float> ref,
                                          double tolerance, const std::string& what,
                                          double scale = 0.0) {
    if (out.size() != ref.size())
        return ::testing::AssertionFailure() << what << ": " << out.size() << " values, expected "
                                             << ref.size();
    if (out.empty()) return ::testing::AssertionSuccess();
    const double refRms = rootMeanSquare(ref), rms = std::max(refRms, scale);
    const double localLimit = kLocalErrorFactor * tolerance * (rms > 0.0 ? rms : 1.0);

    std::size_t nonFinite = 0, worst = 0;
    double worstDelta = -1.0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (!std::isfinite(out[i])) ++nonFinite;
        const double delta = std::isfinite(out[i]) ? std::abs(double(out[i]) - double(ref[i]))
                                                   : std::numeric_limits<double>::infinity();
        if (delta > worstDelta) worstDelta = delta, worst = i;
    }
    double error = relativeError(out, ref);
    if (scale > 0.0 && refRms < scale)  // measured against scale
        error *= refRms > 0.0 ? refRms / scale : 1.0 / scale;
    if (error < tolerance && worstDelta <= localLimit) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << what << ": relative error " << error << " (tolerance " << tolerance << ") over "
           << out.size() << " values; " << nonFinite << " non-finite; largest difference "
           << worstDelta << " (limit " << localLimit << ") at [" << worst << "]: " << out[worst]
           << " vs reference " << ref[worst];
}

// Passes when out and ref agree bit for bit (ops that must be exact: fill, copies, dropout masks).
inline ::testing::AssertionResult identical(std::span<const float> out, std::span<const float> ref,
                                            const std::string& what) {
    if (out.size() != ref.size())
        return ::testing::AssertionFailure() << what << ": " << out.size() << " values, expected "
                                             << ref.size();
    std::size_t mismatches = 0, first = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
        if (std::memcmp(&out[i], &ref[i], sizeof(float)) != 0 && mismatches++ == 0) first = i;
    if (mismatches == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << ": " << mismatches << " of " << out.size()
                                         << " values differ; first at [" << first << "]: "
                                         << out[first] << " vs reference " << ref[first];
}

// ---- descriptions for SCOPED_TRACE --------------------------------------------------------
inline std::string describe(const TensorShape& shape) { return "shape " + shape.toString(); }

inline std::string describe(const ConvGeometry& g) {
    std::ostringstream text;
    text << "conv x(" << g.batch << "," << g.inChannels << "," << g.inHeight << "," << g.inWidth
         << ") -> y(" << g.batch << "," << g.outChannels << "," << g.outHeight << "," << g.outWidth
         << ") kernel " << g.kernelHeight << "x" << g.kernelWidth << " stride " << g.strideHeight
         << "x" << g.strideWidth << " pad " << g.padHeight << "x" << g.padWidth << " groups "
         << g.groups;
    return text.str();
}

inline std::string describe(const PoolGeometry& g) {
    std::ostringstream text;
    text << (g.kind == PoolKind::Max ? "max" : "average") << " pool x(" << g.batch << ","
         << g.channels << "," << g.inHeight << "," << g.inWidth << ") -> y(" << g.outHeight << ","
         << g.outWidth << ") kernel " << g.kernelHeight << "x" << g.kernelWidth << " stride "
         << g.strideHeight << "x" << g.strideWidth << " pad " << g.padHeight << "x" << g.padWidth;
    return text.str();
}

inline std::string describe(const BatchNormGeometry& g) {
    std::ostringstream text;
    text << "batch norm (" << g.batch << "," << g.channels << "," << g.spatial << ") eps "
         << g.epsilon << " momentum " << g.momentum;
    return text.str();
}

inline std::string describe(const DenseGeometry& g) {
    std::ostringstream text;
    text << "dense (" << g.batch << "," << g.inFeatures << ") -> (" << g.batch << ","
         << g.outFeatures << ")";
    return text.str();
}

inline std::string describe(const LossGeometry& g) {
    std::ostringstream text;
    text << "softmax cross-entropy (" << g.batch << "," << g.classes << ") smoothing "
         << g.labelSmoothing;
    return text.str();
}

inline std::string describe(Activation kind, float alpha) {
    switch (kind) {
    case Activation::Relu: return "relu";
    case Activation::LeakyRelu: return "leaky relu alpha " + std::to_string(alpha);
    case Activation::Elu: return "elu alpha " + std::to_string(alpha);
    case Activation::Silu: return "silu";
    }
    return "unknown activation";
}

// ---- geometry builders: output sizes from PyTorch's floor rule ------------------------------
inline int windowOutput(int in, int kernel, int stride, int pad) {
    return (in + 2 * pad - kernel) / stride + 1;
}

inline ConvGeometry convGeometry(int batch, int inChannels, int inHeight, int inWidth,
                                 int outChannels, int kernelHeight, int kernelWidth,
                                 int strideHeight, int strideWidth, int padHeight, int padWidth,
                                 int groups) {
    ConvGeometry g;
    g.batch = batch;
    g.inChannels = inChannels;
    g.inHeight = inHeight;
    g.inWidth = inWidth;
    g.outChannels = outChannels;
    g.kernelHeight = kernelHeight;
    g.kernelWidth = kernelWidth;
    g.strideHeight = strideHeight;
    g.strideWidth = strideWidth;
    g.padHeight = padHeight;
    g.padWidth = padWidth;
    g.groups = groups;
    g.outHeight = windowOutput(inHeight, kernelHeight, strideHeight, padHeight);
    g.outWidth = windowOutput(inWidth, kernelWidth, strideWidth, padWidth);
    return g;
}

inline PoolGeometry poolGeometry(PoolKind kind, int batch, int channels, int inHeight, int inWidth,
                                 int kernelHeight, int kernelWidth, int strideHeight,
                                 int strideWidth, int padHeight, int padWidth) {
    PoolGeometry g;
    g.kind = kind;
    g.batch = batch;
    g.channels = channels;
    g.inHeight = inHeight;
    g.inWidth = inWidth;
    g.kernelHeight = kernelHeight;
    g.kernelWidth = kernelWidth;
    g.strideHeight = strideHeight;
    g.strideWidth = strideWidth;
    g.padHeight = padHeight;
    g.padWidth = padWidth;
    g.outHeight = windowOutput(inHeight, kernelHeight, strideHeight, padHeight);
    g.outWidth = windowOutput(inWidth, kernelWidth, strideWidth, padWidth);
    return g;
}

// Geometries every convolution test covers: odd sizes, stride 2, padding, rectangular kernels,
// groups, depthwise (with and without a channel multiplier), 1x1, 7x7, batch 1 and > 1.
inline std::vector<ConvGeometry> convGeometriesToTest() {
    return {
        convGeometry(1, 3, 11, 11, 8, 3, 3, 1, 1, 1, 1, 1),     // odd size, same padding, batch 1
        convGeometry(2, 4, 12, 9, 6, 3, 3, 2, 2, 1, 1, 1),      // stride 2, non-square input
        convGeometry(3, 8, 10, 10, 8, 3, 3, 1, 1, 1, 1, 8),     // depthwise
        convGeometry(2, 6, 13, 13, 12, 3, 3, 2, 2, 1, 1, 6),    // depthwise, multiplier 2, stride 2
        convGeometry(2, 6, 9, 9, 4, 1, 1, 1, 1, 0, 0, 2),       // 1x1, two groups
        convGeometry(2, 3, 17, 17, 5, 7, 7, 2, 2, 3, 3, 1),     // 7x7 stride 2 pad 3 (a stem)
        convGeometry(2, 4, 8, 10, 6, 5, 3, 1, 2, 2, 1, 2),      // rectangular kernel and stride
        convGeometry(1, 2, 5, 5, 3, 5, 5, 1, 1, 0, 0, 1),       // kernel covers the input: 1x1 out
        convGeometry(4, 16, 6, 6, 8, 3, 3, 1, 1, 0, 0, 4),      // four groups, no padding
        convGeometry(2, 1, 48, 48, 4, 5, 5, 1, 1, 2, 2, 1),     // FER2013-sized first layer
        convGeometry(2, 1, 48, 48, 64, 3, 3, 1, 1, 1, 1, 1),    // fer-cnn's input layer
        convGeometry(1, 3, 12, 12, 96, 7, 7, 2, 2, 3, 3, 1),    // a stem with 14,112 weights
        convGeometry(2, 12, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1),      // 12 channels: ragged vectors
        // Channels in whole 8-element vectors (bf16 tensor-core implicit GEMMs): partial tiles,
        // stride 2, 1x1, and more output channels and pixels than one 128 x 128 tile holds.
        convGeometry(2, 16, 10, 10, 24, 3, 3, 1, 1, 1, 1, 1),
        convGeometry(2, 32, 9, 7, 16, 3, 3, 2, 2, 1, 1, 1),
        convGeometry(2, 24, 5, 5, 40, 1, 1, 1, 1, 0, 0, 1),
        convGeometry(2, 64, 12, 12, 136, 3, 3, 1, 1, 1, 1, 1),
    };
}

inline std::vector<PoolGeometry> poolGeometriesToTest(PoolKind kind) {
    return {
        poolGeometry(kind, 2, 3, 12, 12, 2, 2, 2, 2, 0, 0),  // the classic 2x2/2
        poolGeometry(kind, 1, 4, 11, 11, 3, 3, 2, 2, 1, 1),  // overlapping 3x3/2 with padding
        poolGeometry(kind, 3, 2, 7, 9, 3, 3, 1, 1, 1, 1),    // stride 1, padding, non-square
        poolGeometry(kind, 2, 3, 7, 7, 2, 2, 2, 2, 0, 0),    // odd size: the last row is dropped
        poolGeometry(kind, 2, 5, 5, 5, 5, 5, 1, 1, 0, 0),    // global pooling to 1x1
        poolGeometry(kind, 2, 2, 9, 8, 3, 2, 2, 1, 1, 0),    // rectangular kernel and stride
        poolGeometry(kind, 2, 16, 12, 12, 2, 2, 2, 2, 0, 0), // tiling windows, 8-channel vectors
        poolGeometry(kind, 1, 8, 9, 6, 3, 2, 3, 2, 0, 0),    // tiling rectangular windows
    };
}

}  // namespace cnnstudio::test
