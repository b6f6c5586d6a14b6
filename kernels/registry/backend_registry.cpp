// The one place that names every backend: the CPU backends always, the GPU wing (cuda, cudnn,
// NCCL) when this build has CUDA.
#include "cnnstudio/backend_registry.h"

#include "cnnstudio/error.h"
#include "cnnstudio/kernels/cpu_backends.h"

#ifdef CNNSTUDIO_HAVE_CUDA
#include "cnnstudio/kernels/gpu_backends.h"
#endif

namespace cnnstudio {

std::vector<std::string> knownBackends() { return {"cpu-ref", "cpu", "cuda", "cudnn"}; }

std::string backendUnavailableReason(const std::string& name) {
    if (name == "cpu-ref" || name == "cpu") return {};
    if (name == "cuda" || name == "cudnn") {
#ifdef CNNSTUDIO_HAVE_CUDA
        return kernels::gpuUnavailableReason();
#else
        return "this build of CNN Studio has no CUDA support";
#endif
    }
    return "unknown backend '" + name + "'";
}

std::vector<std::string> availableBackends() {
    std::vector<std::string> names;
    for (const auto& name : knownBackends())
        if (backendUnavailableReason(name).empty()) names.push_back(name);
    return names;
}

std::unique_ptr<Backend> createBackend(const std::string& name, const BackendOptions& options) {
    if (std::string why = backendUnavailableReason(name); !why.empty())
        throw Error(why, "backend '" + name + "'", "available here: cpu-ref, cpu" +
                    std::string(availableBackends().size() > 2 ? ", cuda, cudnn" : ""));
    if (name == "cpu-ref") return createCpuRefBackend(options);
    if (name == "cpu") return createCpuBackend(options);
#ifdef CNNSTUDIO_HAVE_CUDA
    if (name == "cuda") return kernels::createCudaBackend(options);
    if (name == "cudnn") return kernels::createCudnnBackend(options);
#endif
    throw Error("unknown backend '" + name + "'");
}

std::unique_ptr<DeviceTransport> createDeviceTransport(const Backend& backend) {
#ifdef CNNSTUDIO_HAVE_CUDA
    if (backend.isDevice()) return kernels::createNcclTransport();
#endif
    return nullptr;
}

}  // namespace cnnstudio
