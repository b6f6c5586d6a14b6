// Classification metrics summed into backend memory (backend.h MetricsGeometry).
//   logits (N, K) an activation (fp32, or bf16 in bf16 precision: read widened); labels (N) int32; batchLoss one float or null;
//   sums (3 + K * K) doubles: loss sum, largest loss, latest loss, confusion counts
//   loss_i = logsumexp(z_i) - z_i[y_i] (evaluation, no batch loss); p_i = first argmax of z_i
// Rows are independent: threads split the batch into per-row predictions and losses (large
// batches only; a training batch of 128 x 7 logits is cheaper on one thread), then one thread
// adds them in row order, so the sums do not depend on the thread count.
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/activation_storage.h"
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

// max that keeps NaN: once a loss was NaN the divergence guard must see it.
double largestKeepingNaN(double current, double candidate) {
    if (std::isnan(current) || std::isnan(candidate)) return std::numeric_limits<double>::quiet_NaN();
    return candidate > current ? candidate : current;
}

}  // namespace

void CpuBackend::doAccumulateMetrics(const MetricsGeometry& g, const float* logits,
                                     const std::int32_t* labels, const float* batchLoss,
                                     double* sums) {
    const int classes = g.classes;
    std::vector<int> predicted(std::size_t(g.batch));
    std::vector<double> sampleLoss(batchLoss ? 0 : std::size_t(g.batch));
    OmpThreadScope threads(threads_);
    const bool parallel = std::int64_t(g.batch) * classes >= parallelThreshold;
    withStorage(storesBf16(), [&]<class T>(T*) {
#pragma omp parallel for schedule(static) if (parallel)
        for (int i = 0; i < g.batch; ++i) {
            const T* row = stored<T>(logits) + std::int64_t(i) * classes;
            auto z = [&](int k) { return toFloat(row[k]); };
            int best = 0;
            for (int k = 1; k < classes; ++k)
                if (z(k) > z(best)) best = k;
            predicted[std::size_t(i)] = best;
            if (batchLoss) continue;
            const int label = labels[i];
            if (label < 0 || label >= classes) continue;
            double sumExp = 0.0;
            for (int k = 0; k < classes; ++k) sumExp += std::exp(double(z(k)) - z(best));
            sampleLoss[std::size_t(i)] = double(z(best)) + std::log(sumExp) - z(label);
        }
    });

    const double nan = std::numeric_limits<double>::quiet_NaN();
    double added = batchLoss ? double(*batchLoss) : 0.0;
    double largest = batchLoss ? added : -std::numeric_limits<double>::infinity();
    for (int i = 0; i < g.batch; ++i) {
        const int label = labels[i];
        if (label < 0 || label >= classes) {
            added = largest = nan;
            continue;
        }
        sums[MetricsGeometry::kConfusion + std::int64_t(label) * classes + predicted[std::size_t(i)]] += 1.0;
        if (batchLoss) continue;
        added += sampleLoss[std::size_t(i)];
        largest = largestKeepingNaN(largest, sampleLoss[std::size_t(i)]);
    }
    sums[MetricsGeometry::kLossSum] += added;
    sums[MetricsGeometry::kLargestLoss] = largestKeepingNaN(sums[MetricsGeometry::kLargestLoss], largest);
    sums[MetricsGeometry::kLatestLoss] = added;
}

}  // namespace cnnstudio::cpu
