// The GPU side of CNN Studio as the engine sees it. No CUDA header is included here: the
// engine and everything above it stay free of CUDA.
#pragma once

#include <memory>
#include <string>

#include "cnnstudio/backend.h"
#include "cnnstudio/hardware.h"

namespace cnnstudio::kernels {

// Our own CUDA kernels for every op ("cuda") and cuDNN where it is faster ("cudnn").
// Both throw Error when no usable device exists.
std::unique_ptr<Backend> createCudaBackend(const BackendOptions& options);
std::unique_ptr<Backend> createCudnnBackend(const BackendOptions& options);

// Empty when at least one CUDA device can be used; otherwise the reason.
std::string gpuUnavailableReason();

// Fills hardware.gpus and the driver, runtime, cuDNN and NCCL versions.
void discoverGpus(HardwareInfo& hardware);

}  // namespace cnnstudio::kernels
