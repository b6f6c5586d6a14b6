// Batch augmentation in place (backend.h, ImageAugmentation): images (N, C, H, W) an activation
// tensor (fp32 NCHW, or bf16 channels-last (N, H, W, C) in bf16 precision), one
// ImageAugmentation per image; warp (bilinear through the border), mix with the partner
// (cutmix's rectangle, mixup's blend), erase. The batch is copied first (into a buffer kept
// between calls) so that every image and partner is read un-augmented; then OpenMP threads take
// rows of output pixels (image, row), each pixel computed by augmentedPixel
// (ops/augment_sampling.h) in fp32, the arithmetic the cuda kernel shares, from values read
// widened and stored rounded to nearest.
#include <algorithm>
#include <cstring>

#include "cnnstudio/op_checks.h"
#include "cnnstudio/ops/augment_sampling.h"
#include "cpu/activation_storage.h"
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

// Element (i, c, y, x) of an activation tensor in either layout.
struct ActivationIndex {
    int channels, height, width;
    bool channelsLast;
    std::int64_t operator()(int i, int c, int y, int x) const {
        return channelsLast ? ((std::int64_t(i) * height + y) * width + x) * channels + c
                            : ((std::int64_t(i) * channels + c) * height + y) * width + x;
    }
};

template <class T>
void augmentLoop(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                 const ActivationIndex& index, const T* source, T* images) {
    const std::int64_t planeSize = std::int64_t(g.height) * g.width;
    const std::int64_t rows = std::int64_t(g.batch) * g.height;
#pragma omp parallel for schedule(static) if (g.count() >= parallelThreshold)
    for (std::int64_t row = 0; row < rows; ++row) {
        const int i = int(row / g.height), y = int(row % g.height);
        const ImageAugmentation& a = augmentations[i];
        const ImageAugmentation* partner = a.partner >= 0 ? &augmentations[a.partner] : nullptr;
        const int other = partner ? a.partner : i;
        for (int c = 0; c < g.channels; ++c) {
            auto readSelf = [&](int py, int px) { return toFloat(source[index(i, c, py, px)]); };
            auto readPartner = [&](int py, int px) { return toFloat(source[index(other, c, py, px)]); };
            for (int x = 0; x < g.width; ++x)
                images[index(i, c, y, x)] = fromFloat<T>(
                    augmentedPixel(a, partner, readSelf, readPartner, y, x, g.height, g.width,
                                   std::uint32_t(c * planeSize + y * g.width + x)));
        }
    }
}

}  // namespace

void CpuBackend::doAugmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                                 float* images) {
    ops::checkAugmentations(g, augmentations, opLabel("augmentImages"));
    const std::size_t bytes = activationBytes(std::size_t(g.count()));
    augmentSource_.resize((bytes + sizeof(float) - 1) / sizeof(float));
    std::memcpy(augmentSource_.data(), images, bytes);
    const ActivationIndex index{g.channels, g.height, g.width, activationFormat().channelsLast};
    OmpThreadScope threads(threads_);
    withStorage(storesBf16(), [&]<class T>(T*) {
        augmentLoop(g, augmentations, index, stored<T>(augmentSource_.data()), stored<T>(images));
    });
}

}  // namespace cnnstudio::cpu
