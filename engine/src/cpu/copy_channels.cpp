// Concat support: copies `channels` channels of every image from src (batch, srcChannels,
// spatial) starting at srcOffset to dst (batch, dstChannels, spatial) starting at dstOffset.
// Per image the channels are one contiguous run of channels * spatial floats.
#include <cstring>

#include "cnnstudio/error.h"
#include "cpu/cpu_backend.h"
#include "cpu/geometry_checks.h"

namespace cnnstudio::cpu {

void CpuBackend::copyChannels(int batch, int spatial, int channels, const float* src,
                              int srcChannels, int srcOffset, float* dst, int dstChannels,
                              int dstOffset) {
    const char* op = "copyChannels";
    requirePositive(batch, "batch", op);
    requirePositive(spatial, "spatial size", op);
    requirePositive(channels, "channels", op);
    requirePointer(src, "src", op);
    requirePointer(dst, "dst", op);
    if (srcOffset < 0 || std::int64_t(srcOffset) + channels > srcChannels)
        throw Error("channels [" + std::to_string(srcOffset) + ", " +
                        std::to_string(std::int64_t(srcOffset) + channels) +
                        ") lie outside the source's " + std::to_string(srcChannels),
                    opWhere(op), "check the concat offsets");
    if (dstOffset < 0 || std::int64_t(dstOffset) + channels > dstChannels)
        throw Error("channels [" + std::to_string(dstOffset) + ", " +
                        std::to_string(std::int64_t(dstOffset) + channels) +
                        ") lie outside the destination's " + std::to_string(dstChannels),
                    opWhere(op), "check the concat offsets");
    const std::size_t runFloats = std::size_t(channels) * std::size_t(spatial);
    OmpThreadScope threads(threads_);
    const bool parallel = std::int64_t(runFloats) * batch >= parallelThreshold;
#pragma omp parallel for schedule(static) if (parallel)
    for (int image = 0; image < batch; ++image)
        std::memcpy(dst + (std::size_t(image) * dstChannels + dstOffset) * spatial,
                    src + (std::size_t(image) * srcChannels + srcOffset) * spatial,
                    runFloats * sizeof(float));
}

}  // namespace cnnstudio::cpu
