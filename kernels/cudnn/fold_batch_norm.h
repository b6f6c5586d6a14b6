// Folding an inference batch norm into the convolution before it (fold_batch_norm.cu).
#pragma once

#include <cuda_runtime.h>

namespace cnnstudio::kernels {

// The batch norm's parameters and running statistics (channels), device pointers.
struct BatchNormFold {
    const float* gamma;
    const float* beta;
    const float* runningMean;
    const float* runningVar;
    float epsilon;
};

// weight, foldedWeight (filters, perFilter); bias (filters, nullable), foldedBias (filters).
void foldBatchNormIntoConv(const BatchNormFold& fold, const float* weight, const float* bias,
                           int filters, int perFilter, float* foldedWeight, float* foldedBias,
                           int multiprocessors, cudaStream_t stream);

}  // namespace cnnstudio::kernels
