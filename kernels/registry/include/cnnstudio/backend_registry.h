// The backends this build has and what this machine offers them. The application (app/, ui/)
// asks here and hands the engine what it needs: a Backend, the hardware to record in a run, and
// the transport between GPU ranks. The engine itself knows no backend by name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/device_reducer.h"
#include "cnnstudio/hardware.h"

namespace cnnstudio {

// Every backend this build knows of, available or not: "cpu-ref", "cpu", "cuda", "cudnn".
std::vector<std::string> knownBackends();
// Empty when `name` can run here; otherwise why not ("no CUDA device found", "the GPU backends
// need the CUDA 13 runtime, cuDNN 9 and NCCL: libcudart.so.13: cannot open shared object file…").
std::string backendUnavailableReason(const std::string& name);
std::vector<std::string> availableBackends();
// The precisions `name` trains in here: "fp32" everywhere, "bf16" on the GPU backends (cuda,
// cudnn) and on cpu where the CPU has bf16 instructions, "tf32" on cudnn only.
std::vector<std::string> backendPrecisions(const std::string& name);
bool backendTrainsIn(const std::string& name, const std::string& precision);
// Throws Error naming the backend and the precisions it has when it does not train in `precision`,
// before a run folder is made or a GPU touched.
void requirePrecisionOf(const std::string& name, const std::string& precision);
// Throws Error naming the backend and the reason when it cannot be created.
std::unique_ptr<Backend> createBackend(const std::string& name, const BackendOptions& options = {});

// GPUs (from the GPU plugin, when it loads), library versions and CPU cores. Never fails:
// without the plugin, its CUDA libraries, a driver or a GPU it lists zero GPUs and says why in
// gpuProblem.
HardwareInfo discoverHardware();

// The transport between GPU ranks of `backend` (NCCL), or null for a CPU backend or a build
// without the GPU backends.
std::unique_ptr<DeviceTransport> createDeviceTransport(const Backend& backend);

}  // namespace cnnstudio
