// CpuRefBackend's memory — host memory, 64-byte aligned so that vector loads never straddle a
// cache line in the fast CPU backend's tests either — and the factory. The ops live in the files
// named after them (conv.cpp, pool.cpp, ...).
#include "cpu_ref/cpu_ref_backend.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "cnnstudio/kernels/cpu_backends.h"
#include "cnnstudio/error.h"
#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio {
namespace cpu_ref {

namespace {
constexpr std::size_t kAlignmentBytes = 64;
}

std::string CpuRefBackend::description() const {
    return "plain C++ loops, 1 thread, fp32 (reference)";
}

void* CpuRefBackend::allocateBytes(std::size_t bytes) {
    // aligned_alloc needs a size that is a multiple of the alignment, and at least one block so
    // that a zero-byte request still returns a distinct pointer.
    const std::size_t rounded = bytes == 0 ? kAlignmentBytes
                                           : (bytes + kAlignmentBytes - 1) / kAlignmentBytes * kAlignmentBytes;
    if (rounded < bytes)
        throw Error("cannot allocate " + std::to_string(bytes) + " bytes", "cpu-ref allocateBytes",
                    "the request overflows the address space; check the tensor shape");
    void* memory = std::aligned_alloc(kAlignmentBytes, rounded);
    if (memory == nullptr)
        throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes",
                    "cpu-ref allocateBytes", "lower the batch size or use a smaller network");
    return memory;
}

void CpuRefBackend::freeBytes(void* pointer) noexcept { std::free(pointer); }

void CpuRefBackend::doUpload(void* destination, const void* hostSource, std::size_t bytes) {
    doCopy(destination, hostSource, bytes);
}

void CpuRefBackend::doDownload(void* hostDestination, const void* source, std::size_t bytes) {
    doCopy(hostDestination, source, bytes);
}

void CpuRefBackend::doCopy(void* destination, const void* source, std::size_t bytes) {
    std::memmove(destination, source, bytes);
}

}  // namespace cpu_ref

// cpu-ref runs one thread whatever options.threads says (it is the single-thread baseline) and
// only fp32 (it is the reference the other backends' precisions are measured against).
std::unique_ptr<Backend> createCpuRefBackend(const BackendOptions& options) {
    if (options.precision != Precision::Fp32)
        throw Error("cpu-ref computes in fp32 only, not " + toString(options.precision), "backend 'cpu-ref'",
                    "choose fp32, or a GPU backend for tf32 and bf16");
    return std::make_unique<cpu_ref::CpuRefBackend>();
}

}  // namespace cnnstudio
