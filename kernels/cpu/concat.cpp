// Concat support: copies `channels` channels of every image from src to dst, from channel
// srcOffset of src to channel dstOffset of dst. Elements are activations, moved as stored:
//   fp32 NCHW      src (batch, srcChannels, spatial), dst (batch, dstChannels, spatial): per image
//                  the channels are one contiguous run of channels * spatial floats
//   bf16 NHWC      src (batch, spatial, srcChannels), dst (batch, spatial, dstChannels): per
//                  pixel a run of `channels` bf16 values
#include <cstring>

#include "cpu/activation_storage.h"
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

// rows runs of `run` elements of T, from src + row * srcStride + srcStart to the same in dst.
template <class T>
void copyRuns(const T* src, std::int64_t srcStride, std::int64_t srcStart, T* dst,
              std::int64_t dstStride, std::int64_t dstStart, std::int64_t run, std::int64_t rows) {
    const bool parallel = run * rows >= parallelThreshold;
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t row = 0; row < rows; ++row)
        std::memcpy(dst + row * dstStride + dstStart, src + row * srcStride + srcStart,
                    std::size_t(run) * sizeof(T));
}

}  // namespace

void CpuBackend::doCopyChannels(int batch, int spatial, int channels, const float* src,
                                int srcChannels, int srcOffset, float* dst, int dstChannels,
                                int dstOffset) {
    OmpThreadScope threads(threads_);
    if (storesBf16()) {
        copyRuns(stored<Bf16>(src), srcChannels, srcOffset, stored<Bf16>(dst), dstChannels,
                 dstOffset, channels, std::int64_t(batch) * spatial);
        return;
    }
    const std::int64_t s = spatial;
    copyRuns(src, srcChannels * s, srcOffset * s, dst, dstChannels * s, dstOffset * s,
             channels * s, batch);
}

}  // namespace cnnstudio::cpu
