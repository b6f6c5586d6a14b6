// GPU hardware discovery: which CUDA devices this process can use, how much memory each has,
// and the versions of the driver, CUDA runtime, cuDNN and NCCL it runs with.
//
// Nothing here throws: a machine without a driver or device yields zero GPUs and a sentence in
// HardwareInfo::gpuProblem that a user can act on. Library versions are still reported then,
// since they describe what this build would use. GPUs that are listed but older than the
// architectures this build was compiled for are named in gpuProblem too.
//
// Free memory needs a context on each device (cudaMemGetInfo). A context costs several hundred
// MB of device memory, so a device whose primary context was not active before we looked gets it
// released again (cudaDeviceReset) — otherwise rank 0 of a multi-GPU run would keep a context on
// every other rank's GPU.

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include "cnnstudio/kernels/gpu_backends.h"

namespace cnnstudio::kernels {
namespace {

std::string cudaVersionText(int version) {  // 13000 -> "13.0"
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string cudnnVersionText(std::size_t version) {  // cuDNN 9: major*10000 + minor*100 + patch
    return std::to_string(version / 10000) + "." + std::to_string((version % 10000) / 100) + "." +
           std::to_string(version % 100);
}

std::string ncclVersionText(int version) {
    // NCCL encodes 2.8 and older as X*1000 + Y*100 + Z, later versions as X*10000 + Y*100 + Z.
    const int major = version >= 10000 ? version / 10000 : version / 1000;
    const int minor = version >= 10000 ? (version % 10000) / 100 : (version % 1000) / 100;
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(version % 100);
}

// The kernel module's release ("570.86.15") from /proc; empty where it cannot be read.
std::string nvidiaKernelModuleVersion() {
    std::ifstream file("/proc/driver/nvidia/version");
    std::string line;
    if (!std::getline(file, line)) return {};
    const std::string marker = "Kernel Module";
    auto at = line.find(marker);
    if (at == std::string::npos) return {};
    at += marker.size();
    while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
    auto end = at;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
    return line.substr(at, end - at);
}

// Whether device `index` already has an active primary context in this process. Asked of the
// driver through the runtime's entry-point lookup, so libcnnkernels does not link libcuda (the
// programs must start on machines without a driver). `known` is false when it cannot be told.
struct ContextState {
    bool known = false;
    bool active = false;
};

ContextState primaryContextState(int index) {
    using GetState = CUresult (*)(CUdevice, unsigned int*, int*);
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &function, 7000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || function == nullptr) {
        cudaGetLastError();
        return {};
    }
    unsigned int flags = 0;
    int active = 0;
    // Runtime and driver number the visible devices the same way.
    if (reinterpret_cast<GetState>(function)(CUdevice(index), &flags, &active) != CUDA_SUCCESS)
        return {};
    return {true, active != 0};
}

// Total and free bytes of one device; false (and the CUDA error cleared) when it cannot be asked.
bool queryMemory(int index, std::size_t& freeBytes, std::size_t& totalBytes) {
    const ContextState before = primaryContextState(index);
    if (cudaSetDevice(index) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    const bool ok = cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess;
    if (!ok) cudaGetLastError();
    if (before.known && !before.active) cudaDeviceReset();  // the context was ours: give it back
    return ok;
}

std::string describeCudaError(cudaError_t error) {
    switch (error) {
    case cudaErrorNoDevice:
        return "no CUDA device found";
    case cudaErrorInsufficientDriver:
        return "the NVIDIA driver is older than this build's CUDA runtime needs (update the driver)";
    case cudaErrorInitializationError:
        return "the CUDA driver could not be initialised (" + std::string(cudaGetErrorString(error)) + ")";
    default:
        return std::string("CUDA reports: ") + cudaGetErrorString(error);
    }
}

// The oldest compute capability (major*10 + minor) this build has machine code or PTX for, from
// CNNSTUDIO_CUDA_ARCHS ("90", "80,90a"); 0 when it names none ("native", "all").
int oldestBuiltArchitecture() {
    const std::string archs = CNNSTUDIO_CUDA_ARCHS_TEXT;
    int oldest = 0;
    for (std::size_t at = 0; at < archs.size();) {
        if (!std::isdigit(static_cast<unsigned char>(archs[at]))) {
            ++at;
            continue;
        }
        int value = 0;
        while (at < archs.size() && std::isdigit(static_cast<unsigned char>(archs[at])))
            value = value * 10 + (archs[at++] - '0');
        while (at < archs.size() && archs[at] != ',') ++at;  // skip "a", "-real", ...
        oldest = oldest == 0 ? value : std::min(oldest, value);
    }
    return oldest;
}

}  // namespace

void discoverGpus(HardwareInfo& hardware) {
    hardware.gpus.clear();
    hardware.gpuProblem.clear();

    int runtime = 0;
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) hardware.runtimeVersion = cudaVersionText(runtime);
    hardware.cudnnVersion = cudnnVersionText(cudnnGetVersion());
    int nccl = 0;
    if (ncclGetVersion(&nccl) == ncclSuccess) hardware.ncclVersion = ncclVersionText(nccl);

    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        cudaGetLastError();
        hardware.driverVersion.clear();
        hardware.gpuProblem = "no NVIDIA driver found (libcuda could not be loaded)";
        return;
    }
    const std::string module = nvidiaKernelModuleVersion();
    hardware.driverVersion = module.empty() ? "CUDA " + cudaVersionText(driver)
                                            : module + " (CUDA " + cudaVersionText(driver) + ")";

