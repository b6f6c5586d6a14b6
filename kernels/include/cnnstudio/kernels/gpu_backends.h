// The GPU wing (cuda, cudnn, NCCL) as the backend registry sees it. No CUDA header is included
// here: everything above kernels/ stays free of CUDA.
//
// libcnngpu is a plugin: the registry loads it at run time (dlopen) and reaches it only through
// the table cnnstudio_gpu_plugin() returns, so programs start on machines without the CUDA
// libraries and say why the GPU backends are missing. Tests of the wing itself link libcnngpu
// and call the functions below directly.
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

// What the plugin offers: the functions above. The table passes C++ types (Backend,
// std::unique_ptr, std::string), so a plugin works only with the CNN Studio build it came
// from; builtForVersion lets the registry refuse one from another version instead of crashing.
struct GpuPlugin {
    const char* builtForVersion;
    std::unique_ptr<Backend> (*createCudaBackend)(const BackendOptions& options);
    std::unique_ptr<Backend> (*createCudnnBackend)(const BackendOptions& options);
    std::string (*gpuUnavailableReason)();
    std::unique_ptr<DeviceTransport> (*createNcclTransport)();
    void (*discoverGpus)(HardwareInfo& hardware);
};

// The plugin's file name and the one symbol the registry looks up in it.
inline constexpr char kGpuPluginFileName[] = "libcnngpu.so";
inline constexpr char kGpuPluginEntryPoint[] = "cnnstudio_gpu_plugin";

}  // namespace cnnstudio::kernels

// The plugin's entry point: an unmangled name, so dlsym finds it by kGpuPluginEntryPoint.
extern "C" const cnnstudio::kernels::GpuPlugin* cnnstudio_gpu_plugin();
