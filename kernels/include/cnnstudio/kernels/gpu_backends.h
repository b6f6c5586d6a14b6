// The GPU side of CNN Studio as the engine sees it. No CUDA header is included here: the
// engine and everything above it stay free of CUDA.
#pragma once

#include <memory>
#include <cstddef>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/hardware.h"

namespace cnnstudio::kernels {

// Our own CUDA kernels for every op ("cuda") and cuDNN where it is faster ("cudnn").
// Both throw Error when no usable device exists.
std::unique_ptr<Backend> createCudaBackend(const BackendOptions& options);
std::unique_ptr<Backend> createCudnnBackend(const BackendOptions& options);

// Empty when at least one CUDA device can be used; otherwise the reason.
std::string gpuUnavailableReason();

// Collectives between GPU ranks through NCCL, enqueued on a GPU backend's stream so that they
// order with its ops and can be captured in its step graph. The engine bootstraps it: rank 0
// makes the unique id and MPI broadcasts it.
std::vector<char> createNcclUniqueId();
// Throws Error naming the rank when NCCL cannot be set up.
std::unique_ptr<DeviceReducer> createNcclReducer(Backend& gpuBackend, int rank, int ranks,
                                               const std::vector<char>& uniqueId);

// Fills hardware.gpus and the driver, runtime, cuDNN and NCCL versions.
void discoverGpus(HardwareInfo& hardware);

}  // namespace cnnstudio::kernels
