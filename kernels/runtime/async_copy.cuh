// Asynchronous global -> shared memory copies (cp.async, sm_80 and newer): the copy engine
// writes shared memory directly, so tiles in flight occupy no registers. Copies are grouped
// by commitAsyncCopies() and awaited with waitAsyncCopies<N>() (all but the newest N groups
// of this thread complete); a barrier then makes them visible to the other threads.
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

}  // namespace cnnstudio::kernels
