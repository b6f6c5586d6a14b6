// Layout and precision conversions for channels-last bf16 activations (see layout.h):
//   transposeImages             in (N, rows, cols) In -> out (N, cols, rows) Out
//   addChannelBiasChannelsLast  y (P, C) bf16 += bias (C) fp32
//   channelSumsChannelsLast     dy (P, C) bf16 -> sums (C) fp32, column sums
//
// transposeImages: three kernels by shape. Values pass through fp32 registers: bf16 -> fp32 is
// exact, fp32 -> bf16 rounds to nearest even.
//   - an image of 256 to 12288 elements (the bf16 cudnn backend's filters, KCRS <-> KRSC, where
//     one side is a 3x3 kernel's 9 taps, and the flatten of a small feature map, 36 pixels by
//     256 channels): one block per image reads it in order into shared memory and writes it in
//     output order, so both global passes are contiguous whatever the sides, in 16-byte packs
//     and pairs where the shape and alignment allow. Tiles would idle 23 of every 32 rows on the
//     9 taps: Nsight Compute timed fer-cnn's 17 such calls a step at 4 to 15 us each
//     (docs/logs/2026-12-03-verify).
//   - larger images: the classic shared-memory transpose. A block of 32x8 threads moves one
//     32x32 tile: it reads 32 rows of 32 consecutive columns (coalesced), stores them in a padded
//     fp32 tile (33 columns, so the transposed read hits 32 different banks), and writes 32 rows
//     of 32 consecutive output elements (coalesced).
//   - a side under 8 long (RGB images: rows = 3) in a larger image: most of a tile would be idle,
//     so a direct kernel walks the output linearly instead (coalesced writes; the reads gather
//     from at most 7 streams, each consecutive).
//
// addChannelBiasChannelsLast: grid-stride over P*C in packs of 8, 2 or 1 bf16 (16, 4 or 2
// bytes: the widest that C and the pointer's alignment allow). The channel of a pack advances
// by the grid stride modulo C each iteration, so no 64-bit division runs per element.
//
// channelSumsChannelsLast: two kernels, no atomics, so the sums do not depend on scheduling.
//   1. a grid of (splits, channel blocks): each block sums one range of pixels for up to 32
//      channel lanes (pairs of channels when C is even): lanes of a warp read consecutive
//      channels of one pixel row (coalesced), the block's pixel lanes are added in order
//      -> partials[split][c]
//   2. one thread per channel over 32 split lanes: each lane adds every 32nd split, then the
//      lanes are added in order -> sums[c]
// The split count depends on P only, so the workspace size is known before the launch.
#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/activation_storage.cuh"
#include "cnnstudio/error.h"
#include "cuda/layout.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

constexpr int kTile = 32;
constexpr int kTileRows = 8;            // threads per tile column: each does kTile / kTileRows
constexpr int kDirectTransposeSide = 8;  // below this rows or cols, the direct kernel
constexpr int kWholeImageThreads = 256;
constexpr int kWholeImageMinElements = kWholeImageThreads;  // smaller: most threads would idle
constexpr int kWholeImageMaxElements = 12288;  // padded: 48 KiB of fp32 in shared memory
constexpr int kWholeImageBlocksPerSm = 8;
// Elements of T in the 16-byte packs the whole-image kernel reads where it can.
template <class T>
constexpr int kPackOf = 16 / int(sizeof(T));
constexpr unsigned kMaxGridY = 65535;

// ---- transposeImages ------------------------------------------------------------------------

