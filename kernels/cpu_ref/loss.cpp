// Softmax cross-entropy with optional class weights and label smoothing (backend.h LossGeometry).
//   logits, probabilities, dlogits (batch, classes); labels (batch) int32; classWeights (classes)
//   p_ik   = softmax(logits_i)_k, log p_ik computed as logit - logsumexp (stable)
//   q_ik   = (1 - smoothing) [k == y_i] + smoothing / classes
//   loss_i = -sum_k q_ik log p_ik
//   loss   = sum_i w[y_i] loss_i / sum_i w[y_i]   (w = 1 without class weights: the mean)
//   dlogits_ik = w[y_i] / sum_j w[y_j] (p_ik - q_ik)
// Note that the weight multiplies the whole smoothed per-sample loss, as backend.h defines;
// PyTorch's weighted label smoothing weights the smoothing term by each class k instead.
// The log-softmax and the loss are computed in double.
#include <algorithm>
#include <cmath>
#include <string>

#include "cpu_ref/cpu_ref_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu_ref {

void CpuRefBackend::doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                                 const std::int32_t* labels,
                                                 const float* classWeights, float* probabilities,
                                                 float* loss) {
    const double weightSum =
        ops::checkLabelsAndTotalWeight(g, labels, classWeights, opLabel("softmaxCrossEntropyForward"));
    const double smoothing = g.labelSmoothing;
    const double smoothingPerClass = smoothing / g.classes;

    double weightedLoss = 0.0;
    for (int i = 0; i < g.batch; ++i) {
        const float* row = logits + std::int64_t(i) * g.classes;
        float* probabilityRow = probabilities + std::int64_t(i) * g.classes;
        const double largest = *std::max_element(row, row + g.classes);
        double sumExp = 0.0;
        for (int k = 0; k < g.classes; ++k) sumExp += std::exp(row[k] - largest);
        const double logSumExp = largest + std::log(sumExp);

        double sumLogP = 0.0;
        for (int k = 0; k < g.classes; ++k) {
            const double logP = row[k] - logSumExp;
            probabilityRow[k] = float(std::exp(logP));
            sumLogP += logP;
        }
        const int label = labels[i];
        const double sampleLoss = -((1.0 - smoothing) * (row[label] - logSumExp) + smoothingPerClass * sumLogP);
        weightedLoss += (classWeights ? double(classWeights[label]) : 1.0) * sampleLoss;
    }
    *loss = float(weightedLoss / weightSum);
}

// Differentiates loss = sum_i w[y_i] loss_i / sum_j w[y_j] with respect to the logits:
// d loss_i / d logit_ik = p_ik - q_ik because the q_ik sum to one.
void CpuRefBackend::doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                                  const std::int32_t* labels,
                                                  const float* classWeights, float* dlogits) {
    const double weightSum =
        ops::checkLabelsAndTotalWeight(g, labels, classWeights, opLabel("softmaxCrossEntropyBackward"));
    const double smoothing = g.labelSmoothing;
    const double smoothingPerClass = smoothing / g.classes;

    for (int i = 0; i < g.batch; ++i) {
        const int label = labels[i];
        const double sampleScale = (classWeights ? double(classWeights[label]) : 1.0) / weightSum;
        const float* probabilityRow = probabilities + std::int64_t(i) * g.classes;
        float* gradientRow = dlogits + std::int64_t(i) * g.classes;
        for (int k = 0; k < g.classes; ++k) {
            const double target = (k == label ? 1.0 - smoothing : 0.0) + smoothingPerClass;
            gradientRow[k] = float(sampleScale * (probabilityRow[k] - target));
        }
    }
}

}  // namespace cnnstudio::cpu_ref
