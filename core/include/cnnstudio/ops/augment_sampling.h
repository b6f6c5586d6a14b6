// The per-pixel pieces of Backend::augmentImages (backend.h, ImageAugmentation) in fp32, shared
// by the cpu and cuda backends so that they sample, mix and erase alike; cpu-ref computes the
// same in double with its own loops (kernels/cpu_ref/augment.cpp), the definition of correct.
#pragma once

#include <cmath>
#include <cstdint>

#include "cnnstudio/backend.h"
#include "cnnstudio/ops/dropout_hash.h"  // mixBits, CNNSTUDIO_HOST_DEVICE

namespace cnnstudio {

// Half the width of the erasing noise's interval: uniform on [-a, a) has variance a^2 / 3 = 1.
constexpr float kAugmentNoiseHalfWidth = 1.7320508075688772f;

// The erasing noise of pixel `pixel` (its NCHW index within the image, c * H * W + y * W + x)
// of an image whose ImageAugmentation::noiseSeed is `seed`: uniform in [-sqrt(3), sqrt(3)).
CNNSTUDIO_HOST_DEVICE inline float augmentNoise(std::uint32_t seed, std::uint32_t pixel) {
    const std::uint64_t bits = mixBits((std::uint64_t(seed) << 32) ^ mixBits(pixel));
    const float unit = float(bits >> 40) * (1.0f / 16777216.0f);  // 24 bits -> [0, 1)
    return (2.0f * unit - 1.0f) * kAugmentNoiseHalfWidth;
}

// True when (y, x) lies in [top, top + height) x [left, left + width).
CNNSTUDIO_HOST_DEVICE inline bool insideRectangle(int y, int x, std::int32_t top, std::int32_t left,
                                                  std::int32_t height, std::int32_t width) {
    return y >= top && y < top + height && x >= left && x < left + width;
}

// Bilinear sample at (sx, sy) of one plane, read(y, x) giving the pixel at an in-range position.
// Taps outside the plane read 0 (Constant) or the nearest edge pixel (Replicate). Coordinates
// are clamped to [-2, size + 1] first: that changes no result (every tap is outside, or at the
// edge, either way) and keeps the integer conversion in range.
template <class Read>
CNNSTUDIO_HOST_DEVICE inline float sampleBilinear(const Read& read, float sx, float sy, int height,
                                                  int width, AugmentBorder border) {
    sx = fminf(fmaxf(sx, -2.0f), float(width) + 1.0f);
    sy = fminf(fmaxf(sy, -2.0f), float(height) + 1.0f);
    const float x0f = floorf(sx), y0f = floorf(sy);
    const float ax = sx - x0f, ay = sy - y0f;
    const int x0 = int(x0f), y0 = int(y0f);
    auto tap = [&](int y, int x) -> float {
        if (border == AugmentBorder::Replicate) {
            y = y < 0 ? 0 : (y >= height ? height - 1 : y);
            x = x < 0 ? 0 : (x >= width ? width - 1 : x);
            return read(y, x);
        }
        return (y < 0 || y >= height || x < 0 || x >= width) ? 0.0f : read(y, x);
    };
    const float top = (1.0f - ax) * tap(y0, x0) + ax * tap(y0, x0 + 1);
    const float bottom = (1.0f - ax) * tap(y0 + 1, x0) + ax * tap(y0 + 1, x0 + 1);
    return (1.0f - ay) * top + ay * bottom;
}

// Output pixel (y, x) of one channel of image a (steps 1 to 3 of ImageAugmentation).
// readSelf(y, x) and readPartner(y, x) read that channel of the un-augmented image and of its
// partner; `pixel` is c * H * W + y * W + x, for the noise.
template <class ReadSelf, class ReadPartner>
CNNSTUDIO_HOST_DEVICE inline float augmentedPixel(const ImageAugmentation& a,
                                                  const ImageAugmentation* partner,
                                                  const ReadSelf& readSelf,
                                                  const ReadPartner& readPartner, int y, int x,
                                                  int height, int width, std::uint32_t pixel) {
    if (insideRectangle(y, x, a.eraseTop, a.eraseLeft, a.eraseHeight, a.eraseWidth))
        return a.eraseFill == EraseFill::Noise ? augmentNoise(a.noiseSeed, pixel) : 0.0f;
    auto warped = [&](const ImageAugmentation& t, const auto& read) {
        const float* m = t.sourceFromOutput;
        const float fx = float(x), fy = float(y);
        return sampleBilinear(read, m[0] * fx + m[1] * fy + m[2], m[3] * fx + m[4] * fy + m[5],
                              height, width, t.border);
    };
    if (partner == nullptr) return warped(a, readSelf);
    const float other = warped(*partner, readPartner);
    if (insideRectangle(y, x, a.pasteTop, a.pasteLeft, a.pasteHeight, a.pasteWidth)) return other;
    if (a.mixKeep == 1.0f) return warped(a, readSelf);
    return a.mixKeep * warped(a, readSelf) + (1.0f - a.mixKeep) * other;
}

}  // namespace cnnstudio
