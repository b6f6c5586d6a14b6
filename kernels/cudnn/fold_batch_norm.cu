// Folds an inference batch norm into the convolution before it, so that conv + batch norm runs
// as one convolution with a bias:
//   scale[k]             = gamma[k] / sqrt(runningVar[k] + epsilon)
//   foldedWeight[k][i]   = weight[k][i] * scale[k]                  i < perFilter (C/groups*R*S)
//   foldedBias[k]        = beta[k] + (bias[k] - runningMean[k]) * scale[k]   (bias 0 when null)
// weight and foldedWeight (filters, perFilter) fp32 KCRS; the rest (filters) fp32.
// A few thousand to a few hundred thousand elements per call: one grid-stride kernel.

#include "cudnn/fold_batch_norm.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

__device__ float foldScale(const BatchNormFold& f, int filter) {
    return f.gamma[filter] * rsqrtf(f.runningVar[filter] + f.epsilon);
}

__global__ void foldBatchNormKernel(BatchNormFold f, const float* __restrict__ weight,
                                    const float* __restrict__ bias, int filters, int perFilter,
                                    float* __restrict__ foldedWeight,
                                    float* __restrict__ foldedBias) {
    const std::size_t count = std::size_t(filters) * perFilter;
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const int filter = int(i / std::size_t(perFilter));
        foldedWeight[i] = weight[i] * foldScale(f, filter);
        if (i % std::size_t(perFilter) == 0) {
            const float shifted = (bias ? bias[filter] : 0.0f) - f.runningMean[filter];
            foldedBias[filter] = fmaf(shifted, foldScale(f, filter), f.beta[filter]);
        }
    }
}

}  // namespace

void foldBatchNormIntoConv(const BatchNormFold& fold, const float* weight, const float* bias,
                           int filters, int perFilter, float* foldedWeight, float* foldedBias,
                           int multiprocessors, cudaStream_t stream) {
    constexpr unsigned threads = 256;
    const std::size_t count = std::size_t(filters) * perFilter;
    launchKernel("fold batch norm into convolution", foldBatchNormKernel,
                 gridStrideBlocks(count, threads, multiprocessors), threads, stream, fold, weight,
                 bias, filters, perFilter, foldedWeight, foldedBias);
}

}  // namespace cnnstudio::kernels
