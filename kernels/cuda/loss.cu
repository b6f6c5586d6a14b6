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
// 1 - l_i as labelled b_i in the loss, the weight sum and dz; with SoftTargets (weight a) the
// label terms weigh 1 - a and the mean t_i of the soft target sets, at the sample's whole
// weight, a; a temperature T makes p = softmax(z / T) and divides dz by T (backend.h,
// LossGeometry).
// The loss is reduced on the device into one float (no host synchronisation). One block does
// the whole batch: a group of lanes per sample (the classes rounded up to a power of two, at most
// a warp; lanes over classes, shuffle reductions), then a block sum. A label outside [0, K)
// makes the loss (and that sample's gradient) NaN, which the trainer's non-finite-loss check
// reports, rather than reading out of bounds.
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

// Lanes per sample in the forward kernel: the classes rounded up to a power of two, at most a
// warp. Seven emotions take groups of 8, so a warp works on four samples at once: with a warp per
// sample, fer-cnn's batch of 256 went through 1024 threads as eight samples one after another, and
// the kernel (a chain of shuffles, exp and log per sample) took 16 us of Nsight Compute's
// 2.3 ms step (docs/logs/2026-12-03-breakdown).
__host__ __device__ constexpr int laneGroupWidth(int classes) {
    int width = 1;
    while (width < classes && width < 32) width *= 2;
    return width;
}

// Max and sum over each group of `width` lanes (a power of two), the result in all of them.
__device__ __forceinline__ float groupMax(float value, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2)
        value = fmaxf(value, __shfl_xor_sync(kFullWarp, value, offset, width));
    return value;
}

__device__ __forceinline__ float groupSum(float value, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2)
        value += __shfl_xor_sync(kFullWarp, value, offset, width);
    return value;
}

// The targets besides the labels, as the kernels read them.
struct SoftTargetView {
    const float* probabilities;  // (sets, batch, classes), or null
    int sets;
    float weight;  // 0 without soft targets

    explicit SoftTargetView(const SoftTargets& soft)
        : probabilities(soft.probabilities), sets(soft.sets), weight(soft.active() ? soft.weight : 0.0f) {}
    // t_ik: the mean of the sets' rows i.
    __device__ float target(int batch, int classes, int i, int k) const {
        float sum = 0.0f;
        for (int set = 0; set < sets; ++set)
            sum += probabilities[(std::int64_t(set) * batch + i) * classes + k];
        return sum / float(sets);
    }
};

template <class T>
__global__ void __launch_bounds__(kLossThreads)
softmaxCrossEntropyForwardKernel(int batch, int classes, float smoothing, float inverseTemperature,
                                 const T* __restrict__ logits,
                                 const std::int32_t* __restrict__ labels,
                                 const float* __restrict__ classWeights,
                                 const std::int32_t* __restrict__ secondLabels,
                                 const float* __restrict__ labelWeights, SoftTargetView soft,
                                 float* __restrict__ probabilities, float* __restrict__ loss) {
    // Every lane of a warp runs the same passes (the shuffles need them all); a group past the
    // batch computes on sample 0's row and adds nothing.
    const int width = laneGroupWidth(classes), member = int(threadIdx.x) % width;
    const int groups = int(blockDim.x) / width;
    double weightedLoss = 0.0, weightTotal = 0.0;  // meaningful in each group's first lane
    for (int base = 0; base < batch; base += groups) {
        const int sample = base + int(threadIdx.x) / width;
        const bool inBatch = sample < batch;
        const int i = inBatch ? sample : 0;
        const T* row = logits + std::int64_t(i) * classes;
        auto scaledLogit = [&](int k) { return toFloat(row[k]) * inverseTemperature; };
        float rowMax = -INFINITY;
        for (int k = member; k < classes; k += width) rowMax = fmaxf(rowMax, scaledLogit(k));
        rowMax = groupMax(rowMax, width);
        float expSum = 0.0f, logitSum = 0.0f;
        for (int k = member; k < classes; k += width) {
            const float logit = scaledLogit(k);
            expSum += expf(logit - rowMax);
            logitSum += logit;
        }
        expSum = groupSum(expSum, width);
        logitSum = groupSum(logitSum, width);
        const float logNormaliser = rowMax + logf(expSum);
        float softLoss = 0.0f;  // -sum_k t_ik log p_ik
        for (int k = member; k < classes; k += width) {
            const float logP = scaledLogit(k) - logNormaliser;
            if (inBatch) probabilities[std::int64_t(i) * classes + k] = expf(logP);
            if (soft.weight != 0.0f) softLoss -= soft.target(batch, classes, i, k) * logP;
        }
        softLoss = groupSum(softLoss, width);
        if (member == 0 && inBatch) {
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
                const float logLabel = scaledLogit(target) - logNormaliser;
                return -((1.0f - smoothing) * logLabel + smoothing / float(classes) * logSum);
            };
            const float weight = share * (classWeights ? classWeights[label] : 1.0f);
            const float secondWeight = (1.0f - share) * (classWeights ? classWeights[second] : 1.0f);
            double labelTerms = double(weight) * labelLoss(label);
            if (secondWeight != 0.0f) labelTerms += double(secondWeight) * labelLoss(second);
            weightedLoss += (1.0 - soft.weight) * labelTerms +
                            double(soft.weight) * (double(weight) + secondWeight) * softLoss;
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
softmaxCrossEntropyBackwardKernel(int batch, int classes, float smoothing, float inverseTemperature,
                                  const float* probabilities,
                                  const std::int32_t* __restrict__ labels,
                                  const float* __restrict__ classWeights,
                                  const std::int32_t* __restrict__ secondLabels,
                                  const float* __restrict__ labelWeights, SoftTargetView soft,
                                  T* dlogits) {
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
    if (threadIdx.x == 0) inverseWeightTotal = float(inverseTemperature / total.x);
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
        float gradient = (1.0f - soft.weight) * (weight * (p - target) + secondWeight * (p - secondTarget));
        if (soft.weight != 0.0f)
            gradient += soft.weight * (weight + secondWeight) * (p - soft.target(batch, classes, i, k));
        dlogits[e] = fromFloat<T>(inverseWeightTotal * gradient);
    }
}

}  // namespace

