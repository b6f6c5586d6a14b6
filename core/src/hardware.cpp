#include "cnnstudio/hardware.h"

namespace cnnstudio {

nlohmann::json toJson(const HardwareInfo& hardware) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const GpuInfo& gpu : hardware.gpus)
        gpus.push_back({{"index", gpu.index},
                        {"name", gpu.name},
                        {"total_bytes", gpu.totalBytes},
                        {"free_bytes", gpu.freeBytes},
                        {"multiprocessors", gpu.multiprocessors},
                        {"compute_capability", std::to_string(gpu.computeMajor) + "." +
                                                   std::to_string(gpu.computeMinor)}});
    return {{"cpu", {{"name", hardware.cpuName}, {"cores", hardware.cpuCores}}},
            {"gpus", gpus},
            {"gpu_problem", hardware.gpuProblem},
            {"driver_version", hardware.driverVersion},
            {"cuda_runtime_version", hardware.runtimeVersion},
            {"cudnn_version", hardware.cudnnVersion},
            {"nccl_version", hardware.ncclVersion},
            {"onednn_version", hardware.onednnVersion}};
}

}  // namespace cnnstudio
