// Softmax cross-entropy over logits (B, K) and int32 labels (B), optional class weights (K),
// label smoothing e. Logits and their gradient dz are activations (fp32, or bf16 when
// Backend::activationFormat says so: read widened to fp32, written rounded to nearest);
// probabilities p, weights and the loss are fp32. Per element:
//   p[i][k]  = exp(z[i][k] - max_k z[i]) / sum_k exp(z[i][k] - max_k z[i])
//   q[i][k]  = (1 - e) [k == y_i] + e / K
//   loss_i   = -sum_k q[i][k] log p[i][k]
//   loss     = sum_i w[y_i] loss_i / sum_i w[y_i]   (w = 1 without class weights: the mean)
//   dz[i][k] = w[y_i] / sum_j w[y_j] * (p[i][k] - q[i][k])
// With a LabelMix (second labels b, label weights l) sample i counts l_i as labelled y_i and
// 1 - l_i as labelled b_i in the loss, the weight sum and dz (backend.h, LossGeometry).
// The loss is reduced on the device into one float (no host synchronisation). One block does
// the whole batch: a warp per sample (lanes over classes, shuffle reductions), then a block
// sum. A label outside [0, K) makes the loss (and that sample's gradient) NaN, which the
// trainer's non-finite-loss check reports, rather than reading out of bounds.
#include <cmath>
#include <cstdint>

#include "cuda/activation_storage.cuh"
#include "cuda/block_reduce.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

constexpr int kLossThreads = 1024;

__device__ __forceinline__ float warpMax(float value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        value = fmaxf(value, __shfl_xor_sync(kFullWarp, value, offset));
    return value;
}

__device__ __forceinline__ float warpAllSum(float value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        value += __shfl_xor_sync(kFullWarp, value, offset);
    return value;
}

template <class T>
__global__ void __launch_bounds__(kLossThreads)
softmaxCrossEntropyForwardKernel(int batch, int classes, float smoothing,
                                 const T* __restrict__ logits,
                                 const std::int32_t* __restrict__ labels,
                                 const float* __restrict__ classWeights,
                                 const std::int32_t* __restrict__ secondLabels,
                                 const float* __restrict__ labelWeights,
                                 float* __restrict__ probabilities, float* __restrict__ loss) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    double weightedLoss = 0.0, weightTotal = 0.0;  // meaningful in lane 0
    for (int i = warp; i < batch; i += warps) {
        const T* row = logits + std::int64_t(i) * classes;
        float rowMax = -INFINITY;
        for (int k = lane; k < classes; k += 32) rowMax = fmaxf(rowMax, toFloat(row[k]));
        rowMax = warpMax(rowMax);
        float expSum = 0.0f, logitSum = 0.0f;
        for (int k = lane; k < classes; k += 32) {
            const float logit = toFloat(row[k]);
            expSum += expf(logit - rowMax);
            logitSum += logit;
        }
        expSum = warpAllSum(expSum);
        logitSum = warpAllSum(logitSum);
        const float logNormaliser = rowMax + logf(expSum);
        for (int k = lane; k < classes; k += 32)
            probabilities[std::int64_t(i) * classes + k] = expf(toFloat(row[k]) - logNormaliser);
        if (lane == 0) {
            const int label = labels[i];
            const int second = secondLabels ? secondLabels[i] : label;
            const float share = secondLabels ? labelWeights[i] : 1.0f;
            if (label < 0 || label >= classes || second < 0 || second >= classes) {
                weightedLoss = NAN;
                continue;
            }
            // sum_k log p_k = sum_k z_k - K log-normaliser
            const float logSum = logitSum - float(classes) * logNormaliser;
            auto labelLoss = [&](int target) {
                const float logLabel = toFloat(row[target]) - logNormaliser;
                return -((1.0f - smoothing) * logLabel + smoothing / float(classes) * logSum);
            };
            const float weight = share * (classWeights ? classWeights[label] : 1.0f);
            const float secondWeight = (1.0f - share) * (classWeights ? classWeights[second] : 1.0f);
            weightedLoss += double(weight) * labelLoss(label);
            if (secondWeight != 0.0f) weightedLoss += double(secondWeight) * labelLoss(second);
            weightTotal += double(weight) + double(secondWeight);
        }
    }
    const double2 totals = blockSum(double2{weightedLoss, weightTotal});
    if (threadIdx.x == 0) *loss = float(totals.x / totals.y);
}

