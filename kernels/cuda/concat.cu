// Channel copy for concatenation and its backward: for every image n, channels
// [srcOffset, srcOffset + channels) of src go to channels [dstOffset, dstOffset + channels) of
// dst. Elements are activations, fp32 or bf16, in the layout Backend::activationFormat says:
//   NCHW           src (N, srcChannels, S), dst (N, dstChannels, S): each image's block of
//                  channels * S elements is contiguous, so the copy is N rows of channels * S
//   channels-last  src (N, S, srcChannels), dst (N, S, dstChannels), N * S rows of
//                  `channels` elements: with row = n S + s, for c < channels,
//                  dst[row * dstChannels + dstOffset + c] = src[row * srcChannels + srcOffset + c]
// Either way a strided copy of rows: grid-stride over rows * rowLength, in 16-byte units when
// every row stride, start and length is a whole number of them and both pointers are 16-byte
// aligned, otherwise element by element (the copy moves bits: no conversion).
#include <cstdint>
#include <string>

#include "cuda/activation_storage.cuh"
#include "cuda/cuda_backend.h"
#include "cuda/index_limits.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

// Unit: one element (float, __nv_bfloat16) or a 16-byte int4; every length and offset is in
// units. rows * rowLength and every index fit in int (requireIndexable bounds the tensors).
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

// A strided row copy, in elements of Element.
struct RowCopy {
    int srcRowStride, srcStart, dstRowStride, dstStart, rowLength, rows;
};

template <class Element>
void launchRowCopy(cudaStream_t stream, int multiprocessors, const Element* src, Element* dst,
                   const RowCopy& c) {
    constexpr int kUnit = kPerAccess16<Element>;
    const bool vectorised = c.srcRowStride % kUnit == 0 && c.srcStart % kUnit == 0 &&
                            c.dstRowStride % kUnit == 0 && c.dstStart % kUnit == 0 &&
                            c.rowLength % kUnit == 0 && isAligned(src, 16) && isAligned(dst, 16);
    if (vectorised) {
        launchKernel("copy channels", copyRowsKernel<int4>,
                     gridStrideBlocks(std::size_t(c.rows) * (c.rowLength / kUnit), 256,
                                      multiprocessors),
                     256, stream, reinterpret_cast<const int4*>(src), c.srcRowStride / kUnit,
                     c.srcStart / kUnit, reinterpret_cast<int4*>(dst), c.dstRowStride / kUnit,
                     c.dstStart / kUnit, c.rowLength / kUnit, c.rows);
    } else {
        launchKernel("copy channels", copyRowsKernel<Element>,
                     gridStrideBlocks(std::size_t(c.rows) * c.rowLength, 256, multiprocessors),
                     256, stream, src, c.srcRowStride, c.srcStart, dst, c.dstRowStride,
                     c.dstStart, c.rowLength, c.rows);
    }
}

}  // namespace

void CudaBackend::doCopyChannels(int batch, int spatial, int channels, const float* src,
                                 int srcChannels, int srcOffset, float* dst, int dstChannels,
                                 int dstOffset) {
    const OpLabel op = opLabel("copyChannels");
    requireIndexable(std::int64_t(batch) * srcChannels * spatial, op, "the source");
    requireIndexable(std::int64_t(batch) * dstChannels * spatial, op, "the destination");
    activateDevice();
    const ActivationFormat format = activationFormat();
    const RowCopy copy =
        format.channelsLast
            ? RowCopy{srcChannels, srcOffset, dstChannels, dstOffset, channels, batch * spatial}
            : RowCopy{srcChannels * spatial, srcOffset * spatial, dstChannels * spatial,
                      dstOffset * spatial, channels * spatial, batch};
    const int sms = deviceProperties().multiProcessorCount;
    if (format.bf16)
        launchRowCopy(stream(), sms, reinterpret_cast<const __nv_bfloat16*>(src),
                      reinterpret_cast<__nv_bfloat16*>(dst), copy);
    else
        launchRowCopy(stream(), sms, src, dst, copy);
}

}  // namespace cnnstudio::kernels
