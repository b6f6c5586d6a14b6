// Window arithmetic shared by the implicit-GEMM convolutions (conv.cu on fp32 NCHW,
// tensor_core_conv.cu on bf16 channels-last): packed window positions in the per-block tables,
// the input index a window position reads and the backward data pass as a forward convolution.
#pragma once

#include "cnnstudio/backend.h"

namespace cnnstudio::kernels {

// Window positions and tap coordinates travel as two signed 16-bit halves of one int (one
// shared-memory word per table entry). Image sizes, kernels and padding up to
// kMaxPackedExtent keep every window position inside 16 bits (checked on the host).
constexpr int kMaxPackedExtent = 8192;
__host__ __device__ __forceinline__ int packPair(int high, int low) {
    return int((unsigned(high) << 16) | (unsigned(low) & 0xffffu));
}
__device__ __forceinline__ int pairHigh(int packed) { return packed >> 16; }
__device__ __forceinline__ int pairLow(int packed) { return int(short(packed & 0xffff)); }

// Window position of GEMM rows or columns beyond the matrix: far enough outside any image that
// every bounds test fails (also after adding a tap offset below kMaxPackedExtent), so they load
// zeros without a separate validity flag.
constexpr int kOutside = -32768;

// Input row (or column) index that a window position reads, for an input dilated by
// `dilation` (1 in the forward pass): false when the position is padding or falls between two
// dilated input elements.
__device__ __forceinline__ bool inputIndex(int position, int dilation, int extent, int& index) {
    if (position < 0) return false;
    if (dilation != 1) {
        if (position % dilation != 0) return false;
        position /= dilation;
    }
    index = position;
    return position < extent;
}

// dx = conv(dy dilated by the stride, flipped and transposed w), stride 1: the geometry of that
// forward convolution (its input is dy, dilated by g's stride when the kernels read it).
inline ConvGeometry backwardDataGeometry(const ConvGeometry& g) {
    ConvGeometry t = g;
    t.inChannels = g.outChannels;
    t.inHeight = g.outHeight;
    t.inWidth = g.outWidth;
    t.outChannels = g.inChannels;
    t.outHeight = g.inHeight;
    t.outWidth = g.inWidth;
    t.strideHeight = 1;
    t.strideWidth = 1;
    t.padHeight = g.kernelHeight - 1 - g.padHeight;
    t.padWidth = g.kernelWidth - 1 - g.padWidth;
    return t;
}

}  // namespace cnnstudio::kernels
