// cuDNN convolution on the bf16 channels-last activations of the cudnn backend's bf16
// precision (see conv.cpp for the op's contract and the fp32/tf32 path).
//
// x, y, dx, dy are read and written in place, as bf16 NHWC. The graph API (ConvEngine,
// conv_engine.h) runs them: it reaches Hopper's warpgroup kernels, which the legacy algorithms
// do not choose. The fp32 KCRS weights are staged as a bf16 KRSC copy in the workspace before
// each call (during a hold of the weights, once for the forward pass and the backward data pass
// that follows: held_weights.h), dw comes back through the same copy, and biases are added and
// reduced in fp32 registers (layout.h).
//
// Tensor-core engines need whole 16-byte channel vectors (8 bf16): an ungrouped convolution with
// ragged input channels runs on zero-padded copies of x, w (and dx, dw) kept with its plan. A
// network's input layer (fewer than 8 channels: 1 grey or 3 colour) runs its forward and backward
// filter on our direct kernels instead (cuda/small_input_conv.h), which read x and the fp32
// weights as they are: on the H200 cuDNN took fer-cnn's 0.12 and 0.10 ms a step, mostly in
// padding and in tensor-core tiles of zeros (docs/logs/2026-12-02-input-layer). Its backward
// data (needed only to explain a prediction) stays on cuDNN, padded.

#include <algorithm>
#include <cstdint>
#include <memory>

#include "cuda/bf16_convert.h"
#include "cuda/layout.h"
#include "cuda/small_input_conv.h"
#include "cudnn/conv_scratch.h"
#include "cudnn/cudnn_backend.h"
#include "runtime/cuda_check.h"