// dlogits may be probabilities when T is float (each element is read, then written, by one
// thread); a bf16 dlogits must not overlap them (its elements straddle other threads' floats).
template <class T>
__global__ void __launch_bounds__(kLossThreads)
softmaxCrossEntropyBackwardKernel(int batch, int classes, float smoothing,
                                  const float* probabilities,
                                  const std::int32_t* __restrict__ labels,
                                  const float* __restrict__ classWeights,
                                  const std::int32_t* __restrict__ secondLabels,
                                  const float* __restrict__ labelWeights, T* dlogits) {
    __shared__ float inverseWeightTotal;
    double weightTotal = 0.0;
    for (int i = threadIdx.x; i < batch; i += blockDim.x) {
        const int label = labels[i];
        const int second = secondLabels ? secondLabels[i] : label;
        const float share = secondLabels ? labelWeights[i] : 1.0f;
        if (label >= 0 && label < classes && second >= 0 && second < classes)
            weightTotal += share * (classWeights ? classWeights[label] : 1.0f) +
                           (1.0f - share) * (classWeights ? classWeights[second] : 1.0f);
    }
    const double2 total = blockSum(double2{weightTotal, 0.0});
    if (threadIdx.x == 0) inverseWeightTotal = float(1.0 / total.x);
    __syncthreads();
    const float offTarget = smoothing / float(classes);
    const int count = batch * classes;
    for (int e = threadIdx.x; e < count; e += blockDim.x) {
        const int i = e / classes, k = e - i * classes;
        const int label = labels[i];
        const int second = secondLabels ? secondLabels[i] : label;
        const float share = secondLabels ? labelWeights[i] : 1.0f;
        if (label < 0 || label >= classes || second < 0 || second >= classes) {
            dlogits[e] = fromFloat<T>(NAN);
            continue;
        }
        const float p = probabilities[e];
        const float target = (k == label ? 1.0f - smoothing : 0.0f) + offTarget;
        const float secondTarget = (k == second ? 1.0f - smoothing : 0.0f) + offTarget;
        const float weight = share * (classWeights ? classWeights[label] : 1.0f);
        const float secondWeight = (1.0f - share) * (classWeights ? classWeights[second] : 1.0f);
        dlogits[e] = fromFloat<T>(inverseWeightTotal *
                                  (weight * (p - target) + secondWeight * (p - secondTarget)));
    }
}

}  // namespace

void CudaBackend::doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                               const std::int32_t* labels,
                                               const float* classWeights, float* probabilities,
                                               float* loss, const LabelMix& mix) {
    requireIndexable(g, opLabel("softmaxCrossEntropyForward"));
    activateDevice();
    if (activationFormat().bf16)
        launchKernel("softmax cross-entropy forward",
                     softmaxCrossEntropyForwardKernel<__nv_bfloat16>, 1, kLossThreads, stream(),
                     g.batch, g.classes, g.labelSmoothing,
                     reinterpret_cast<const __nv_bfloat16*>(logits), labels, classWeights,
                     mix.secondLabels, mix.labelWeights, probabilities, loss);
    else
        launchKernel("softmax cross-entropy forward", softmaxCrossEntropyForwardKernel<float>, 1,
                     kLossThreads, stream(), g.batch, g.classes, g.labelSmoothing, logits, labels,
                     classWeights, mix.secondLabels, mix.labelWeights, probabilities, loss);
}

void CudaBackend::doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                                const std::int32_t* labels,
                                                const float* classWeights, float* dlogits,
                                                const LabelMix& mix) {
    const OpLabel op = opLabel("softmaxCrossEntropyBackward");
    requireIndexable(g, op);
    const bool bf16 = activationFormat().bf16;
    if (bf16 && static_cast<const void*>(dlogits) == probabilities)
        ops::failOp(op, "bf16 dlogits cannot be computed in place over the fp32 probabilities",
                    "give dlogits its own buffer");
    activateDevice();
    if (bf16)
        launchKernel("softmax cross-entropy backward",
                     softmaxCrossEntropyBackwardKernel<__nv_bfloat16>, 1, kLossThreads, stream(),
                     g.batch, g.classes, g.labelSmoothing, probabilities, labels, classWeights,
                     mix.secondLabels, mix.labelWeights, reinterpret_cast<__nv_bfloat16*>(dlogits));
    else
        launchKernel("softmax cross-entropy backward", softmaxCrossEntropyBackwardKernel<float>,
                     1, kLossThreads, stream(), g.batch, g.classes, g.labelSmoothing,
                     probabilities, labels, classWeights, mix.secondLabels, mix.labelWeights,
                     dlogits);
}

}  // namespace cnnstudio::kernels
