// cuDNN convolution: x (N,C,H,W), w (K,C/groups,R,S), bias (K) -> y (N,K,P,Q), and its two
// backward passes (dx from dy and w; dw and dbias from x and dy).
//
// fp32/tf32 (this file): NCHW throughout, on the legacy API. Per geometry, on first use:
// descriptors, then one algorithm per direction, benchmarked with cudnnFind*AlgorithmEx on
// scratch outputs (never on the caller's): the fastest, or with BackendOptions::deterministic
// the fastest deterministic one; strict fp32 takes neither tensor-core nor FFT algorithms. bf16: conv_channels_last.cpp.
//
// Inference fusion (convBatchNormReluInference, every precision): the batch norm is folded into
// the weights and a bias (fold_batch_norm.cu), then cuDNN's fused convolution-bias-activation
// writes relu(conv + bias) in one pass, with the implicit-precomputed-GEMM algorithm (the one
// cuDNN supports for a fused ReLU in every configuration).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cnnstudio/error.h"
#include "cuda/index_limits.h"
#include "cudnn/conv_scratch.h"
#include "cudnn/cudnn_backend.h"
#include "cudnn/fold_batch_norm.h"
#include "runtime/cuda_check.h"

namespace cnnstudio::kernels {
namespace {

// FFT algorithms compute in the frequency domain and round there: in fp32 their results drift
// by 1e-4 relative and more (cudnn fp32's dx of a 5x5 grey layer came out 3.6e-4 off in
// BackendConformance.ConvWeightsHeldFromForwardToBackwardAndNoLonger on the H200, where the
// tolerance is 1e-4), so strict fp32 leaves them out. (Leaving Winograd out too halved fer-cnn's
// fp32 step, 20.2k to 10.4k images/s: docs/logs/2026-12-04-filter-mma/call2.)
bool roundsInFrequencyDomain(cudnnConvolutionFwdAlgo_t algorithm) {
    return algorithm == CUDNN_CONVOLUTION_FWD_ALGO_FFT || algorithm == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING;
}
bool roundsInFrequencyDomain(cudnnConvolutionBwdDataAlgo_t algorithm) {
    return algorithm == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
           algorithm == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING;
}
bool roundsInFrequencyDomain(cudnnConvolutionBwdFilterAlgo_t algorithm) {
    return algorithm == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
           algorithm == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING;
}

// The fastest usable result of a benchmark or heuristic query (both come sorted best first).
// With `preferDeterministic`, deterministic algorithms come first: with them a run, and a resumed
// run, reproduce the same weights bit for bit; a nondeterministic one (atomics across tiles) is
// then taken only when no deterministic one can run.
template <typename Perf>
ConvAlgorithmChoice pickAlgorithm(const std::vector<Perf>& results, int returned,
                                  std::size_t workspaceLimit, Precision precision,
                                  bool benchmarked, bool preferDeterministic) {
    for (bool deterministicOnly : {preferDeterministic, false}) {
        for (int i = 0; i < returned; ++i) {
            const Perf& result = results[std::size_t(i)];
            if (result.status != CUDNN_STATUS_SUCCESS || result.memory > workspaceLimit) continue;
            if (deterministicOnly && result.determinism != CUDNN_DETERMINISTIC) continue;
            if (result.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;  // fp16 inside
            if (precision == Precision::Fp32 && result.mathType == CUDNN_TENSOR_OP_MATH) continue;
            if (precision == Precision::Fp32 && roundsInFrequencyDomain(result.algo)) continue;
            ConvAlgorithmChoice choice;
            choice.algorithm = int(result.algo);
            // Strict fp32 keeps FMA math whatever the result reports (DEFAULT would permit TF32).
            choice.mathType = precision == Precision::Fp32 ? CUDNN_FMA_MATH : result.mathType;
            choice.workspaceBytes = result.memory;
            choice.benchmarked = benchmarked;
            return choice;
        }
    }
    return {};
}

// Ungrouped convolutions with ragged input channels run on padded copies (ChannelPadding).
bool needsChannelPadding(const ConvGeometry& g) {
    return g.groups == 1 && g.inChannels % ChannelPadding::kChannelVector != 0;
}

}  // namespace

ConvPlan& CudnnBackend::convPlan(const ConvGeometry& g, const OpLabel& op) {
    const ConvKey key{g, precision()};
    if (auto found = convPlans_.find(key); found != convPlans_.end()) return found->second;

    requireIndexable(g, op);
    const cudnnDataType_t type = computeType();
    const cudnnTensorFormat_t layout = activationLayout();
    ConvPlan plan;
    plan.input = makeTensorDescriptor(type, g.batch, g.inChannels, g.inHeight, g.inWidth, layout);
    plan.output =
        makeTensorDescriptor(type, g.batch, g.outChannels, g.outHeight, g.outWidth, layout);
    if (!storesBf16()) {  // bf16 adds and reduces biases with our channels-last kernels
        plan.outputFloat =
            makeTensorDescriptor(CUDNN_DATA_FLOAT, g.batch, g.outChannels, g.outHeight, g.outWidth);
        plan.bias = makeTensorDescriptor(CUDNN_DATA_FLOAT, 1, g.outChannels, 1, 1);
    }
    plan.filter = makeFilterDescriptor(type, g.outChannels, g.inChannels / g.groups,
                                       g.kernelHeight, g.kernelWidth, layout);
    plan.convolution = makeConvolutionDescriptor();
    // Accumulation is fp32 in every precision (bf16 inputs: cuDNN's "pseudo bf16" configuration).
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        plan.convolution.get(), g.padHeight, g.padWidth, g.strideHeight, g.strideWidth, 1, 1,
        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionGroupCount(plan.convolution.get(), g.groups));
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.convolution.get(), requestedMathType()));
    if (storesBf16() && needsChannelPadding(g)) plan.padding = std::make_unique<ChannelPadding>(*this, g);
    return convPlans_.emplace(key, std::move(plan)).first->second;
}

