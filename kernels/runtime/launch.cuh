// One place that launches kernels: every launch goes through launchKernel (or
// launchDependentKernel), which checks it (bad grid or block size, no kernel image for this GPU)
// at the launch site. Only CUDA sources include this.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

#include "runtime/cuda_check.h"

namespace cnnstudio::kernels {

// Throws Error naming `kernelName` and its grid when a launch was rejected.
inline void throwIfLaunchFailed(cudaError_t status, const char* kernelName, dim3 grid, dim3 block) {
    if (status != cudaSuccess)
        throw Error(std::string("launch of kernel '") + kernelName + "' failed: " +
                        cudaGetErrorString(status),
                    "grid (" + std::to_string(grid.x) + "," + std::to_string(grid.y) + "," +
                        std::to_string(grid.z) + "), block " + std::to_string(block.x),
                    "the GPU may be too old for this build (sm_90 or newer is needed)");
}

// Launches kernel<<<grid, block, sharedBytes, stream>>>(args...) and throws Error naming
// `kernelName` when the launch is rejected. Errors during execution surface at the next
// synchronising call. sharedBytes is the kernel's dynamic shared memory (extern __shared__).
template <typename... Params, typename... Args>
void launchKernelWithShared(const char* kernelName, void (*kernel)(Params...), dim3 grid,
                            dim3 block, std::size_t sharedBytes, cudaStream_t stream,
                            Args... args) {
    kernel<<<grid, block, sharedBytes, stream>>>(Params(args)...);
    throwIfLaunchFailed(cudaGetLastError(), kernelName, grid, block);
}

// The same without dynamic shared memory.
template <typename... Params, typename... Args>
void launchKernel(const char* kernelName, void (*kernel)(Params...), dim3 grid, dim3 block,
                  cudaStream_t stream, Args... args) {
    launchKernelWithShared(kernelName, kernel, grid, block, 0, stream, args...);
}

// Launches `kernel` as a programmatic dependent launch (Hopper): its blocks may become resident
// while the last blocks of the kernel before it in `stream` still run, so that the launch and
// the ramp of one kernel hide behind the tail of the other; a captured graph keeps the edge.
// The kernel must begin with startAfterPriorGrid(). Checked as launchKernelWithShared.
// Used where a chain of our kernels is the critical path (the batch norm's, the input block's):
// fer-cnn's step gained 0.5% on cudnn bf16 and 1.2% on cuda bf16; making the transposes,
// conversions, dense helpers, loss and SGD dependent too lost 0.7% on cudnn bf16
// (docs/logs/2026-12-04-dependent-launch).
template <typename... Params, typename... Args>
void launchDependentKernelWithShared(const char* kernelName, void (*kernel)(Params...), dim3 grid,
                                     dim3 block, std::size_t sharedBytes, cudaStream_t stream,
                                     Args... args) {
    cudaLaunchAttribute early{};
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = sharedBytes;
    config.stream = stream;
    config.attrs = &early;
    config.numAttrs = 1;
    throwIfLaunchFailed(cudaLaunchKernelEx(&config, kernel, Params(args)...), kernelName, grid,
                        block);
}

// The same without dynamic shared memory.
template <typename... Params, typename... Args>
void launchDependentKernel(const char* kernelName, void (*kernel)(Params...), dim3 grid,
                           dim3 block, cudaStream_t stream, Args... args) {
    launchDependentKernelWithShared(kernelName, kernel, grid, block, 0, stream, args...);
}

// The first statement of a kernel launched by launchDependentKernel: waits until the kernel
// before it has finished and its writes are visible (nothing before this may touch memory),
// then lets the next dependent kernel's blocks start as this one's retire. In a kernel launched
// the ordinary way it returns at once.
__device__ __forceinline__ void startAfterPriorGrid() {
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
}

// Blocks for a grid-stride loop over `count` items: enough to fill the GPU a few times over,
// never more than the items need.
inline unsigned gridStrideBlocks(std::size_t count, unsigned threadsPerBlock, int multiprocessors) {
    std::size_t needed = (count + threadsPerBlock - 1) / threadsPerBlock;
    std::size_t enough = std::size_t(multiprocessors) * 8;
    std::size_t blocks = needed < enough ? needed : enough;
    return unsigned(blocks > 0 ? blocks : 1);
}

// Blocks of `threadsPerBlock` threads that `kernel` keeps resident on the whole GPU at once (at
// least one a multiprocessor): a grid of this size runs in one wave.
template <typename... Params>
unsigned residentBlocks(void (*kernel)(Params...), unsigned threadsPerBlock, int multiprocessors) {
    int perMultiprocessor = 0;
    CNNSTUDIO_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perMultiprocessor, kernel, int(threadsPerBlock), 0));
    return unsigned(perMultiprocessor > 1 ? perMultiprocessor : 1) * unsigned(multiprocessors);
}

}  // namespace cnnstudio::kernels
