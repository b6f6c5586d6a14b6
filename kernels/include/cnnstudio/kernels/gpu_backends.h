// The GPU wing (cuda, cudnn, NCCL) as the backend registry sees it. No CUDA header is included
// here: everything above kernels/ stays free of CUDA.
#pragma once

#include <memory>
#include <cstddef>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/device_reducer.h"
#include "cnnstudio/hardware.h"

namespace cnnstudio::kernels {

// Our own CUDA kernels for every op ("cuda") and cuDNN where it is faster ("cudnn").
// Both throw Error when no usable device exists.
std::unique_ptr<Backend> createCudaBackend(const BackendOptions& options);
std::unique_ptr<Backend> createCudnnBackend(const BackendOptions& options);

// Empty when at least one CUDA device can be used; otherwise the reason.
std::string gpuUnavailableReason();

// Collectives between GPU ranks through NCCL (see cnnstudio/device_reducer.h).
std::unique_ptr<DeviceTransport> createNcclTransport();

// Fills hardware.gpus and the driver, runtime, cuDNN and NCCL versions.
void discoverGpus(HardwareInfo& hardware);

}  // namespace cnnstudio::kernels