void CudnnBackend::recordChoice(const ConvGeometry& g, const char* direction,
                                const ConvAlgorithmChoice& choice) {
    if (!choice.chosen())
        throw Error("cuDNN offers no " + std::string(direction) + " algorithm for " + describeConv(g) +
                        " in " + toString(precision()),
                    "cudnn backend", "try precision fp32 or backend 'cuda'");
    ++(choice.benchmarked ? stats_.algorithmSearches : stats_.heuristicChoices);
    stats_.largestWorkspaceBytes = std::max(stats_.largestWorkspaceBytes, choice.workspaceBytes);
}

void CudnnBackend::chooseForwardAlgorithm(const ConvGeometry& g, ConvPlan& plan, const float* x,
                                          const float* w) {
    if (plan.forward.chosen()) return;
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.convolution.get(), requestedMathType()));
    int requested = 0, returned = 0;
    CNNSTUDIO_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(cudnn_, &requested));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> results(std::size_t(std::max(requested, 1)));
    if (streamIsCapturing()) {
        CNNSTUDIO_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
            cudnn_, plan.input.get(), plan.filter.get(), plan.convolution.get(), plan.output.get(),
            requested, &returned, results.data()));
        plan.forward =
            pickAlgorithm(results, returned, kHeuristicWorkspaceLimit, precision(), false, deterministic_);
    } else {
        AlgorithmSearch search(*this, 0, activationBytes(g.outputCount()), searchWorkspaceLimit());
        CNNSTUDIO_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
            cudnn_, plan.input.get(), x, plan.filter.get(), w,
            plan.convolution.get(), plan.output.get(), search.output(), requested, &returned,
            results.data(), search.workspace(), search.workspaceBytes()));
        plan.forward =
            pickAlgorithm(results, returned, search.workspaceBytes(), precision(), true, deterministic_);
    }
    recordChoice(g, "forward", plan.forward);
}

