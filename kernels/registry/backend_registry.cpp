// The one place that names every backend: the CPU backends always, the GPU wing (cuda, cudnn,
// NCCL) when its plugin loads (gpu_plugin_loader.h).
#include "cnnstudio/backend_registry.h"

#include <algorithm>

#include "cnnstudio/error.h"
#include "cnnstudio/kernels/cpu_backends.h"
#include "gpu_plugin_loader.h"

namespace cnnstudio {
namespace {

std::string joinNames(const std::vector<std::string>& names) {
    std::string joined;
    for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
    return joined;
}

}  // namespace

std::vector<std::string> knownBackends() { return {"cpu-ref", "cpu", "cuda", "cudnn"}; }

std::string backendUnavailableReason(const std::string& name) {
    if (name == "cpu-ref") return {};
    if (name == "cpu") {
#ifdef CNNSTUDIO_HAVE_ONEDNN
        return {};
#else
        return "this build has no oneDNN, which the cpu backend runs on";
#endif
    }
    if (name == "cuda" || name == "cudnn") {
        const LoadedGpuPlugin& gpu = loadGpuPlugin();
        return gpu.plugin ? gpu.plugin->gpuUnavailableReason() : gpu.problem;
    }
    return "unknown backend '" + name + "'";
}

std::vector<std::string> backendPrecisions(const std::string& name) {
    // The GPU backends have tensor-core modes: cudnn all three, our own cuda kernels fp32 and bf16
    // (cuda_backend.cpp refuses tf32); cpu has bf16 where the CPU has bf16 instructions; cpu-ref
    // is fp32.
    if (name == "cudnn") return {"fp32", "tf32", "bf16"};
    if (name == "cuda") return {"fp32", "bf16"};
#ifdef CNNSTUDIO_HAVE_ONEDNN
    if (name == "cpu" && cpuPrecisionUnavailableReason(Precision::Bf16).empty()) return {"fp32", "bf16"};
#endif
    return {"fp32"};
}

bool backendTrainsIn(const std::string& name, const std::string& precision) {
    const std::vector<std::string> precisions = backendPrecisions(name);
    return std::find(precisions.begin(), precisions.end(), precision) != precisions.end();
}

void requirePrecisionOf(const std::string& name, const std::string& precision) {
    if (backendTrainsIn(name, precision)) return;
    const std::vector<std::string> precisions = backendPrecisions(name);
    std::string offered = precisions.front();  // "fp32", "fp32 or bf16", "fp32, tf32 or bf16"
    for (std::size_t i = 1; i < precisions.size(); ++i)
        offered += (i + 1 == precisions.size() ? " or " : ", ") + precisions[i];
    std::string others;  // the backends that do train in `precision`
    for (const std::string& other : knownBackends())
        if (other != name && backendTrainsIn(other, precision)) others += (others.empty() ? "" : " or ") + other;
    std::string why;  // where the backend could train in `precision` on other hardware
#ifdef CNNSTUDIO_HAVE_ONEDNN
    if (name == "cpu" && precision == "bf16") why = ": " + cpuPrecisionUnavailableReason(Precision::Bf16);
#endif
    throw Error("the " + name + " backend trains in " + offered + ", " + precision + " was asked for" + why,
                "backend '" + name + "'",
                "pick one of those" + (others.empty() ? "" : ", or the " + others + " backend for " + precision));
}

std::vector<std::string> availableBackends() {
    std::vector<std::string> names;
    for (const auto& name : knownBackends())
        if (backendUnavailableReason(name).empty()) names.push_back(name);
    return names;
}

std::unique_ptr<Backend> createBackend(const std::string& name, const BackendOptions& options) {
    if (std::string why = backendUnavailableReason(name); !why.empty())
        throw Error(why, "backend '" + name + "'", "available here: " + joinNames(availableBackends()));
    if (name == "cpu-ref") return createCpuRefBackend(options);
#ifdef CNNSTUDIO_HAVE_ONEDNN
    if (name == "cpu") return createCpuBackend(options);
#endif
    // Available, so the plugin is loaded.
    if (name == "cuda") return loadGpuPlugin().plugin->createCudaBackend(options);
    if (name == "cudnn") return loadGpuPlugin().plugin->createCudnnBackend(options);
    throw Error("unknown backend '" + name + "'");
}

std::unique_ptr<DeviceTransport> createDeviceTransport(const Backend& backend) {
    const LoadedGpuPlugin& gpu = loadGpuPlugin();
    if (backend.isDevice() && gpu.plugin) return gpu.plugin->createNcclTransport();
    return nullptr;
}

}  // namespace cnnstudio
