// Channel copy for concatenation and its backward: for every image n, channels
// [srcOffset, srcOffset + channels) of src (N, srcChannels, S) go to channels
// [dstOffset, dstOffset + channels) of dst (N, dstChannels, S). Each image's block of
// channels * S floats is contiguous in both tensors, so the copy is N rows of one length:
// grid-stride over N * channels * S, float4 when every offset and pointer is 16-byte aligned.
#include <cstdint>

#include "cuda/cuda_backend.h"
#include "cuda/geometry_checks.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

// Unit: float (Vectorised false) or float4; every length and offset is in units.
template <class Unit>
__global__ void copyRowsKernel(const Unit* __restrict__ src, int srcRowStride, int srcStart,
                               Unit* __restrict__ dst, int dstRowStride, int dstStart,
                               int rowLength, int rows) {
    const int count = rows * rowLength;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int row = i / rowLength, offset = i - row * rowLength;
        dst[row * dstRowStride + dstStart + offset] = src[row * srcRowStride + srcStart + offset];
    }
}

}  // namespace

void CudaBackend::copyChannels(int batch, int spatial, int channels, const float* src,
                               int srcChannels, int srcOffset, float* dst, int dstChannels,
                               int dstOffset) {
    constexpr const char* op = "copyChannels";
    requireOp(batch > 0 && spatial > 0 && channels > 0, op,
              "batch, spatial size and channel count must be positive");
    requireOp(srcOffset >= 0 && srcOffset + channels <= srcChannels, op,
              "source channels [" + std::to_string(srcOffset) + ", " +
                  std::to_string(srcOffset + channels) + ") exceed its " +
                  std::to_string(srcChannels) + " channels");
    requireOp(dstOffset >= 0 && dstOffset + channels <= dstChannels, op,
              "destination channels [" + std::to_string(dstOffset) + ", " +
                  std::to_string(dstOffset + channels) + ") exceed its " +
                  std::to_string(dstChannels) + " channels");
    requireIndexable(std::int64_t(batch) * srcChannels * spatial, op, "the source");
    requireIndexable(std::int64_t(batch) * dstChannels * spatial, op, "the destination");
    requirePointer(src, op, "src");
    requirePointer(dst, op, "dst");
    activateDevice();
    const int sms = deviceProperties().multiProcessorCount;
    const bool vectorised = spatial % 4 == 0 &&
                            (reinterpret_cast<std::uintptr_t>(src) & 15u) == 0 &&
                            (reinterpret_cast<std::uintptr_t>(dst) & 15u) == 0;
    if (vectorised) {
        const int unitSpatial = spatial / 4;
        launchKernel("copy channels", copyRowsKernel<float4>,
                     gridStrideBlocks(std::size_t(batch) * channels * unitSpatial, 256, sms), 256,
                     stream(), reinterpret_cast<const float4*>(src), srcChannels * unitSpatial,
                     srcOffset * unitSpatial, reinterpret_cast<float4*>(dst),
                     dstChannels * unitSpatial, dstOffset * unitSpatial, channels * unitSpatial,
                     batch);
    } else {
        launchKernel("copy channels", copyRowsKernel<float>,
                     gridStrideBlocks(std::size_t(batch) * channels * spatial, 256, sms), 256,
                     stream(), src, srcChannels * spatial, srcOffset * spatial, dst,
                     dstChannels * spatial, dstOffset * spatial, channels * spatial, batch);
    }
}

}  // namespace cnnstudio::kernels
