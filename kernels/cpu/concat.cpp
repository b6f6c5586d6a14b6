// Concat support: copies `channels` channels of every image from src (batch, srcChannels,
// spatial) starting at srcOffset to dst (batch, dstChannels, spatial) starting at dstOffset.
// Per image the channels are one contiguous run of channels * spatial floats.
#include <cstring>

#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

void CpuBackend::doCopyChannels(int batch, int spatial, int channels, const float* src,
                                int srcChannels, int srcOffset, float* dst, int dstChannels,
                                int dstOffset) {
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
