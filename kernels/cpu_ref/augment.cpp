// Batch augmentation in place (backend.h, ImageAugmentation): images (N, C, H, W), one
// ImageAugmentation per image. For output pixel (y, x) of channel c of image i:
//   warp   w_i = bilinear sample of the original image i at (sx, sy) = m_i (x, y, 1), the taps
//          outside the image reading 0 (Constant) or the nearest edge pixel (Replicate)
//   mix    partner j: out = w_j inside the paste rectangle, else keep w_i + (1 - keep) w_j
//   erase  inside the erase rectangle: 0 or augmentNoise(noiseSeed, c H W + y W + x)
// Every image is read from a copy of the whole batch taken first, so partners are read un-mixed.
// Plain loops, one thread, coordinates and weights in double: the definition of correct.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cnnstudio/op_checks.h"
#include "cnnstudio/ops/augment_sampling.h"
#include "cpu_ref/cpu_ref_backend.h"

namespace cnnstudio::cpu_ref {
namespace {

// The bilinear sample of one plane at (sx, sy), as ImageAugmentation's step 1 defines it.
double samplePlane(const float* plane, int height, int width, AugmentBorder border, double sx,
                   double sy) {
    const double x0 = std::floor(sx), y0 = std::floor(sy);
    const double ax = sx - x0, ay = sy - y0;
    auto tap = [&](double yTap, double xTap) -> double {
        if (border == AugmentBorder::Replicate) {
            yTap = std::min(std::max(yTap, 0.0), double(height - 1));
            xTap = std::min(std::max(xTap, 0.0), double(width - 1));
        } else if (yTap < 0 || yTap >= height || xTap < 0 || xTap >= width) {
            return 0.0;
        }
        return plane[std::int64_t(yTap) * width + std::int64_t(xTap)];
    };
    return (1 - ay) * ((1 - ax) * tap(y0, x0) + ax * tap(y0, x0 + 1)) +
           ay * ((1 - ax) * tap(y0 + 1, x0) + ax * tap(y0 + 1, x0 + 1));
}

double warpedPixel(const ImageAugmentation& a, const float* plane, int height, int width, int y,
                   int x) {
    const float* m = a.sourceFromOutput;
    return samplePlane(plane, height, width, a.border, double(m[0]) * x + double(m[1]) * y + m[2],
                       double(m[3]) * x + double(m[4]) * y + m[5]);
}

}  // namespace

void CpuRefBackend::doAugmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                                    float* images) {
    ops::checkAugmentations(g, augmentations, opLabel("augmentImages"));
    const std::int64_t planeSize = std::int64_t(g.height) * g.width;
    const std::int64_t imageSize = planeSize * g.channels;
    const std::vector<float> original(images, images + g.count());
    for (int i = 0; i < g.batch; ++i) {
        const ImageAugmentation& a = augmentations[i];
        for (int c = 0; c < g.channels; ++c) {
            const float* self = original.data() + i * imageSize + c * planeSize;
            const float* partner =
                a.partner >= 0 ? original.data() + a.partner * imageSize + c * planeSize : nullptr;
            float* out = images + i * imageSize + c * planeSize;
            for (int y = 0; y < g.height; ++y)
                for (int x = 0; x < g.width; ++x) {
                    double value;
                    if (insideRectangle(y, x, a.eraseTop, a.eraseLeft, a.eraseHeight, a.eraseWidth)) {
                        const auto pixel = std::uint32_t(c * planeSize + y * g.width + x);
                        value = a.eraseFill == EraseFill::Noise ? augmentNoise(a.noiseSeed, pixel) : 0.0;
                    } else if (partner == nullptr) {
                        value = warpedPixel(a, self, g.height, g.width, y, x);
                    } else {
                        const double other =
                            warpedPixel(augmentations[a.partner], partner, g.height, g.width, y, x);
                        value = insideRectangle(y, x, a.pasteTop, a.pasteLeft, a.pasteHeight, a.pasteWidth)
                                    ? other
                                    : a.mixKeep * warpedPixel(a, self, g.height, g.width, y, x) +
                                          (1.0 - a.mixKeep) * other;
                    }
                    out[y * g.width + x] = float(value);
                }
        }
    }
}

}  // namespace cnnstudio::cpu_ref
