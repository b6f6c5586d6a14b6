// Softmax cross-entropy over logits (N, K) and int32 labels (N).
//   forward:  p = softmax(z) per row; loss_i = -sum_k q_ik log p_ik with
//             q = (1 - smoothing) onehot(label) + smoothing / K;
//             loss = sum_i w[y_i] loss_i / sum_i w[y_i] with class weights w, else the mean.
//   backward: dz_ik = w[y_i] / sum_j w[y_j] * (p_ik - q_ik)   (1/N without class weights).
// Rows are independent: threads split the batch, sums are kept in double.
#include <algorithm>
#include <cmath>

#include "cnnstudio/error.h"
#include "cpu/cpu_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu {

void CpuBackend::doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                              const std::int32_t* labels, const float* classWeights,
                                              float* probabilities, float* loss) {
    const double weightSum =
        ops::checkLabelsAndTotalWeight(g, labels, classWeights, opLabel("softmaxCrossEntropyForward"));
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
        double sampleLoss = 0.0;  // -sum_k q_k (z_k - zMax - logSum)
        for (int k = 0; k < classes; ++k) {
            p[k] *= inverseSum;
            const float q = k == labels[i] ? onTarget : offTarget;
            sampleLoss += double(q) * (logSum - double(z[k] - zMax));
        }
        weightedLoss += (classWeights ? classWeights[labels[i]] : 1.0) * sampleLoss;
    }
    *loss = float(weightedLoss / weightSum);
}

void CpuBackend::doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                               const std::int32_t* labels,
                                               const float* classWeights, float* dlogits) {
    const double weightSum =
        ops::checkLabelsAndTotalWeight(g, labels, classWeights, opLabel("softmaxCrossEntropyBackward"));
    const int classes = g.classes;
    const float offTarget = g.labelSmoothing / float(classes);
    const float onTarget = 1.0f - g.labelSmoothing + offTarget;
    OmpThreadScope threads(threads_);
    const bool parallel = std::int64_t(g.batch) * classes >= parallelThreshold;
#pragma omp parallel for schedule(static) if (parallel)
    for (int i = 0; i < g.batch; ++i) {
        const float coefficient =
            float((classWeights ? classWeights[labels[i]] : 1.0) / weightSum);
        const float* p = probabilities + std::int64_t(i) * classes;
        float* dz = dlogits + std::int64_t(i) * classes;
        for (int k = 0; k < classes; ++k)
            dz[k] = coefficient * (p[k] - (k == labels[i] ? onTarget : offTarget));
    }
}

}  // namespace cnnstudio::cpu