    int count = 0;
    if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
        cudaGetLastError();
        hardware.gpuProblem = describeCudaError(error);
        return;
    }
    if (count == 0) {
        hardware.gpuProblem = "no CUDA device found";
        return;
    }

    // The calling thread's current device is put back afterwards, in the state it was in.
    int previousDevice = 0;
    const bool hadDevice = cudaGetDevice(&previousDevice) == cudaSuccess;
    const ContextState previousState = primaryContextState(previousDevice);
    std::vector<std::string> problems;
    const int oldest = oldestBuiltArchitecture();
    for (int index = 0; index < count; ++index) {
        cudaDeviceProp properties{};
        if (const cudaError_t error = cudaGetDeviceProperties(&properties, index);
            error != cudaSuccess) {
            cudaGetLastError();
            problems.push_back("GPU " + std::to_string(index) + ": " + cudaGetErrorString(error));
            continue;
        }
        GpuInfo gpu;
        gpu.index = index;
        gpu.name = properties.name;
        gpu.totalBytes = properties.totalGlobalMem;
        gpu.multiprocessors = properties.multiProcessorCount;
        gpu.computeMajor = properties.major;
        gpu.computeMinor = properties.minor;
        std::size_t freeBytes = 0, totalBytes = 0;
        if (queryMemory(index, freeBytes, totalBytes)) {
            gpu.freeBytes = freeBytes;
            gpu.totalBytes = totalBytes;
        } else {
            problems.push_back("GPU " + std::to_string(index) + ": free memory could not be read");
        }
        const int capability = properties.major * 10 + properties.minor;
        if (oldest != 0 && capability < oldest)
            problems.push_back("GPU " + std::to_string(index) + " (" + properties.name +
                               ") has compute capability " + std::to_string(properties.major) +
                               "." + std::to_string(properties.minor) +
                               ", older than the " + std::to_string(oldest / 10) + "." +
                               std::to_string(oldest % 10) +
                               " this build's kernels need (rebuild with -DCNNSTUDIO_CUDA_ARCHS=" +
                               std::to_string(capability) + ")");
        hardware.gpus.push_back(std::move(gpu));
    }
    if (hadDevice && cudaSetDevice(previousDevice) == cudaSuccess && previousState.known &&
        !previousState.active)
        cudaDeviceReset();
    cudaGetLastError();

    if (hardware.gpus.empty()) {
        hardware.gpuProblem = "no CUDA device could be queried";
    }
    for (const std::string& problem : problems)
        hardware.gpuProblem += (hardware.gpuProblem.empty() ? "" : "; ") + problem;
}

}  // namespace cnnstudio::kernels
