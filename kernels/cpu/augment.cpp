// Batch augmentation in place (backend.h, ImageAugmentation): images (N, C, H, W), one
// ImageAugmentation per image; warp (bilinear through the border), mix with the partner
// (cutmix's rectangle, mixup's blend), erase. The batch is copied first (into a buffer kept
// between calls) so that every image and partner is read un-augmented; then OpenMP threads take
// rows of output pixels (image, row), each pixel computed by augmentedPixel
// (ops/augment_sampling.h), the fp32 arithmetic the cuda kernel shares.
#include <algorithm>

#include "cnnstudio/op_checks.h"
#include "cnnstudio/ops/augment_sampling.h"
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

void CpuBackend::doAugmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                                 float* images) {
    ops::checkAugmentations(g, augmentations, opLabel("augmentImages"));
    augmentSource_.assign(images, images + g.count());
    const float* source = augmentSource_.data();
    const std::int64_t planeSize = std::int64_t(g.height) * g.width;
    const std::int64_t imageSize = planeSize * g.channels;
    const std::int64_t rows = std::int64_t(g.batch) * g.height;
    OmpThreadScope threads(threads_);
#pragma omp parallel for schedule(static) if (g.count() >= parallelThreshold)
    for (std::int64_t row = 0; row < rows; ++row) {
        const int i = int(row / g.height), y = int(row % g.height);
        const ImageAugmentation& a = augmentations[i];
        const ImageAugmentation* partner = a.partner >= 0 ? &augmentations[a.partner] : nullptr;
        for (int c = 0; c < g.channels; ++c) {
            const float* self = source + i * imageSize + c * planeSize;
            const float* other = partner ? source + a.partner * imageSize + c * planeSize : self;
            auto readSelf = [&](int py, int px) { return self[py * g.width + px]; };
            auto readPartner = [&](int py, int px) { return other[py * g.width + px]; };
            float* out = images + i * imageSize + c * planeSize + std::int64_t(y) * g.width;
            for (int x = 0; x < g.width; ++x)
                out[x] = augmentedPixel(a, partner, readSelf, readPartner, y, x, g.height, g.width,
                                        std::uint32_t(c * planeSize + y * g.width + x));
        }
    }
}

}  // namespace cnnstudio::cpu
