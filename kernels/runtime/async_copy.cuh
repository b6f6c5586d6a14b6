// Asynchronous global -> shared memory copies (cp.async, sm_80 and newer): the copy engine
// writes shared memory directly, so tiles in flight occupy no registers. Copies are grouped
// by commitAsyncCopies() and awaited with waitAsyncCopies<N>() (all but the newest N groups
// of this thread complete); a barrier then makes them visible to the other threads.
// pipelineTiles runs the GEMMs' main loops (cuda/gemm.cuh, cuda/gemm_bf16.cuh) on them.
#pragma once

#include <cuda_runtime.h>

namespace cnnstudio::kernels {

// Copies one float from global to shared memory, or writes 0 to shared memory (reading
// nothing) when !valid. `global` must point into an allocation even when !valid.
__device__ __forceinline__ void copyAsyncOrZero(float* shared, const float* global, bool valid) {
    const unsigned sharedAddress = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sharedAddress),
                 "l"(global), "r"(valid ? 4 : 0)
                 : "memory");
}

// Copies the first `validFloats` (0 to 4) of four floats from global to shared memory and
// zeros the rest. Both addresses must be 16-byte aligned, `global` pointing into an allocation
// even when validFloats is 0.
__device__ __forceinline__ void copyAsync16OrZero(float* shared, const float* global, int validFloats) {
    const unsigned sharedAddress = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sharedAddress),
                 "l"(global), "r"(4 * validFloats)
                 : "memory");
}

// Copies 16 bytes (eight bf16, say) from global to shared memory, or writes 16 zero bytes
// (reading nothing) when !valid. Both addresses 16-byte aligned; `global` must point into an
// allocation even when !valid.
__device__ __forceinline__ void copyAsync16BytesOrZero(void* shared, const void* global, bool valid) {
    const unsigned sharedAddress = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sharedAddress),
                 "l"(global), "r"(valid ? 16 : 0)
                 : "memory");
}

__device__ __forceinline__ void commitAsyncCopies() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int NewestGroupsStillPending>
__device__ __forceinline__ void waitAsyncCopies() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(NewestGroupsStillPending) : "memory");
}

// The multistage pipeline of a GEMM main loop over `tiles` K tiles in Stages shared-memory
// stages: issue(stage) issues one tile's copies into that stage (the loaders advance along K
// themselves), multiply(stage) multiplies the tile in it. Copies run Stages - 1 tiles ahead of
// the multiplication. `tiles` must be the same for every thread of the block (the barriers).
template <int Stages, class IssueTile, class MultiplyTile>
__device__ __forceinline__ void pipelineTiles(int tiles, IssueTile&& issue, MultiplyTile&& multiply) {
    static_assert(Stages >= 2, "a pipeline needs a stage to fill while another is read");
    // Every step commits one copy group, empty or not, so that "all but the newest Stages - 2
    // groups are complete" always means "tile t has landed".
#pragma unroll
    for (int stage = 0; stage < Stages - 1; ++stage) {
        if (stage < tiles) issue(stage);
        commitAsyncCopies();
    }
    for (int t = 0; t < tiles; ++t) {
        waitAsyncCopies<Stages - 2>();
        // After the barrier every thread's copies of tile t are visible, and every thread has
        // finished multiplying tile t - 1, whose stage the copies issued next overwrite.
        __syncthreads();
        if (t + Stages - 1 < tiles) issue((t + Stages - 1) % Stages);
        commitAsyncCopies();
        multiply(t % Stages);
    }
    // Leave no copy group pending at exit (the last ones are empty).
    waitAsyncCopies<0>();
}

}  // namespace cnnstudio::kernels