template <class In, class Out>
__global__ void __launch_bounds__(kTile * kTileRows)
transposeTilesKernel(const In* __restrict__ in, Out* __restrict__ out, int images, int rows,
                     int cols, int colTiles) {
    __shared__ float tile[kTile][kTile + 1];
    const int tileRow = int(blockIdx.x) / colTiles, tileCol = int(blockIdx.x) - tileRow * colTiles;
    const int firstRow = tileRow * kTile, firstCol = tileCol * kTile;
    const std::int64_t imageSize = std::int64_t(rows) * cols;
    const int readCol = firstCol + int(threadIdx.x);   // in's column this thread reads
    const int writeRow = firstRow + int(threadIdx.x);  // out's column (in's row) it writes
    for (int image = int(blockIdx.y); image < images; image += int(gridDim.y)) {
        const In* source = in + image * imageSize;
        Out* destination = out + image * imageSize;
        for (int j = threadIdx.y; j < kTile; j += kTileRows) {
            const int row = firstRow + j;
            if (row < rows && readCol < cols)
                tile[j][threadIdx.x] = toFloat(source[std::int64_t(row) * cols + readCol]);
        }
        __syncthreads();
        for (int j = threadIdx.y; j < kTile; j += kTileRows) {
            const int col = firstCol + j;
            if (col < cols && writeRow < rows)
                destination[std::int64_t(col) * rows + writeRow] =
                    fromFloat<Out>(tile[threadIdx.x][j]);
        }
        __syncthreads();  // the next image overwrites the tile
    }
}

// One block per image (grid-stride over images): in's image is read in order into shared memory
// as [rows][pitch] fp32, then out's is written in order. pitch = cols rounded up to odd, so that
// the transposed reads of a warp (consecutive rows of one column, pitch floats apart) fall in
// different banks when rows >= 32; with fewer rows a warp spans several columns and a few reads
// share a bank, which these small images can afford.
// With Packs (an image of whole 16-byte packs of In, an even number of rows, both pointers
// aligned to that), in moves in 16-byte packs and out in pairs of one column's rows. There are
// only a block or two per multiprocessor (fer-cnn's flatten: 256 images of 36 x 256 bf16), so a
// thread's trips to memory are what the kernel waits on: a pack of 8 bf16 is one trip, not 8.
template <class In, class Out, bool Packs>
__global__ void __launch_bounds__(kWholeImageThreads)
transposeWholeImagesKernel(const In* __restrict__ in, Out* __restrict__ out, int images, int rows,
                           int cols) {
    extern __shared__ float image[];  // [rows][pitch]
    constexpr int kPack = kPackOf<In>;
    const int pitch = cols | 1, size = rows * cols;
    for (int n = int(blockIdx.x); n < images; n += int(gridDim.x)) {
        const In* source = in + std::int64_t(n) * size;
        Out* destination = out + std::int64_t(n) * size;
        if constexpr (Packs) {
#pragma unroll 4
            for (int p = int(threadIdx.x); p < size / kPack; p += kWholeImageThreads) {
                const auto pack = Packed<In, kPack>::load(source + p * kPack);
                int row = p * kPack / cols, col = p * kPack - row * cols;
#pragma unroll
                for (int j = 0; j < kPack; ++j) {
                    image[row * pitch + col] = pack.get(j);
                    if (++col == cols) {
                        col = 0;
                        ++row;
                    }
                }
            }
        } else {
#pragma unroll 4
            for (int i = int(threadIdx.x); i < size; i += kWholeImageThreads) {
                const int row = i / cols;
                image[row * pitch + (i - row * cols)] = toFloat(source[i]);
            }
        }
        __syncthreads();
        if constexpr (Packs) {
#pragma unroll 4
            for (int i = 2 * int(threadIdx.x); i < size; i += 2 * kWholeImageThreads) {
                const int col = i / rows, row = i - col * rows;  // rows is even: row + 1 < rows
                Packed<Out, 2> pair;
                pair.set(0, image[row * pitch + col]);
                pair.set(1, image[(row + 1) * pitch + col]);
                pair.store(destination + i);
            }
        } else {
#pragma unroll 4
            for (int i = int(threadIdx.x); i < size; i += kWholeImageThreads) {
                const int col = i / rows;
                destination[i] = fromFloat<Out>(image[(i - col * rows) * pitch + col]);
            }
        }
        __syncthreads();  // the next image overwrites the shared copy
    }
}

