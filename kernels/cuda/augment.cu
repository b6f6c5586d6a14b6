// Batch augmentation in place (backend.h, ImageAugmentation) as one kernel per batch:
//   images (N, C, H, W) as an activation tensor (fp32 NCHW, or bf16 channels-last (N, H, W, C)
//   when Backend::activationFormat says so), augmentations (N) in device memory.
//   For output pixel (y, x) of image i and each channel c:
//     warp   w_i = bilinear sample of the original image i at m_i (x, y, 1) through the border
//     mix    partner j: w_j inside the paste rectangle, else keep w_i + (1 - keep) w_j
//     erase  inside the erase rectangle: 0 or augmentNoise(noiseSeed, c H W + y W + x)
// The pixel arithmetic is augmentedPixel (ops/augment_sampling.h), shared with the cpu backend.
// The batch is first copied to workspace memory (one device-to-device copy) so that every image
// and every partner is read un-augmented whatever order the blocks run in. One thread per output
// pixel position (i, y, x), looping over channels: the transform is loaded once per pixel and the
// channels of a channels-last pixel sit side by side. At batch 256 x 48 x 48 (2.4 MB of fp32)
// the kernel is memory-bound on a few MB of traffic: microseconds on an H200
// (cnnstudio-bench --augment measures it). A partner outside [0, N) (the CPU backends refuse it)
// makes the image NaN rather than read out of bounds.
#include <cstdint>

#include "cnnstudio/ops/augment_sampling.h"
#include "cuda/activation_storage.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "runtime/cuda_check.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

constexpr unsigned kAugmentThreads = 256;

// Element (i, c, y, x) of an activation tensor in either layout.
struct ActivationIndex {
    int channels, height, width;
    bool channelsLast;
    __device__ __forceinline__ std::int32_t operator()(int i, int c, int y, int x) const {
        return channelsLast ? ((i * height + y) * width + x) * channels + c
                            : ((i * channels + c) * height + y) * width + x;
    }
};

template <class T>
__global__ void __launch_bounds__(kAugmentThreads)
augmentImagesKernel(int batch, ActivationIndex index, const ImageAugmentation* __restrict__ augmentations,
                    const T* __restrict__ source, T* __restrict__ images) {
    const int height = index.height, width = index.width;
    const std::int32_t pixels = batch * height * width;
    const std::int32_t stride = std::int32_t(gridDim.x) * blockDim.x;
    for (std::int32_t p = std::int32_t(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels; p += stride) {
        const int i = p / (height * width), y = (p / width) % height, x = p % width;
        const ImageAugmentation a = augmentations[i];
        const bool badPartner = a.partner >= batch;
        const ImageAugmentation* partner =
            a.partner >= 0 && !badPartner ? &augmentations[a.partner] : nullptr;
        for (int c = 0; c < index.channels; ++c) {
            auto readSelf = [&](int py, int px) { return toFloat(source[index(i, c, py, px)]); };
            auto readPartner = [&](int py, int px) { return toFloat(source[index(a.partner, c, py, px)]); };
            const float value =
                badPartner ? NAN
                           : augmentedPixel(a, partner, readSelf, readPartner, y, x, height, width,
                                            std::uint32_t((c * height + y) * width + x));
            images[index(i, c, y, x)] = fromFloat<T>(value);
        }
    }
}

}  // namespace

void CudaBackend::doAugmentImages(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                                  float* images) {
    requireIndexable(g.count(), opLabel("augmentImages"), "the images");
    activateDevice();
    const std::size_t bytes = activationBytes(std::size_t(g.count()));
    void* source = workspace(bytes);
    CNNSTUDIO_CUDA_CHECK(cudaMemcpyAsync(source, images, bytes, cudaMemcpyDeviceToDevice, stream()));
    const ActivationFormat format = activationFormat();
    const ActivationIndex index{g.channels, g.height, g.width, format.channelsLast};
    const std::size_t pixels = std::size_t(g.batch) * g.height * g.width;
    const unsigned blocks = gridStrideBlocks(pixels, kAugmentThreads, deviceProperties().multiProcessorCount);
    if (format.bf16)
        launchKernel("augment images", augmentImagesKernel<__nv_bfloat16>, blocks, kAugmentThreads,
                     stream(), g.batch, index, augmentations,
                     static_cast<const __nv_bfloat16*>(source), reinterpret_cast<__nv_bfloat16*>(images));
    else
        launchKernel("augment images", augmentImagesKernel<float>, blocks, kAugmentThreads, stream(),
                     g.batch, index, augmentations, static_cast<const float*>(source), images);
}

}  // namespace cnnstudio::kernels
