// Channel copy, the building block of concatenation (forward) and its split (backward):
//   src (batch, srcChannels, spatial), channels [srcOffset, srcOffset + channels)
//   -> dst (batch, dstChannels, spatial), channels [dstOffset, dstOffset + channels)
// Other channels of dst are left as they are.
#include <algorithm>

#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {

void CpuRefBackend::doCopyChannels(int batch, int spatial, int channels, const float* src,
                                   int srcChannels, int srcOffset, float* dst, int dstChannels,
                                   int dstOffset) {
    const std::int64_t block = std::int64_t(channels) * spatial;  // contiguous in both tensors
    for (int n = 0; n < batch; ++n) {
        const float* from = src + (std::int64_t(n) * srcChannels + srcOffset) * spatial;
        float* to = dst + (std::int64_t(n) * dstChannels + dstOffset) * spatial;
        std::copy(from, from + block, to);
    }
}

}  // namespace cnnstudio::cpu_ref