// One thread per output element of an image, in output order: out[c][r] = in[r][c].
// Unsigned indices: the image has under 2^31 elements (checked by the launcher) and the grid
// stride is at most 2^20, so i + stride cannot wrap.
template <class In, class Out>
__global__ void transposeDirectKernel(const In* __restrict__ in, Out* __restrict__ out,
                                      int images, int rows, int cols) {
    const unsigned imageSize = unsigned(rows) * unsigned(cols);
    const unsigned stride = gridDim.x * blockDim.x;
    for (int image = int(blockIdx.y); image < images; image += int(gridDim.y)) {
        const In* source = in + std::int64_t(image) * imageSize;
        Out* destination = out + std::int64_t(image) * imageSize;
        for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < imageSize; i += stride) {
            const unsigned col = i / unsigned(rows), row = i - col * unsigned(rows);
            destination[i] = fromFloat<Out>(toFloat(source[std::int64_t(row) * cols + col]));
        }
    }
}

// ---- addChannelBiasChannelsLast --------------------------------------------------------------

// Pack elements of N bf16; packs = P * C / N, packChannels = C / N.
template <int N>
__global__ void addChannelBiasKernel(__nv_bfloat16* __restrict__ y, const float* __restrict__ bias,
                                     std::size_t packs, int packChannels) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= packs) return;
    int channelPack = int(i % unsigned(packChannels));
    const int channelStep = int(stride % unsigned(packChannels));
    for (; i < packs; i += stride) {
        using Pack = Packed<__nv_bfloat16, N>;
        Pack v = Pack::load(y + i * N);
#pragma unroll
        for (int k = 0; k < N; ++k) v.set(k, v.get(k) + __ldg(bias + channelPack * N + k));
        v.store(y + i * N);
        channelPack += channelStep;
        if (channelPack >= packChannels) channelPack -= packChannels;
    }
}

// ---- channelSumsChannelsLast -----------------------------------------------------------------

constexpr int kSumThreads = 256;
constexpr std::int64_t kMinPixelsPerSplit = 64;
constexpr std::int64_t kMaxSplits = 1024;
constexpr int kFinalizeSplitLanes = 32;

struct SumSplits {
    std::int64_t pixelsPerSplit;
    int splits;
};

// At most kMaxSplits ranges of at least kMinPixelsPerSplit pixels; depends on P only.
SumSplits sumSplits(std::int64_t pixels) {
    std::int64_t perSplit = (pixels + kMaxSplits - 1) / kMaxSplits;
    if (perSplit < kMinPixelsPerSplit) perSplit = kMinPixelsPerSplit;
    return {perSplit, int((pixels + perSplit - 1) / perSplit)};
}

// Block: kSumThreads threads as (pixel lanes, channelLanes); channelLanes is a power of two,
// at most 32, covering the block's channel packs of N channels each.
template <int N>
__global__ void __launch_bounds__(kSumThreads)
channelPartialSumsChannelsLastKernel(const __nv_bfloat16* __restrict__ dy, std::int64_t pixels,
                                     int channels, int channelLanes, std::int64_t pixelsPerSplit,
                                     float* __restrict__ partials) {
    __shared__ float laneSums[kSumThreads * N];  // [pixel lane][channel lane][k]
    const int lane = int(threadIdx.x) % channelLanes, pixelLane = int(threadIdx.x) / channelLanes;
    const int pixelLanes = int(blockDim.x) / channelLanes;
    const int pack = int(blockIdx.y) * channelLanes + lane;
    const bool active = pack < channels / N;
    const std::int64_t begin = std::int64_t(blockIdx.x) * pixelsPerSplit;
    const std::int64_t end = begin + pixelsPerSplit < pixels ? begin + pixelsPerSplit : pixels;
    float sum[N] = {};
    if (active) {
        for (std::int64_t p = begin + pixelLane; p < end; p += pixelLanes) {
            const auto v = Packed<__nv_bfloat16, N>::load(dy + p * channels + pack * N);
#pragma unroll
            for (int k = 0; k < N; ++k) sum[k] += v.get(k);
        }
    }
#pragma unroll
    for (int k = 0; k < N; ++k) laneSums[threadIdx.x * N + k] = sum[k];
    __syncthreads();
    if (pixelLane == 0 && active) {
        float total[N] = {};
        for (int other = 0; other < pixelLanes; ++other)
#pragma unroll
            for (int k = 0; k < N; ++k) total[k] += laneSums[(other * channelLanes + lane) * N + k];
#pragma unroll
        for (int k = 0; k < N; ++k)
            partials[std::int64_t(blockIdx.x) * channels + pack * N + k] = total[k];
    }
}

