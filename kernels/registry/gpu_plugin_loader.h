// The GPU wing as a runtime-loaded plugin: the registry loads libcnngpu from
// <folder of libcnnbackends>/cnnstudio/plugins/ (the same layout in the build tree and in an
// install), or from $CNNSTUDIO_PLUGIN_DIR when that is set. A plugin that is missing or whose
// CUDA libraries cannot be loaded is a reason the GPU backends are unavailable, never a crash.
#pragma once

#include <string>

#include "cnnstudio/kernels/gpu_backends.h"

namespace cnnstudio {

struct LoadedGpuPlugin {
    const kernels::GpuPlugin* plugin = nullptr;  // null when it could not be loaded
    std::string problem;                         // why not, in words for users
};

// Loaded on first use and kept until the process ends: backends and transports it made may
// live as long as that.
const LoadedGpuPlugin& loadGpuPlugin();

}  // namespace cnnstudio
