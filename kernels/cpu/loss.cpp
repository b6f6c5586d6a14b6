// Softmax cross-entropy over logits (N, K) and int32 labels (N).
//   forward:  p = softmax(z) per row; loss_i = -sum_k q_ik log p_ik with
//             q = (1 - smoothing) onehot(label) + smoothing / K;
//             loss = sum_i w[y_i] loss_i / sum_i w[y_i] with class weights w, else the mean.
//   backward: dz_ik = w[y_i] / sum_j w[y_j] * (p_ik - q_ik)   (1/N without class weights).
// With a LabelMix (a, b, l) a sample counts l_i as labelled a_i and 1 - l_i as labelled b_i,
// in the loss, its normaliser and the gradient (backend.h, LossGeometry).
// Rows are independent: threads split the batch, sums are kept in double.
#include <algorithm>
#include <cmath>

#include "cnnstudio/error.h"
#include "cpu/cpu_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu {

void CpuBackend::doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                              const std::int32_t* labels, const float* classWeights,
                                              float* probabilities, float* loss, const LabelMix& mix) {
    const double weightSum = ops::checkLabelsAndTotalWeight(
        g, labels, classWeights, opLabel("softmaxCrossEntropyForward"), mix);
    const int classes = g.classes;
    const float offTarget = g.labelSmoothing / float(classes);
    const float onTarget = 1.0f - g.labelSmoothing + offTarget;
    double weightedLoss = 0.0;
    OmpThreadScope threads(threads_);
    const bool parallel = std::int64_t(g.batch) * classes >= parallelThreshold;
#pragma omp parallel for schedule(static) reduction(+ : weightedLoss) if (parallel)
    for (int i = 0; i < g.batch; ++i) {
        const float* z = logits + std::int64_t(i) * classes;
        float* p = probabilities + std::int64_t(i) * classes;
        const float zMax = *std::max_element(z, z + classes);
        double expSum = 0.0;
        for (int k = 0; k < classes; ++k) {
            p[k] = std::exp(z[k] - zMax);
            expSum += p[k];
        }
        const float inverseSum = float(1.0 / expSum);
        const double logSum = std::log(expSum);
        // -sum_k q_k(label) (z_k - zMax - logSum) for one label
        auto sampleLoss = [&](std::int32_t label) {
            double sum = 0.0;
            for (int k = 0; k < classes; ++k)
                sum += double(k == label ? onTarget : offTarget) * (logSum - double(z[k] - zMax));
            return (classWeights ? classWeights[label] : 1.0) * sum;
        };
        for (int k = 0; k < classes; ++k) p[k] *= inverseSum;
        if (mix.secondLabels == nullptr) {
            weightedLoss += sampleLoss(labels[i]);
        } else {
            const double share = mix.labelWeights[i];
            weightedLoss += share * sampleLoss(labels[i]) + (1.0 - share) * sampleLoss(mix.secondLabels[i]);
        }
    }
    *loss = float(weightedLoss / weightSum);
}

void CpuBackend::doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                               const std::int32_t* labels,
                                               const float* classWeights, float* dlogits,
                                               const LabelMix& mix) {
    const double weightSum = ops::checkLabelsAndTotalWeight(
        g, labels, classWeights, opLabel("softmaxCrossEntropyBackward"), mix);
    const int classes = g.classes;
    const float offTarget = g.labelSmoothing / float(classes);
    const float onTarget = 1.0f - g.labelSmoothing + offTarget;
    OmpThreadScope threads(threads_);
    const bool parallel = std::int64_t(g.batch) * classes >= parallelThreshold;
#pragma omp parallel for schedule(static) if (parallel)
    for (int i = 0; i < g.batch; ++i) {
        // Sample i's labels and the share of the gradient each carries.
        const std::int32_t first = labels[i];
        const std::int32_t second = mix.secondLabels ? mix.secondLabels[i] : first;
        const float share = mix.secondLabels ? mix.labelWeights[i] : 1.0f;
        const float firstScale = float(share * (classWeights ? classWeights[first] : 1.0) / weightSum);
        const float secondScale =
            float((1.0f - share) * (classWeights ? classWeights[second] : 1.0) / weightSum);
        const float* p = probabilities + std::int64_t(i) * classes;
        float* dz = dlogits + std::int64_t(i) * classes;
        for (int k = 0; k < classes; ++k)
            dz[k] = firstScale * (p[k] - (k == first ? onTarget : offTarget)) +
                    secondScale * (p[k] - (k == second ? onTarget : offTarget));
    }
}

}  // namespace cnnstudio::cpu
