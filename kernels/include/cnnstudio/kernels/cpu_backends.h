// The CPU backends (kernels/cpu_ref, kernels/cpu) as the backend registry sees them.
#pragma once

#include <memory>

#include "cnnstudio/backend.h"

namespace cnnstudio {

std::unique_ptr<Backend> createCpuRefBackend(const BackendOptions& options);  // cpu_ref/
std::unique_ptr<Backend> createCpuBackend(const BackendOptions& options);     // cpu/

}  // namespace cnnstudio
