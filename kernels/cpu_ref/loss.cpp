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
// With SoftTargets (sets S, weight a) sample i also learns t_i = (1/S) sum_s P_s[i], with its
// weight W_i = sum of its label terms' weights (l_i w[a_i] + (1 - l_i) w[b_i]):
//   loss       = sum_i ((1 - a) (label terms) + a W_i soft_i) / W,  soft_i = -sum_k t_ik log p_ik
//   dlogits_ik = ((1 - a) (label terms' gradient) + a W_i (p_ik - t_ik)) / W
// A temperature T makes p = softmax(logits / T) and divides the gradient by T.
// Note that the weight multiplies the whole smoothed per-sample loss, as backend.h defines;
// PyTorch's weighted label smoothing weights the smoothing term by each class k instead.
// The log-softmax and the loss are computed in double.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

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

// Sample i's soft target t_ik, the mean of the sets' rows i (0 when there are none).
double softTarget(const SoftTargets& soft, const LossGeometry& g, int i, int k) {
    double sum = 0.0;
    for (int set = 0; set < soft.sets; ++set)
        sum += soft.probabilities[(std::int64_t(set) * g.batch + i) * g.classes + k];
    return soft.sets > 0 ? sum / soft.sets : 0.0;
}

}  // namespace

void CpuRefBackend::doSoftmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                                 const std::int32_t* labels,
                                                 const float* classWeights, float* probabilities,
                                                 float* loss, const LabelMix& mix,
                                                 const SoftTargets& soft) {
    const double weightSum = ops::checkLabelsAndTotalWeight(
        g, labels, classWeights, opLabel("softmaxCrossEntropyForward"), mix);
    const double smoothing = g.labelSmoothing;
    const double smoothingPerClass = smoothing / g.classes;
    const double softWeight = soft.active() ? soft.weight : 0.0;
    std::vector<double> logP(std::size_t(g.classes));

    double weightedLoss = 0.0;
    for (int i = 0; i < g.batch; ++i) {
        const float* row = logits + std::int64_t(i) * g.classes;
        float* probabilityRow = probabilities + std::int64_t(i) * g.classes;
        double largest = -INFINITY;
        for (int k = 0; k < g.classes; ++k) largest = std::max(largest, double(row[k]) / g.temperature);
        double sumExp = 0.0;
        for (int k = 0; k < g.classes; ++k) sumExp += std::exp(double(row[k]) / g.temperature - largest);
        const double logSumExp = largest + std::log(sumExp);

        double sumLogP = 0.0, softLoss = 0.0;
        for (int k = 0; k < g.classes; ++k) {
            logP[std::size_t(k)] = double(row[k]) / g.temperature - logSumExp;
            probabilityRow[k] = float(std::exp(logP[std::size_t(k)]));
            sumLogP += logP[std::size_t(k)];
            softLoss -= softTarget(soft, g, i, k) * logP[std::size_t(k)];
        }
        LabelShare shares[2];
        const int count = labelShares(mix, labels, i, shares);
        double sampleWeight = 0.0;
        for (int s = 0; s < count; ++s) {
            const int label = shares[s].label;
            const double weight = shares[s].share * (classWeights ? double(classWeights[label]) : 1.0);
            const double labelLoss = -((1.0 - smoothing) * logP[std::size_t(label)] + smoothingPerClass * sumLogP);
            weightedLoss += (1.0 - softWeight) * weight * labelLoss;
            sampleWeight += weight;
        }
        weightedLoss += softWeight * sampleWeight * softLoss;
    }
    *loss = float(weightedLoss / weightSum);
}

// Differentiates the loss above with respect to the logits: d loss_i / d logit_ik =
// (p_ik - q_ik) / T for any target row q_i that sums to one (each label's, the soft target).
void CpuRefBackend::doSoftmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                                  const std::int32_t* labels,
                                                  const float* classWeights, float* dlogits,
                                                  const LabelMix& mix, const SoftTargets& soft) {
    const double weightSum = ops::checkLabelsAndTotalWeight(
        g, labels, classWeights, opLabel("softmaxCrossEntropyBackward"), mix);
    const double smoothing = g.labelSmoothing;
    const double smoothingPerClass = smoothing / g.classes;
    const double softWeight = soft.active() ? soft.weight : 0.0;

    for (int i = 0; i < g.batch; ++i) {
        LabelShare shares[2];
        const int count = labelShares(mix, labels, i, shares);
        const float* probabilityRow = probabilities + std::int64_t(i) * g.classes;
        float* gradientRow = dlogits + std::int64_t(i) * g.classes;
        for (int k = 0; k < g.classes; ++k) {
            double gradient = 0.0, sampleWeight = 0.0;
            for (int s = 0; s < count; ++s) {
                const int label = shares[s].label;
                const double scale = shares[s].share * (classWeights ? double(classWeights[label]) : 1.0);
                const double target = (k == label ? 1.0 - smoothing : 0.0) + smoothingPerClass;
                gradient += (1.0 - softWeight) * scale * (probabilityRow[k] - target);
                sampleWeight += scale;
            }
            gradient += softWeight * sampleWeight * (probabilityRow[k] - softTarget(soft, g, i, k));
            gradientRow[k] = float(gradient / (weightSum * g.temperature));
        }
    }
}

}  // namespace cnnstudio::cpu_ref
