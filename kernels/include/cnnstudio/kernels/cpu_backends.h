// The CPU backends (kernels/cpu_ref, kernels/cpu) as the backend registry sees them.
#pragma once

#include <memory>

#include "cnnstudio/backend.h"

namespace cnnstudio {

std::unique_ptr<Backend> createCpuRefBackend(const BackendOptions& options);  // cpu_ref/
std::unique_ptr<Backend> createCpuBackend(const BackendOptions& options);     // cpu/

// Empty when the cpu backend computes in `precision` on this machine, otherwise why not: fp32
// always; bf16 where the CPU has bf16 instructions (AVX512-BF16 or AMX), on which oneDNN runs
// bf16 convolutions fast (without them it would emulate them, slower than fp32); tf32 nowhere.
std::string cpuPrecisionUnavailableReason(Precision precision);  // cpu/

}  // namespace cnnstudio
