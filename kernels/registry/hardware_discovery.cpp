// What this machine offers: CPU cores and model, the oneDNN version of the cpu backend, and the
// GPUs with their driver and library versions when the GPU plugin loads.
#include <fstream>
#include <thread>

#ifdef CNNSTUDIO_HAVE_ONEDNN
#include <dnnl.h>
#endif

#include "cnnstudio/backend_registry.h"
#include "gpu_plugin_loader.h"

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
#ifdef CNNSTUDIO_HAVE_ONEDNN
    const dnnl_version_t* version = dnnl_version();
    hardware.onednnVersion = std::to_string(version->major) + "." +
                             std::to_string(version->minor) + "." + std::to_string(version->patch);
#endif
    if (const LoadedGpuPlugin& gpu = loadGpuPlugin(); gpu.plugin)
        gpu.plugin->discoverGpus(hardware);
    else
        hardware.gpuProblem = gpu.problem;
    return hardware;
}

}  // namespace cnnstudio