void CudnnBackend::chooseBackwardDataAlgorithm(const ConvGeometry& g, ConvPlan& plan,
                                               const float* dy, const float* w) {
    if (plan.backwardData.chosen()) return;
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.convolution.get(), requestedMathType()));
    int requested = 0, returned = 0;
    CNNSTUDIO_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnn_, &requested));
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> results(std::size_t(std::max(requested, 1)));
    if (streamIsCapturing()) {
        CNNSTUDIO_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
            cudnn_, plan.filter.get(), plan.output.get(), plan.convolution.get(), plan.input.get(),
            requested, &returned, results.data()));
        plan.backwardData =
            pickAlgorithm(results, returned, kHeuristicWorkspaceLimit, precision(), false, deterministic_);
    } else {
        AlgorithmSearch search(*this, 0, activationBytes(g.inputCount()), searchWorkspaceLimit());
        CNNSTUDIO_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
            cudnn_, plan.filter.get(), w, plan.output.get(), dy,
            plan.convolution.get(), plan.input.get(), search.output(), requested, &returned,
            results.data(), search.workspace(), search.workspaceBytes()));
        plan.backwardData =
            pickAlgorithm(results, returned, search.workspaceBytes(), precision(), true, deterministic_);
    }
    recordChoice(g, "backward-data", plan.backwardData);
}

void CudnnBackend::chooseBackwardFilterAlgorithm(const ConvGeometry& g, ConvPlan& plan,
                                                 const float* x, const float* dy) {
    if (plan.backwardFilter.chosen()) return;
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.convolution.get(), requestedMathType()));
    int requested = 0, returned = 0;
    CNNSTUDIO_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnn_, &requested));
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> results(std::size_t(std::max(requested, 1)));
    if (streamIsCapturing()) {
        CNNSTUDIO_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            cudnn_, plan.input.get(), plan.output.get(), plan.convolution.get(), plan.filter.get(),
            requested, &returned, results.data()));
        plan.backwardFilter =
            pickAlgorithm(results, returned, kHeuristicWorkspaceLimit, precision(), false, deterministic_);
    } else {
        AlgorithmSearch search(*this, 0, activationBytes(g.weightCount()), searchWorkspaceLimit());
        CNNSTUDIO_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
            cudnn_, plan.input.get(), x, plan.output.get(), dy,
            plan.convolution.get(), plan.filter.get(), search.output(), requested, &returned,
            results.data(), search.workspace(), search.workspaceBytes()));
        plan.backwardFilter =
            pickAlgorithm(results, returned, search.workspaceBytes(), precision(), true, deterministic_);
    }
    recordChoice(g, "backward-filter", plan.backwardFilter);
}

void CudnnBackend::doConvForward(const ConvGeometry& g, const float* x, const float* w,
                                 const float* bias, float* y) {
    activateDevice();
    ConvPlan& plan = convPlan(g, opLabel("convForward"));
    const float one = 1.0f, zero = 0.0f;
    if (storesBf16()) {
        convForwardChannelsLast(g, plan, x, w, bias, y);
        return;
    }
    chooseForwardAlgorithm(g, plan, x, w);
    const ConvAlgorithmChoice& choice = plan.forward;
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.convolution.get(), choice.mathType));
    CNNSTUDIO_CUDNN_CHECK(cudnnConvolutionForward(
        cudnn_, &one, plan.input.get(), x, plan.filter.get(), w, plan.convolution.get(),
        cudnnConvolutionFwdAlgo_t(choice.algorithm), workspace(choice.workspaceBytes),
        choice.workspaceBytes, &zero, plan.output.get(), y));
    if (bias != nullptr)
        CNNSTUDIO_CUDNN_CHECK(
            cudnnAddTensor(cudnn_, &one, plan.bias.get(), bias, &one, plan.output.get(), y));
}

void CudnnBackend::doConvBackwardData(const ConvGeometry& g, const float* dy, const float* w,
                                      float* dx) {
    activateDevice();
    ConvPlan& plan = convPlan(g, opLabel("convBackwardData"));
    if (storesBf16()) {
        convBackwardDataChannelsLast(g, plan, dy, w, dx);
        return;
    }
    chooseBackwardDataAlgorithm(g, plan, dy, w);
    const ConvAlgorithmChoice& choice = plan.backwardData;
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.convolution.get(), choice.mathType));
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnConvolutionBackwardData(
        cudnn_, &one, plan.filter.get(), w, plan.output.get(), dy, plan.convolution.get(),
        cudnnConvolutionBwdDataAlgo_t(choice.algorithm), workspace(choice.workspaceBytes),
        choice.workspaceBytes, &zero, plan.input.get(), dx));
}