// Block (32 channels, kFinalizeSplitLanes split lanes): sums[c] = sum over splits of
// partials[split][c], in a fixed order.
__global__ void __launch_bounds__(32 * kFinalizeSplitLanes)
finalizeChannelSumsKernel(const float* __restrict__ partials, int splits, int channels,
                          float* __restrict__ sums) {
    __shared__ float laneSums[kFinalizeSplitLanes][33];
    const int channel = int(blockIdx.x) * 32 + int(threadIdx.x);
    float sum = 0.0f;
    if (channel < channels)
        for (int split = threadIdx.y; split < splits; split += kFinalizeSplitLanes)
            sum += partials[std::int64_t(split) * channels + channel];
    laneSums[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && channel < channels) {
        float total = 0.0f;
        for (int lane = 0; lane < kFinalizeSplitLanes; ++lane) total += laneSums[lane][threadIdx.x];
        sums[channel] = total;
    }
}

// These helpers run inside ops whose pointers and shapes Backend has checked; what they check
// themselves are their kernels' limits, labelled like an op's errors ("cuda transposeImages").
[[noreturn]] void failLayout(const char* helper, const std::string& what) {
    throw Error(what, std::string("cuda ") + helper,
                "the activations' shape does not fit the layout kernels; this is a bug in the caller");
}

int multiprocessorCount() {
    int device = 0, count = 0;
    CNNSTUDIO_CUDA_CHECK(cudaGetDevice(&device));
    CNNSTUDIO_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
}

}  // namespace

template <typename In, typename Out>
void transposeImages(const In* in, Out* out, int images, int rows, int cols, cudaStream_t stream) {
    if (images <= 0 || rows <= 0 || cols <= 0)
        failLayout("transposeImages", "images (" + std::to_string(images) + "), rows (" +
                                          std::to_string(rows) + ") and cols (" +
                                          std::to_string(cols) + ") must be positive");
    if (std::int64_t(rows) * cols >= (std::int64_t(1) << 31))
        failLayout("transposeImages", "one image of " + std::to_string(rows) + " x " +
                                          std::to_string(cols) + " elements exceeds 2^31");
    const std::int64_t padded = std::int64_t(rows) * (cols | 1);  // the shared copy's floats
    if (std::int64_t(rows) * cols >= kWholeImageMinElements && padded <= kWholeImageMaxElements) {
        const int blocks = std::min(images, kWholeImageBlocksPerSm * multiprocessorCount());
        const std::size_t sharedBytes = std::size_t(padded) * sizeof(float);
        const bool packs = std::int64_t(rows) * cols % kPackOf<In> == 0 && rows % 2 == 0 &&
                           isAligned(in, 16) && isAligned(out, 2 * sizeof(Out));
        launchKernelWithShared("transpose images (whole)",
                               packs ? transposeWholeImagesKernel<In, Out, true>
                                     : transposeWholeImagesKernel<In, Out, false>,
                               dim3(unsigned(blocks)), dim3(kWholeImageThreads), sharedBytes,
                               stream, in, out, images, rows, cols);
        return;
    }
    const unsigned gridY = unsigned(images) < kMaxGridY ? unsigned(images) : kMaxGridY;
    if (rows < kDirectTransposeSide || cols < kDirectTransposeSide) {
        const std::size_t blocksNeeded = (std::size_t(rows) * std::size_t(cols) + 255) / 256;
        const unsigned blocksPerImage = unsigned(blocksNeeded < 4096 ? blocksNeeded : 4096);
        launchKernel("transpose images (direct)", transposeDirectKernel<In, Out>,
                     dim3(blocksPerImage, gridY), dim3(256), stream, in, out, images, rows, cols);
        return;
    }
    const int rowTiles = (rows + kTile - 1) / kTile, colTiles = (cols + kTile - 1) / kTile;
    launchKernel("transpose images", transposeTilesKernel<In, Out>,
                 dim3(unsigned(rowTiles) * unsigned(colTiles), gridY), dim3(kTile, kTileRows),
                 stream, in, out, images, rows, cols, colTiles);
}

