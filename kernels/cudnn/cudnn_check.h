// Error checking for cuDNN and cuBLAS calls. Every failure becomes a cnnstudio::Error naming the
// call, the source line and the library's explanation (cuDNN 9 also keeps a longer message
// about the last failure, which is appended when there is one).
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cudnn.h>

#include "cnnstudio/error.h"

namespace cnnstudio::kernels {

// What a user can do about a cuDNN failure, by the status category (cuDNN 9 groups its codes in
// thousands: 1xxx set-up, 2xxx bad parameter, 3xxx not supported, 4xxx internal, 5xxx execution).
inline const char* cudnnFailureHint(cudnnStatus_t status) {
    switch (int(status) / 1000) {
    case 1: return "the cuDNN installation looks incomplete or mismatched; reinstall cuDNN 9";
    case 2:
    case 3: return "cuDNN does not take this layer's shapes; try backend 'cuda'";
    case 4: return int(status) % 1000 == 4 ? "out of GPU memory: lower the batch size"
                                           : "cuDNN failed internally; try backend 'cuda'";
    default: return "check that the GPU is healthy (nvidia-smi); try backend 'cuda'";
    }
}

[[noreturn]] inline void throwCudnnError(cudnnStatus_t status, const char* call, const char* file,
                                         int line) {
    char detail[512] = {};
    cudnnGetLastErrorString(detail, sizeof(detail));
    std::string what = std::string(call) + " failed: " + cudnnGetErrorString(status);
    if (detail[0] != '\0') what += " (" + std::string(detail) + ")";
    throw Error(what, std::string(file) + ":" + std::to_string(line), cudnnFailureHint(status));
}

[[noreturn]] inline void throwCublasError(cublasStatus_t status, const char* call,
                                          const char* file, int line) {
    throw Error(std::string(call) + " failed: " + cublasGetStatusString(status) + " (" +
                    cublasGetStatusName(status) + ")",
                std::string(file) + ":" + std::to_string(line),
                status == CUBLAS_STATUS_ALLOC_FAILED ? "lower the batch size"
                                                     : "try backend 'cuda'");
}

}  // namespace cnnstudio::kernels

// Wraps a cuDNN call: CNNSTUDIO_CUDNN_CHECK(cudnnConvolutionForward(...));
#define CNNSTUDIO_CUDNN_CHECK(call)                                                          \
    do {                                                                                     \
        cudnnStatus_t cnnstudioStatus_ = (call);                                             \
        if (cnnstudioStatus_ != CUDNN_STATUS_SUCCESS)                                        \
            ::cnnstudio::kernels::throwCudnnError(cnnstudioStatus_, #call, __FILE__, __LINE__); \
    } while (false)

// Wraps a cuBLAS call: CNNSTUDIO_CUBLAS_CHECK(cublasGemmEx(...));
#define CNNSTUDIO_CUBLAS_CHECK(call)                                                          \
    do {                                                                                      \
        cublasStatus_t cnnstudioStatus_ = (call);                                             \
        if (cnnstudioStatus_ != CUBLAS_STATUS_SUCCESS)                                        \
            ::cnnstudio::kernels::throwCublasError(cnnstudioStatus_, #call, __FILE__, __LINE__); \
    } while (false)
