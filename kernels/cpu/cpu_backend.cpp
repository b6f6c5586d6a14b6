// The `cpu` backend's construction, memory and the factory. The ops live in the files of
// this folder named after them (conv.cpp, pool.cpp, batchnorm.cpp, ...).
#include "cpu/cpu_backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cnnstudio/kernels/cpu_backends.h"
#include "cnnstudio/error.h"

namespace cnnstudio {

namespace cpu {

namespace {

int resolveThreads(int requested) {
    if (requested < 0 || requested > kMaxCpuThreads)
        throw Error("thread count " + std::to_string(requested) + " is out of range 0.." +
                        std::to_string(kMaxCpuThreads),
                    "cpu backend", "use 0 for every core or a positive count up to " + std::to_string(kMaxCpuThreads));
    return requested == 0 ? omp_get_num_procs() : requested;
}

// Copies run on every thread when large: one core cannot saturate memory bandwidth.
void parallelCopy(void* destination, const void* source, std::size_t bytes) {
    constexpr std::size_t chunkBytes = std::size_t(1) << 20;
    if (bytes < 4 * chunkBytes) {
        std::memcpy(destination, source, bytes);
        return;
    }
    auto* to = static_cast<char*>(destination);
    const auto* from = static_cast<const char*>(source);
    std::int64_t chunks = std::int64_t((bytes + chunkBytes - 1) / chunkBytes);
#pragma omp parallel for schedule(static)
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
        std::size_t begin = std::size_t(chunk) * chunkBytes;
        std::size_t length = std::min(chunkBytes, bytes - begin);
        std::memcpy(to + begin, from + begin, length);
    }
}

}  // namespace

std::size_t ConvKeyHash::operator()(const ConvKey& key) const {
    const ConvGeometry& g = key.geometry;
    return hashFields({g.batch, g.inChannels, g.inHeight, g.inWidth, g.outChannels, g.outHeight,
                       g.outWidth, g.kernelHeight, g.kernelWidth, g.strideHeight, g.strideWidth,
                       g.padHeight, g.padWidth, g.groups, key.withBias});
}

std::size_t PoolKeyHash::operator()(const PoolGeometry& g) const {
    return hashFields({int(g.kind), g.batch, g.channels, g.inHeight, g.inWidth, g.outHeight,
                       g.outWidth, g.kernelHeight, g.kernelWidth, g.strideHeight, g.strideWidth,
                       g.padHeight, g.padWidth});
}

std::size_t DenseKeyHash::operator()(const DenseKey& key) const {
    const DenseGeometry& g = key.geometry;
    return hashFields({g.batch, g.inFeatures, g.outFeatures, key.withBias});
}

std::size_t ActivationKeyHash::operator()(const ActivationKey& key) const {
    return hashFields({int(key.kind), key.alphaBits, std::int64_t(key.count)});
}

CpuBackend::CpuBackend(const BackendOptions& options)
    : threads_(resolveThreads(options.threads)),
      precision_(options.precision),
      engine_(dnnl::engine::kind::cpu, 0),
      stream_(engine_) {
    if (std::string why = cpuPrecisionUnavailableReason(precision_); !why.empty())
        throw Error(why, "cpu backend", "choose fp32, or a GPU backend");
    attributes_.set_scratchpad_mode(dnnl::scratchpad_mode::user);
}

std::string CpuBackend::description() const {
    const dnnl_version_t* version = dnnl::version();
    return "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) +
           "." + std::to_string(version->patch) + ", " + std::to_string(threads_) +
           (threads_ == 1 ? " thread" : " threads");
}

void* CpuBackend::allocateBytes(std::size_t bytes) {
    // 64-byte alignment: whole cache lines and aligned AVX-512 loads for oneDNN.
    std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
    void* memory = std::aligned_alloc(64, rounded);
    if (!memory)
        throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes",
                    opLabel("allocateBytes").text(), "lower the batch size or use a smaller network");
    return memory;
}

void CpuBackend::freeBytes(void* pointer) noexcept { std::free(pointer); }

void CpuBackend::doUpload(void* destination, const void* hostSource, std::size_t bytes) {
    copy(destination, hostSource, bytes);
}

void CpuBackend::doDownload(void* hostDestination, const void* source, std::size_t bytes) {
    copy(hostDestination, source, bytes);
}

void CpuBackend::doCopy(void* destination, const void* source, std::size_t bytes) {
    OmpThreadScope threads(threads_);
    parallelCopy(destination, source, bytes);
}

void CpuBackend::synchronize() { stream_.wait(); }

}  // namespace cpu

std::string cpuPrecisionUnavailableReason(Precision precision) {
    switch (precision) {
        case Precision::Fp32: return {};
        case Precision::Tf32: return "tf32 is a GPU tensor-core mode; the cpu backend computes in fp32 or bf16";
        case Precision::Bf16: {
            const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
            const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
            if ((isa & bf16) == bf16) return {};
            return "the cpu backend's bf16 needs a CPU with bf16 instructions (AVX512-BF16 or AMX), "
                   "which this one lacks";
        }
    }
    return "unknown precision";
}

std::unique_ptr<Backend> createCpuBackend(const BackendOptions& options) {
    return std::make_unique<cpu::CpuBackend>(options);
}

}  // namespace cnnstudio
