#include "cnnstudio/hardware.h"

#include <fstream>
#include <thread>

#include <dnnl.h>

#ifdef CNNSTUDIO_HAVE_CUDA
#include "cnnstudio/kernels/gpu_backends.h"
#endif

namespace cnnstudio {
namespace {

std::string readCpuName() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
        }
    }
    return "unknown CPU";
}

}  // namespace

HardwareInfo discoverHardware() {
    HardwareInfo hardware;
    hardware.cpuCores = int(std::max(1u, std::thread::hardware_concurrency()));
    hardware.cpuName = readCpuName();
    const dnnl_version_t* version = dnnl_version();
    hardware.onednnVersion = std::to_string(version->major) + "." +
                             std::to_string(version->minor) + "." + std::to_string(version->patch);
#ifdef CNNSTUDIO_HAVE_CUDA
    kernels::discoverGpus(hardware);
#else
    hardware.gpuProblem = "this build of CNN Studio has no CUDA support";
#endif
    return hardware;
}

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