void CudaBackend::doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                               const std::int32_t* labels,
                                               const float* classWeights, float* probabilities,
                                               float* loss, const LabelMix& mix,
                                               const SoftTargets& soft) {
    requireIndexable(g, opLabel("softmaxCrossEntropyForward"));
    const float inverseTemperature = 1.0f / g.temperature;
    activateDevice();
    if (activationFormat().bf16)
        launchKernel("softmax cross-entropy forward",
                     softmaxCrossEntropyForwardKernel<__nv_bfloat16>, 1, kLossThreads, stream(),
                     g.batch, g.classes, g.labelSmoothing, inverseTemperature,
                     reinterpret_cast<const __nv_bfloat16*>(logits), labels, classWeights,
                     mix.secondLabels, mix.labelWeights, SoftTargetView(soft), probabilities, loss);
    else
        launchKernel("softmax cross-entropy forward", softmaxCrossEntropyForwardKernel<float>, 1,
                     kLossThreads, stream(), g.batch, g.classes, g.labelSmoothing, inverseTemperature,
                     logits, labels, classWeights, mix.secondLabels, mix.labelWeights,
                     SoftTargetView(soft), probabilities, loss);
}

void CudaBackend::doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                                const std::int32_t* labels,
                                                const float* classWeights, float* dlogits,
                                                const LabelMix& mix, const SoftTargets& soft) {
    const OpLabel op = opLabel("softmaxCrossEntropyBackward");
    const float inverseTemperature = 1.0f / g.temperature;
    requireIndexable(g, op);
    const bool bf16 = activationFormat().bf16;
    if (bf16 && static_cast<const void*>(dlogits) == probabilities)
        ops::failOp(op, "bf16 dlogits cannot be computed in place over the fp32 probabilities",
                    "give dlogits its own buffer");
    activateDevice();
    if (bf16)
        launchKernel("softmax cross-entropy backward",
                     softmaxCrossEntropyBackwardKernel<__nv_bfloat16>, 1, kLossThreads, stream(),
                     g.batch, g.classes, g.labelSmoothing, inverseTemperature, probabilities, labels,
                     classWeights, mix.secondLabels, mix.labelWeights, SoftTargetView(soft),
                     reinterpret_cast<__nv_bfloat16*>(dlogits));
    else
        launchKernel("softmax cross-entropy backward", softmaxCrossEntropyBackwardKernel<float>,
                     1, kLossThreads, stream(), g.batch, g.classes, g.labelSmoothing,
                     inverseTemperature, probabilities, labels, classWeights, mix.secondLabels,
                     mix.labelWeights, SoftTargetView(soft), dlogits);
}

}  // namespace cnnstudio::kernels