template void transposeImages<float, __nv_bfloat16>(const float*, __nv_bfloat16*, int, int, int,
                                                    cudaStream_t);
template void transposeImages<__nv_bfloat16, float>(const __nv_bfloat16*, float*, int, int, int,
                                                    cudaStream_t);
template void transposeImages<__nv_bfloat16, __nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*,
                                                            int, int, int, cudaStream_t);

void addChannelBiasChannelsLast(__nv_bfloat16* y, const float* bias, std::int64_t pixels,
                                int channels, cudaStream_t stream) {
    if (pixels < 0 || channels <= 0)
        failLayout("addChannelBiasChannelsLast",
                   "pixels (" + std::to_string(pixels) + ") must not be negative and channels (" +
                       std::to_string(channels) + ") must be positive");
    if (pixels == 0) return;
    const std::size_t count = std::size_t(pixels) * std::size_t(channels);
    const int sms = multiprocessorCount();
    if (channels % 8 == 0 && isAligned(y, 16))
        launchKernel("add channel bias (channels-last)", addChannelBiasKernel<8>,
                     gridStrideBlocks(count / 8, 256, sms), 256, stream, y, bias, count / 8,
                     channels / 8);
    else if (channels % 2 == 0 && isAligned(y, 4))
        launchKernel("add channel bias (channels-last)", addChannelBiasKernel<2>,
                     gridStrideBlocks(count / 2, 256, sms), 256, stream, y, bias, count / 2,
                     channels / 2);
    else
        launchKernel("add channel bias (channels-last)", addChannelBiasKernel<1>,
                     gridStrideBlocks(count, 256, sms), 256, stream, y, bias, count, channels);
}

std::size_t channelSumsChannelsLastWorkspaceBytes(std::int64_t pixels, int channels) {
    if (pixels <= 0 || channels <= 0) return 0;
    return std::size_t(sumSplits(pixels).splits) * std::size_t(channels) * sizeof(float);
}

void channelSumsChannelsLast(const __nv_bfloat16* dy, float* sums, std::int64_t pixels,
                             int channels, void* workspace, cudaStream_t stream) {
    if (pixels < 0 || channels <= 0)
        failLayout("channelSumsChannelsLast",
                   "pixels (" + std::to_string(pixels) + ") must not be negative and channels (" +
                       std::to_string(channels) + ") must be positive");
    if (pixels == 0) {  // empty sums
        CNNSTUDIO_CUDA_CHECK(
            cudaMemsetAsync(sums, 0, std::size_t(channels) * sizeof(float), stream));
        return;
    }
    const SumSplits split = sumSplits(pixels);
    float* partials = static_cast<float*>(workspace);
    const bool pairs = channels % 2 == 0 && isAligned(dy, 4);
    const int packChannels = pairs ? channels / 2 : channels;
    int channelLanes = 1;
    while (channelLanes < packChannels && channelLanes < 32) channelLanes *= 2;
    const int channelBlocks = (packChannels + channelLanes - 1) / channelLanes;
    if (unsigned(channelBlocks) > kMaxGridY)
        failLayout("channelSumsChannelsLast",
                   std::to_string(channels) + " channels are more than the kernel's grid covers");
    const dim3 grid(unsigned(split.splits), unsigned(channelBlocks));
    if (pairs)
        launchKernel("channel partial sums (channels-last)",
                     channelPartialSumsChannelsLastKernel<2>, grid, kSumThreads, stream, dy,
                     pixels, channels, channelLanes, split.pixelsPerSplit, partials);
    else
        launchKernel("channel partial sums (channels-last)",
                     channelPartialSumsChannelsLastKernel<1>, grid, kSumThreads, stream, dy,
                     pixels, channels, channelLanes, split.pixelsPerSplit, partials);
    launchKernel("channel sums (channels-last)", finalizeChannelSumsKernel,
                 dim3(unsigned((channels + 31) / 32)), dim3(32, kFinalizeSplitLanes), stream,
                 partials, split.splits, channels, sums);
}

}  // namespace cnnstudio::kernels
