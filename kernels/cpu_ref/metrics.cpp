// Classification metrics summed into backend memory (backend.h MetricsGeometry).
//   logits (batch, classes); labels (batch) int32; batchLoss one float or null;
//   sums (3 + classes * classes) doubles: loss sum, largest loss, latest loss, confusion counts
//   loss_i = logsumexp(z_i) - z_i[y_i] (evaluation, no batch loss), in double
//   p_i    = the first index of the largest z_i[k]; counts[y_i][p_i] += 1
// A label outside [0, classes) turns the loss sums NaN and leaves its row uncounted.
#include <cmath>
#include <limits>

#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {

namespace {

// max that keeps NaN: once a loss was NaN the divergence guard must see it.
double largestKeepingNaN(double current, double candidate) {
    if (std::isnan(current) || std::isnan(candidate)) return std::numeric_limits<double>::quiet_NaN();
    return candidate > current ? candidate : current;
}

}  // namespace

void CpuRefBackend::doAccumulateMetrics(const MetricsGeometry& g, const float* logits,
                                        const std::int32_t* labels, const float* batchLoss,
                                        double* sums) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double added = batchLoss ? double(*batchLoss) : 0.0;
    double largest = batchLoss ? double(*batchLoss) : -std::numeric_limits<double>::infinity();
    for (int i = 0; i < g.batch; ++i) {
        const float* row = logits + std::int64_t(i) * g.classes;
        int predicted = 0;
        for (int k = 1; k < g.classes; ++k)
            if (row[k] > row[predicted]) predicted = k;
        const int label = labels[i];
        if (label < 0 || label >= g.classes) {
            added = largest = nan;
            continue;
        }
        sums[MetricsGeometry::kConfusion + std::int64_t(label) * g.classes + predicted] += 1.0;
        if (batchLoss) continue;
        double sumExp = 0.0;
        for (int k = 0; k < g.classes; ++k) sumExp += std::exp(double(row[k]) - row[predicted]);
        const double sampleLoss = double(row[predicted]) + std::log(sumExp) - row[label];
        added += sampleLoss;
        largest = largestKeepingNaN(largest, sampleLoss);
    }
    sums[MetricsGeometry::kLossSum] += added;
    sums[MetricsGeometry::kLargestLoss] = largestKeepingNaN(sums[MetricsGeometry::kLargestLoss], largest);
    sums[MetricsGeometry::kLatestLoss] = added;
}

}  // namespace cnnstudio::cpu_ref
