// Softmax cross-entropy with optional class weights and label smoothing (backend.h LossGeometry).
//   logits, probabilities, dlogits (batch, classes); labels (batch) int32; classWeights (classes)
//   p_ik   = softmax(logits_i)_k, log p_ik computed as logit - logsumexp (stable)
//   q_ik   = (1 - smoothing) [k == y_i] + smoothing / classes
//   loss_i = -sum_k q_ik log p_ik
//   loss   = sum_i w[y_i] loss_i / sum_i w[y_i]   (w = 1 without class weights: the mean)
//   dlogits_ik = w[y_i] / sum_j w[y_j] (p_ik - q_ik)
// With a LabelMix (a = labels, b = second labels, l = label weights) each sample counts as
// l_i of a sample labelled a_i plus 1 - l_i of one labelled b_i, in the loss, the weight sum
// and the gradient alike:
//   loss       = sum_i (l_i w[a_i] loss_i(a_i) + (1 - l_i) w[b_i] loss_i(b_i)) / W,
//   W          = sum_i (l_i w[a_i] + (1 - l_i) w[b_i])
//   dlogits_ik = (l_i w[a_i] (p_ik - q_ik(a_i)) + (1 - l_i) w[b_i] (p_ik - q_ik(b_i))) / W
// Note that the weight multiplies the whole smoothed per-sample loss, as backend.h defines;
// PyTorch's weighted label smoothing weights the smoothing term by each class k instead.
// The log-softmax and the loss are computed in double.
#include <algorithm>
#include <cmath>
#include <string>

#include "cpu_ref/cpu_ref_backend.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio::cpu_ref {

namespace {

// The (label, share) pairs sample i's target is made of: one, or two with a LabelMix.
struct LabelShare {
    int label;
    double share;
};

int labelShares(const LabelMix& mix, const std::int32_t* labels, int i, LabelShare shares[2]) {
    if (mix.secondLabels == nullptr) {
        shares[0] = {labels[i], 1.0};
        return 1;
    }
    const double share = mix.labelWeights[i];
    shares[0] = {labels[i], share};
    shares[1] = {mix.secondLabels[i], 1.0 - share};
    return 2;
}

}  // namespace

void CpuRefBackend::doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                                 const std::int32_t* labels,
                                                 const float* classWeights, float* probabilities,
                                                 float* loss, const LabelMix& mix) {
    const double weightSum = ops::checkLabelsAndTotalWeight(
        g, labels, classWeights, opLabel("softmaxCrossEntropyForward"), mix);
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
        LabelShare shares[2];
        const int count = labelShares(mix, labels, i, shares);
        for (int s = 0; s < count; ++s) {
            const int label = shares[s].label;
            const double sampleLoss =
                -((1.0 - smoothing) * (row[label] - logSumExp) + smoothingPerClass * sumLogP);
            weightedLoss += shares[s].share * (classWeights ? double(classWeights[label]) : 1.0) * sampleLoss;
        }
    }
    *loss = float(weightedLoss / weightSum);
}

// Differentiates loss = sum_i w[y_i] loss_i / sum_j w[y_j] with respect to the logits:
// d loss_i / d logit_ik = p_ik - q_ik because the q_ik sum to one (for each label of a mix).
void CpuRefBackend::doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                                  const std::int32_t* labels,
                                                  const float* classWeights, float* dlogits,
                                                  const LabelMix& mix) {
    const double weightSum = ops::checkLabelsAndTotalWeight(
        g, labels, classWeights, opLabel("softmaxCrossEntropyBackward"), mix);
    const double smoothing = g.labelSmoothing;
    const double smoothingPerClass = smoothing / g.classes;

    for (int i = 0; i < g.batch; ++i) {
        LabelShare shares[2];
        const int count = labelShares(mix, labels, i, shares);
        const float* probabilityRow = probabilities + std::int64_t(i) * g.classes;
        float* gradientRow = dlogits + std::int64_t(i) * g.classes;
        for (int k = 0; k < g.classes; ++k) {
            double gradient = 0.0;
            for (int s = 0; s < count; ++s) {
                const int label = shares[s].label;
                const double scale = shares[s].share * (classWeights ? double(classWeights[label]) : 1.0);
                const double target = (k == label ? 1.0 - smoothing : 0.0) + smoothingPerClass;
                gradient += scale * (probabilityRow[k] - target);
            }
            gradientRow[k] = float(gradient / weightSum);
        }
    }
}

}  // namespace cnnstudio::cpu_ref