void CudnnBackend::doConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                                        float* dw, float* dbias) {
    activateDevice();
    ConvPlan& plan = convPlan(g, opLabel("convBackwardFilter"));
    const float one = 1.0f, zero = 0.0f;
    if (storesBf16()) {
        convBackwardFilterChannelsLast(g, plan, x, dy, dw, dbias);
        return;
    }
    chooseBackwardFilterAlgorithm(g, plan, x, dy);
    const ConvAlgorithmChoice& choice = plan.backwardFilter;
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.convolution.get(), choice.mathType));
    enqueueWeightGradient([&] {
        CNNSTUDIO_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
            cudnn_, &one, plan.input.get(), x, plan.output.get(), dy, plan.convolution.get(),
            cudnnConvolutionBwdFilterAlgo_t(choice.algorithm), workspace(choice.workspaceBytes),
            choice.workspaceBytes, &zero, plan.filter.get(), dw));
        if (dbias != nullptr)
            CNNSTUDIO_CUDNN_CHECK(cudnnConvolutionBackwardBias(
                cudnn_, &one, plan.outputFloat.get(), dy, &zero, plan.bias.get(), dbias));
    });
}

void CudnnBackend::doConvBatchNormReluInference(const ConvGeometry& g, const float* x,
                                                const float* w, const float* bias,
                                                const BatchNormGeometry& bn, const float* gamma,
                                                const float* beta, const float* runningMean,
                                                const float* runningVar, float* y) {
    activateDevice();
    ConvPlan& plan = convPlan(g, opLabel("convBatchNormReluInference"));
    constexpr auto algorithm = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    CNNSTUDIO_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.convolution.get(), requestedMathType()));
    if (!plan.fusedBias) {
        plan.fusedBias = makeTensorDescriptor(computeType(), 1, g.outChannels, 1, 1);
        CNNSTUDIO_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
            cudnn_, plan.input.get(), plan.filter.get(), plan.convolution.get(), plan.output.get(),
            algorithm, &plan.fusedWorkspaceBytes));
    }

    const std::size_t perFilter = std::size_t(g.weightCount() / g.outChannels);
    ScratchLayout layout;
    const std::size_t weightAt = layout.add(std::size_t(g.weightCount()) * sizeof(float));
    const std::size_t biasAt = layout.add(std::size_t(g.outChannels) * sizeof(float));
    const std::size_t filterAt = layout.add(filterStagingBytes(g));
    const std::size_t narrowBiasAt = layout.add(storesBf16() ? bf16Bytes(g.outChannels) : 0);
    const std::size_t workAt = layout.add(plan.fusedWorkspaceBytes);
    char* scratch = static_cast<char*>(workspace(layout.total()));
    auto* foldedWeight = reinterpret_cast<float*>(scratch + weightAt);
    auto* foldedBias = reinterpret_cast<float*>(scratch + biasAt);
    foldBatchNormIntoConv({gamma, beta, runningMean, runningVar, bn.epsilon}, w, bias,
                          g.outChannels, int(perFilter), foldedWeight, foldedBias,
                          deviceProperties().multiProcessorCount, stream());
    const void* filter = stageFilter(g, foldedWeight, scratch + filterAt);
    const void* biasOperand = foldedBias;
    if (storesBf16()) {
        toBf16(foldedBias, scratch + narrowBiasAt, std::size_t(g.outChannels));
        biasOperand = scratch + narrowBiasAt;
    }
    // alpha2 = 0: the z input (here y itself) does not contribute.
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnConvolutionBiasActivationForward(
        cudnn_, &one, plan.input.get(), x, plan.filter.get(), filter, plan.convolution.get(),
        algorithm, scratch + workAt, plan.fusedWorkspaceBytes, &zero, plan.output.get(), y,
        plan.fusedBias.get(), biasOperand, reluDescriptor(), plan.output.get(), y));
}

}  // namespace cnnstudio::kernels
