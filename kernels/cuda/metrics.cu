// Classification metrics summed in device memory (backend.h MetricsGeometry), so that the
// trainer reads them once per log point instead of synchronising every step.
//   logits z (B, K) an activation (fp32, or bf16 when Backend::activationFormat says so: read
//   widened to fp32); labels (B) int32; batchLoss one float or null;
//   sums (3 + K * K) doubles: loss sum, largest loss, latest loss, confusion counts
//   p_i    = the first index of max_k z[i][k];  counts[y_i][p_i] += 1
//   loss_i = max_k z[i][k] + log sum_k exp(z[i][k] - max) - z[i][y_i]  (without batchLoss)
// One block does the whole batch (a training batch is a few hundred rows of a few classes; the
// op is one small launch inside the captured step): a warp per row, lanes over classes with
// shuffle reductions; the counts are added with double atomics (whole numbers, so exact in any
// order), the losses per warp, then by thread 0 in warp order, so the sums are deterministic.
// A label outside [0, K) turns the loss sums NaN and its row is not counted.
#include <cmath>
#include <cstdint>

#include "cuda/activation_storage.cuh"
#include "cuda/block_reduce.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

constexpr int kMetricsThreads = 256;
constexpr int kMetricsWarps = kMetricsThreads / 32;

// max that keeps NaN: once a loss was NaN the trainer's divergence guard must see it.
__device__ __forceinline__ double largestKeepingNaN(double current, double candidate) {
    if (isnan(current) || isnan(candidate)) return NAN;
    return candidate > current ? candidate : current;
}

template <class T>
__global__ void __launch_bounds__(kMetricsThreads)
accumulateMetricsKernel(int batch, int classes, const T* __restrict__ logits,
                        const std::int32_t* __restrict__ labels,
                        const float* __restrict__ batchLoss, double* __restrict__ sums) {
    __shared__ double warpAdded[kMetricsWarps], warpLargest[kMetricsWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    double added = 0.0, largest = -INFINITY;  // this warp's rows; meaningful in lane 0
    for (int i = warp; i < batch; i += kMetricsWarps) {
        const T* row = logits + std::int64_t(i) * classes;
        float best = -INFINITY;
        int bestIndex = classes;  // above every index, so that any real entry wins a tie
        for (int k = lane; k < classes; k += 32) {
            const float logit = toFloat(row[k]);
            if (logit > best || bestIndex == classes) {
                best = logit;
                bestIndex = k;
            }
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) {
            const float otherBest = __shfl_xor_sync(kFullWarp, best, offset);
            const int otherIndex = __shfl_xor_sync(kFullWarp, bestIndex, offset);
            if (otherBest > best || (otherBest == best && otherIndex < bestIndex)) {
                best = otherBest;
                bestIndex = otherIndex;
            }
        }
        float expSum = 0.0f;
        if (!batchLoss)
            for (int k = lane; k < classes; k += 32) expSum += expf(toFloat(row[k]) - best);
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) expSum += __shfl_xor_sync(kFullWarp, expSum, offset);
        if (lane != 0) continue;
        const int label = labels[i];
        if (label < 0 || label >= classes) {
            added = largest = NAN;
            continue;
        }
        atomicAdd(&sums[MetricsGeometry::kConfusion + std::int64_t(label) * classes + bestIndex], 1.0);
        if (batchLoss) continue;
        const double sampleLoss = double(best) + log(double(expSum)) - double(toFloat(row[label]));
        added += sampleLoss;
        largest = largestKeepingNaN(largest, sampleLoss);
    }
    if (lane == 0) {
        warpAdded[warp] = added;
        warpLargest[warp] = largest;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    double total = batchLoss ? double(*batchLoss) : 0.0;
    double batchLargest = batchLoss ? total : -INFINITY;
    for (int w = 0; w < kMetricsWarps; ++w) {
        total += warpAdded[w];
        batchLargest = largestKeepingNaN(batchLargest, warpLargest[w]);
    }
    sums[MetricsGeometry::kLossSum] += total;
    sums[MetricsGeometry::kLargestLoss] = largestKeepingNaN(sums[MetricsGeometry::kLargestLoss], batchLargest);
    sums[MetricsGeometry::kLatestLoss] = total;
}

}  // namespace

void CudaBackend::doAccumulateMetrics(const MetricsGeometry& g, const float* logits,
                                      const std::int32_t* labels, const float* batchLoss,
                                      double* sums) {
    requireIndexable(std::int64_t(g.batch) * g.classes, opLabel("accumulateMetrics"), "the logits");
    activateDevice();
    if (activationFormat().bf16)
        launchKernel("accumulate metrics", accumulateMetricsKernel<__nv_bfloat16>, 1,
                     kMetricsThreads, stream(), g.batch, g.classes,
                     reinterpret_cast<const __nv_bfloat16*>(logits), labels, batchLoss, sums);
    else
        launchKernel("accumulate metrics", accumulateMetricsKernel<float>, 1, kMetricsThreads,
                     stream(), g.batch, g.classes, logits, labels, batchLoss, sums);
}

}  // namespace cnnstudio::kernels