namespace cnnstudio::kernels {

std::size_t CudnnBackend::filterStagingBytes(const ConvGeometry& g) const {
    return storesBf16() ? bf16Bytes(g.weightCount()) : 0;
}

const void* CudnnBackend::stageFilter(const ConvGeometry& g, const float* w, void* room) {
    if (!storesBf16()) return w;
    // (K, C/groups, R*S) fp32 -> (K, R*S, C/groups) bf16: KCRS to KRSC.
    transposeImages(w, static_cast<__nv_bfloat16*>(room), g.outChannels, g.inChannels / g.groups,
                    g.kernelHeight * g.kernelWidth, stream());
    return room;
}

void CudnnBackend::unstageFilterGradient(const ConvGeometry& g, const void* room, float* dw) {
    transposeImages(static_cast<const __nv_bfloat16*>(room), dw, g.outChannels,
                    g.kernelHeight * g.kernelWidth, g.inChannels / g.groups, stream());
}

ChannelPadding::ChannelPadding(Backend& memory, const ConvGeometry& g)
    : geometry(g) {
    geometry.inChannels = (g.inChannels + kChannelVector - 1) / kChannelVector * kChannelVector;
    filter = BackendBuffer<__nv_bfloat16>(memory, std::size_t(geometry.weightCount()));
}

void* ChannelPadding::input(Backend& memory) {
    if (input_.count() == 0)
        input_ = BackendBuffer<__nv_bfloat16>(memory, std::size_t(geometry.inputCount()));
    return input_.data();
}

void* ChannelPadding::inputGradient(Backend& memory) {
    if (inputGradient_.count() == 0)
        inputGradient_ = BackendBuffer<__nv_bfloat16>(memory, std::size_t(geometry.inputCount()));
    return inputGradient_.data();
}

const void* CudnnBackend::padInput(const ConvGeometry& g, ConvPlan& plan, const float* x) {
    ChannelPadding* padding = plan.padding.get();
    if (!padding) return x;
    void* padded = padding->input(*this);
    CNNSTUDIO_CUDA_CHECK(
        cudaMemsetAsync(padded, 0, bf16Bytes(padding->geometry.inputCount()), stream()));
    copyChannels(g.batch, g.inHeight * g.inWidth, g.inChannels, x, g.inChannels, 0,
                 static_cast<float*>(padded), padding->geometry.inChannels, 0);
    return padded;
}

const void* CudnnBackend::padFilter(const ConvGeometry& g, ConvPlan& plan, const void* staged) {
    ChannelPadding* padding = plan.padding.get();
    if (!padding) return staged;
    CNNSTUDIO_CUDA_CHECK(
        cudaMemsetAsync(padding->filter.data(), 0, padding->filter.bytes(), stream()));
    copyChannels(g.outChannels, g.kernelHeight * g.kernelWidth, g.inChannels,
                 static_cast<const float*>(staged), g.inChannels, 0,
                 reinterpret_cast<float*>(padding->filter.data()), padding->geometry.inChannels, 0);
    return padding->filter.data();
}

ConvEngine& CudnnBackend::convEngine(const ConvGeometry& g, ConvPlan& plan,
                                     ConvDirection direction, ConvOperands operands,
                                     const float* w) {
    std::unique_ptr<ConvEngine>& engine = plan.engines[std::size_t(direction)];
    if (engine && engine->chosen()) return *engine;
    const ConvGeometry& run = plan.padding ? plan.padding->geometry : g;
    engine = std::make_unique<ConvEngine>(cudnn_, run, direction);
    // Timing synchronises, which a capture forbids; then the heuristics' pick is taken and
    // nothing is enqueued.
    const bool timed = !streamIsCapturing();
    const std::size_t limit = timed ? searchWorkspaceLimit() : kHeuristicWorkspaceLimit;
    const std::size_t outputBytes = direction == ConvDirection::Forward ? bf16Bytes(run.outputCount())
                                    : direction == ConvDirection::BackwardData
                                        ? bf16Bytes(run.inputCount())
                                        : bf16Bytes(run.weightCount());
    const bool readsFilter = direction != ConvDirection::BackwardFilter;
    AlgorithmSearch search(*this, timed && readsFilter ? filterStagingBytes(g) : 0,
                           timed ? outputBytes : 0, timed ? limit : 0);
    if (timed && readsFilter) operands.w = padFilter(g, plan, stageFilter(g, w, search.filterRoom()));
    const ConvEngineChoice choice = engine->choose(operands, search.output(), search.workspace(),
                                                   limit, timed, deterministic_, stream());
    ++(choice.timed ? stats_.algorithmSearches : stats_.heuristicChoices);
    stats_.largestWorkspaceBytes = std::max(stats_.largestWorkspaceBytes, choice.workspaceBytes);
    return *engine;
}

void CudnnBackend::runWithStagedFilter(const ConvGeometry& g, ConvPlan& plan,
                                       const ConvEngine& engine, const float* w,
                                       ConvOperands operands) {
    // A padded filter is copied into the plan's padded buffer by every call, so only unpadded
    // ones are held (fer-cnn's staged filters all are: its input layer reads the fp32 weights).
    const bool held = storesBf16() && heldWeights_.holding() && !plan.padding;
    ScratchLayout layout;
    const std::size_t filterAt = layout.add(held ? 0 : filterStagingBytes(g));
    const std::size_t workAt = layout.add(engine.workspaceBytes());
    char* scratch = static_cast<char*>(workspace(layout.total()));
    if (held) {
        const HeldWeights::Shape shape{g.outChannels, g.inChannels / g.groups,
                                       g.kernelHeight * g.kernelWidth};
        operands.w = heldCopy(w, shape, filterStagingBytes(g),
                              [this, g, w](void* room) { stageFilter(g, w, room); });
    } else {
        operands.w = padFilter(g, plan, stageFilter(g, w, scratch + filterAt));
    }
    engine.run(operands, scratch + workAt);
}

void CudnnBackend::convForwardChannelsLast(const ConvGeometry& g, ConvPlan& plan,
                                           const float* x, const float* w, const float* bias,
                                           float* y) {
    if (isSmallInputConv(g)) {
        smallInputConvForward(g, asBf16(x), w, bias, asBf16(y),
                              deviceProperties().multiProcessorCount, stream());
        return;
    }
    const void* input = padInput(g, plan, x);
    const ConvOperands operands{input, nullptr, nullptr, y};
    runWithStagedFilter(g, plan, convEngine(g, plan, ConvDirection::Forward, operands, w), w,
                        operands);
    if (bias != nullptr)
        addChannelBiasChannelsLast(asBf16(y), bias, std::int64_t(g.batch) * g.outHeight * g.outWidth,
                                   g.outChannels, stream());
}

void CudnnBackend::convBackwardDataChannelsLast(const ConvGeometry& g, ConvPlan& plan,
                                                const float* dy, const float* w, float* dx) {
    ChannelPadding* padding = plan.padding.get();
    void* gradient = padding ? padding->inputGradient(*this) : static_cast<void*>(dx);
    const ConvOperands operands{nullptr, nullptr, dy, gradient};
    runWithStagedFilter(g, plan, convEngine(g, plan, ConvDirection::BackwardData, operands, w),
                        w, operands);
    if (padding)  // the real channels of the padded dx
        copyChannels(g.batch, g.inHeight * g.inWidth, g.inChannels,
                     static_cast<const float*>(gradient), padding->geometry.inChannels, 0, dx,
                     g.inChannels, 0);
}

void CudnnBackend::convBackwardFilterChannelsLast(const ConvGeometry& g, ConvPlan& plan,
                                                  const float* x, const float* dy, float* dw,
                                                  float* dbias) {
    if (isSmallInputConv(g)) {
        enqueueWeightGradient([&] {
            smallInputConvBackwardFilter(g, asBf16(x), asBf16(dy), dw, dbias,
                                         workspace(smallInputConvBackwardFilterWorkspaceBytes(g)),
                                         stream());
        });
        return;
    }
    // Padding (which may allocate) and the engine search run in order; the rest may overlap.
    const void* input = padInput(g, plan, x);
    ConvEngine& engine =
        convEngine(g, plan, ConvDirection::BackwardFilter, {input, nullptr, dy, nullptr}, nullptr);
    ChannelPadding* padding = plan.padding.get();
    auto enqueue = [&] {
        const std::int64_t pixels = std::int64_t(g.batch) * g.outHeight * g.outWidth;
        ScratchLayout layout;
        const std::size_t gradientAt = layout.add(filterStagingBytes(g));
        const std::size_t paddedAt =
            layout.add(padding ? bf16Bytes(padding->geometry.weightCount()) : 0);
        const std::size_t workAt = layout.add(engine.workspaceBytes());
        const std::size_t sumsAt = layout.add(
            dbias != nullptr ? channelSumsChannelsLastWorkspaceBytes(pixels, g.outChannels) : 0);
        char* scratch = static_cast<char*>(workspace(layout.total()));
        char* gradient = scratch + (padding ? paddedAt : gradientAt);
        engine.run({input, nullptr, dy, gradient}, scratch + workAt);
        if (padding)  // the real channels of the padded KRSC dw
            copyChannels(g.outChannels, g.kernelHeight * g.kernelWidth, g.inChannels,
                         reinterpret_cast<const float*>(gradient), padding->geometry.inChannels, 0,
                         reinterpret_cast<float*>(scratch + gradientAt), g.inChannels, 0);
        unstageFilterGradient(g, scratch + gradientAt, dw);
        if (dbias != nullptr)
            channelSumsChannelsLast(asBf16(dy), dbias, pixels, g.outChannels, scratch + sumsAt,
                                    stream());
    };
    // A padded x lives in the plan, which layers of one geometry share: the next such layer
    // would pad into it under a weight gradient still reading it, so these stay in order.
    if (padding)
        enqueue();
    else
        enqueueWeightGradient(enqueue);
}

}  // namespace cnnstudio::kernels
