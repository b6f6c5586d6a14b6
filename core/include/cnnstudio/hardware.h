// What a machine has to train on: GPUs, library versions and CPU cores. The backend registry
// fills it (discoverHardware in cnnstudio/backend_registry.h); the engine only records it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cnnstudio {

struct GpuInfo {
    int index = 0;
    std::string name;
    std::size_t totalBytes = 0, freeBytes = 0;
    int multiprocessors = 0;
    int computeMajor = 0, computeMinor = 0;
};

struct HardwareInfo {
    std::vector<GpuInfo> gpus;
    std::string driverVersion, runtimeVersion, cudnnVersion, ncclVersion;  // empty when absent
    std::string gpuProblem;  // why there are no GPUs ("not built with CUDA", "no CUDA driver")
    int cpuCores = 1;
    std::string cpuName;
    std::string onednnVersion;
};

nlohmann::json toJson(const HardwareInfo& hardware);

}  // namespace cnnstudio
