// Softmax cross-entropy over logits (N, K) and int32 labels (N).
//   forward:  p = softmax(z / T) per row; loss_i = -sum_k q_ik log p_ik with
//             q = (1 - smoothing) onehot(label) + smoothing / K;
//             loss = sum_i w[y_i] loss_i / sum_i w[y_i] with class weights w, else the mean.
//   backward: dz_ik = w[y_i] / sum_j w[y_j] * (p_ik - q_ik) / T   (1/N without class weights).
// With a LabelMix (a, b, l) a sample counts l_i as labelled a_i and 1 - l_i as labelled b_i,
// in the loss, its normaliser and the gradient; with SoftTargets (weight a) the label terms
// weigh 1 - a and the soft target t_i, at the sample's whole weight, a (backend.h,
// LossGeometry): every target is a row q that sums to one, so each term's gradient is p - q.
// Logits and dlogits are activations: fp32, or bf16 in bf16 precision (read widened to fp32,
// written rounded to nearest); probabilities are fp32.
// Rows are independent: threads split the batch, sums are kept in double.
#include <algorithm>
#include <cmath>

#include "cpu/activation_storage.h"
#include "cnnstudio/error.h"
#include "cpu/cpu_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu {

namespace {

// Sample i's soft target t_ik: the mean of the sets' rows i.
float softTarget(const SoftTargets& soft, const LossGeometry& g, int i, int k) {
    float sum = 0.0f;
    for (int set = 0; set < soft.sets; ++set)
        sum += soft.probabilities[(std::int64_t(set) * g.batch + i) * g.classes + k];
    return sum / float(soft.sets);
}

// Sample i's labels and the share of its weight each carries (one label: share 1).
struct SampleLabels {
    std::int32_t first, second;
    double firstWeight, secondWeight;  // share times class weight

    SampleLabels(const std::int32_t* labels, const float* classWeights, const LabelMix& mix, int i)
        : first(labels[i]), second(mix.secondLabels ? mix.secondLabels[i] : labels[i]) {
        const double share = mix.secondLabels ? mix.labelWeights[i] : 1.0;
        firstWeight = share * (classWeights ? classWeights[first] : 1.0);
        secondWeight = (1.0 - share) * (classWeights ? classWeights[second] : 1.0);
    }
    double weight() const { return firstWeight + secondWeight; }
};

}  // namespace

void CpuBackend::doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                              const std::int32_t* labels, const float* classWeights,
                                              float* probabilities, float* loss, const LabelMix& mix,
                                              const SoftTargets& soft) {
    const double weightSum = ops::checkLabelsAndTotalWeight(
        g, labels, classWeights, opLabel("softmaxCrossEntropyForward"), mix);
    const int classes = g.classes;
    const float offTarget = g.labelSmoothing / float(classes);
    const float onTarget = 1.0f - g.labelSmoothing + offTarget;
    const double softWeight = soft.active() ? soft.weight : 0.0;
    const float inverseTemperature = 1.0f / g.temperature;
    OmpThreadScope threads(threads_);
    const bool parallel = std::int64_t(g.batch) * classes >= parallelThreshold;
    const double weightedLoss = withStorage(storesBf16(), [&]<class T>(T*) {
        // Copies of the targets local to this lambda: clang 14 refuses the nested lambda below a
        // reference to the enclosing function's own (the fuzz build compiles this file with it).
        const float onLabel = onTarget, offLabel = offTarget;
        double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) if (parallel)
        for (int i = 0; i < g.batch; ++i) {
            const T* row = stored<T>(logits) + std::int64_t(i) * classes;
            auto z = [&](int k) { return toFloat(row[k]); };
            float* p = probabilities + std::int64_t(i) * classes;
            float largest = z(0);
            for (int k = 1; k < classes; ++k) largest = std::max(largest, z(k));
            const float zMax = largest * inverseTemperature;
            double expSum = 0.0;
            for (int k = 0; k < classes; ++k) {
                p[k] = std::exp(z(k) * inverseTemperature - zMax);
                expSum += p[k];
            }
            const float inverseSum = float(1.0 / expSum);
            const double logSum = std::log(expSum);
            // -log p_k
            auto negativeLogP = [&](int k) { return logSum - double(z(k) * inverseTemperature - zMax); };
            // -sum_k q_k(label) log p_k for one label
            auto labelLoss = [&](std::int32_t label) {
                double sum = 0.0;
                for (int k = 0; k < classes; ++k)
                    sum += double(k == label ? onLabel : offLabel) * negativeLogP(k);
                return sum;
            };
            for (int k = 0; k < classes; ++k) p[k] *= inverseSum;
            const SampleLabels sample(labels, classWeights, mix, i);
            double sampleLoss = sample.firstWeight * labelLoss(sample.first);
            if (sample.secondWeight != 0.0) sampleLoss += sample.secondWeight * labelLoss(sample.second);
            total += (1.0 - softWeight) * sampleLoss;
            if (softWeight > 0.0) {
                double softLoss = 0.0;
                for (int k = 0; k < classes; ++k) softLoss += double(softTarget(soft, g, i, k)) * negativeLogP(k);
                total += softWeight * sample.weight() * softLoss;
            }
        }
        return total;
    });
    *loss = float(weightedLoss / weightSum);
}

void CpuBackend::doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                               const std::int32_t* labels,
                                               const float* classWeights, float* dlogits,
                                               const LabelMix& mix, const SoftTargets& soft) {
    const double weightSum = ops::checkLabelsAndTotalWeight(
        g, labels, classWeights, opLabel("softmaxCrossEntropyBackward"), mix);
    const int classes = g.classes;
    const float offTarget = g.labelSmoothing / float(classes);
    const float onTarget = 1.0f - g.labelSmoothing + offTarget;
    const double softWeight = soft.active() ? soft.weight : 0.0;
    const double normaliser = weightSum * g.temperature;
    if (storesBf16() && static_cast<const void*>(dlogits) == probabilities)
        ops::failOp(opLabel("softmaxCrossEntropyBackward"),
                    "bf16 dlogits cannot be computed in place over the fp32 probabilities",
                    "give dlogits its own buffer");
    OmpThreadScope threads(threads_);
    const bool parallel = std::int64_t(g.batch) * classes >= parallelThreshold;
    withStorage(storesBf16(), [&]<class T>(T*) {
#pragma omp parallel for schedule(static) if (parallel)
        for (int i = 0; i < g.batch; ++i) {
            const SampleLabels sample(labels, classWeights, mix, i);
            const float firstScale = float((1.0 - softWeight) * sample.firstWeight / normaliser);
            const float secondScale = float((1.0 - softWeight) * sample.secondWeight / normaliser);
            const float softScale = float(softWeight * sample.weight() / normaliser);
            const float* p = probabilities + std::int64_t(i) * classes;
            T* dz = stored<T>(dlogits) + std::int64_t(i) * classes;
            for (int k = 0; k < classes; ++k) {
                float gradient = firstScale * (p[k] - (k == sample.first ? onTarget : offTarget)) +
                                 secondScale * (p[k] - (k == sample.second ? onTarget : offTarget));
                if (softScale != 0.0f) gradient += softScale * (p[k] - softTarget(soft, g, i, k));
                dz[k] = fromFloat<T>(gradient);
            }
        }
    });
}

}  // namespace cnnstudio::cpu
