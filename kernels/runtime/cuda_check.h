// Error checking for CUDA runtime calls and kernel launches. Every failure becomes a
// cnnstudio::Error that names the call, the source line and the driver's explanation.
#pragma once

#include <string>

#include <cuda_runtime.h>

#include "cnnstudio/error.h"

namespace cnnstudio::kernels {

[[noreturn]] inline void throwCudaError(cudaError_t status, const char* call, const char* file,
                                        int line) {
    throw Error(std::string(call) + " failed: " + cudaGetErrorString(status) + " (" +
                    cudaGetErrorName(status) + ")",
                std::string(file) + ":" + std::to_string(line),
                "check that the GPU is healthy (nvidia-smi) and that no other process holds it");
}

}  // namespace cnnstudio::kernels

// Wraps a CUDA runtime call: CNNSTUDIO_CUDA_CHECK(cudaMemcpyAsync(...));
#define CNNSTUDIO_CUDA_CHECK(call)                                                          \
    do {                                                                                    \
        cudaError_t cnnstudioStatus_ = (call);                                              \
        if (cnnstudioStatus_ != cudaSuccess)                                                \
            ::cnnstudio::kernels::throwCudaError(cnnstudioStatus_, #call, __FILE__, __LINE__); \
    } while (false)

// After every kernel launch: catches bad launch configurations at the launch site.
// cudaGetLastError does not synchronise, so it is legal inside stream capture.
#define CNNSTUDIO_CUDA_CHECK_LAUNCH(kernelName)                                             \
    do {                                                                                    \
        cudaError_t cnnstudioStatus_ = cudaGetLastError();                                  \
        if (cnnstudioStatus_ != cudaSuccess)                                                \
            ::cnnstudio::kernels::throwCudaError(cnnstudioStatus_, "launch of " kernelName, \
                                                 __FILE__, __LINE__);                       \
    } while (false)
