// Batch normalisation (+ ReLU) on bf16 channels-last activations (see batchnorm_channels_last.h):
//   x, y, dy, dx (P, C) bf16, channel fastest; gamma, beta, statistics, dgamma, dbeta (C) fp32
//   training forward   partial sums -> statistics -> y = relu?((x - mean) invStd gamma + beta)
//   inference forward  y = relu?((x - runningMean) rsqrt(runningVar + eps) gamma + beta)
//   backward           partial sums of dz, dz (x - mean) -> dgamma, dbeta -> dx
//   pooled chain       y = maxPool2x2(relu(...)): the training forward's statistics, then one
//                      pass over the windows that normalises, rectifies and pools; backward
//                      recomputes the ReLU's output from x to route dy, in the two passes above
//
// Thread layout, every kernel over (P, C): a block's 256 threads are (pixel lanes, pack lanes).
// A thread owns one pack of N channels (N = 8: one 16-byte vector, when C % 8 == 0 and the
// activations are 16-byte aligned; else N = 1) and steps over pixels, a run of pixels a step
// with their loads issued together. Consecutive threads read consecutive packs of a pixel row,
// so a warp's loads are contiguous; the pack's coefficients and sums stay in registers for the
// whole pass. grid.x covers the packs (packLanes = min(C / N, 256) per block), grid.y the pixels
// as a grid stride, so each pass of the GPU sweeps the tensor from its first pixels to its last.
//
// Statistics and gradient sums: per thread, fp32 over one step's run of pixels (4 or 8 terms: the
// rounding stays near 2^-24, far below bf16's 2^-8), then double, as batchnorm.cu's sums. Each
// block adds its pixel lanes in a fixed tree in shared memory and writes partials[split][c];
// the finish kernel adds the splits in a fixed order. No atomics: the bits depend on the
// geometry, the split count (from `multiprocessors`) and N only. The forward sums x - K with
// K = x[pixel 0][c], the backward dz (x - savedMean): sums of centred values, so that
// var = E[(x - K)^2] - E[x - K]^2 and dgamma do not cancel when |mean| >> std.
//
// The elementwise passes walk the pixels from the last to the first: the reduction pass just
// read the tensor from first to last, and its last pixels may still be in L2 (2-3% faster than
// walking forwards on the shape below).
//
// Measured on H200, 2026-12-02, fer-cnn's 256x48x48x64 (75.5 MB a tensor), against a 3.9 TB/s
// device-to-device copy: training forward with ReLU 73 us (3 tensor passes: 3.1 TB/s; the
// statistics pass 24 us at 3.1 TB/s, the normalisation 43 us at 3.5), inference 43 us
// (3.5 TB/s), backward with ReLU 146 us (7 passes: x, dy, y twice and dx; 3.6 TB/s), without
// 106 us (5 passes: 3.6 TB/s). Each finish kernel adds about 4 us. The pooled chain on the same
// tensor (bn1_2, profiled in cnnstudio-bench --report with its synchronisation): forward 73 us
// (2.25 tensor passes), backward 108 us (3.5 passes; 137 us while its kernels spilled registers).
// 2026-12-04 (docs/logs/2026-12-04-relu-gate, ncu at the GPU's clocks, one cudnn bf16 step): with
// the ReLU's gate recomputed from x (5 passes, where reading y made 7) and the elementwise passes
// in one wave, the unpooled batch norms bn2_1 and bn3_1 (37.7 and 18.9 MB a tensor) take 40 and
// 25 us forward, 61 and 39 us backward, against 49 and 33, 55 and 43 for cuDNN's persistent
// BN_ACTIVATION kernels; bn3_2's pooled backward went from 53 to 37 us.
//
// Every kernel here is a dependent launch (launchDependentKernel, runtime/launch.cuh): its blocks
// become resident as the kernel before it retires. With the input block's kernels too, fer-cnn's
// step ran 1.2% faster on cuda bf16 and 0.5% on cudnn bf16 (docs/logs/2026-12-04-dependent-launch).
#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "cuda/activation_storage.cuh"
#include "cuda/batchnorm_channels_last.h"
#include "runtime/launch.cuh"

namespace cnnstudio::kernels {
namespace {

using Bf16 = __nv_bfloat16;

constexpr int kThreads = 256;
// Pixels per thread and loop step, whose loads are in flight together and whose sums form one
// fp32 run: 8 packs (128 bytes) of the forward's one input, 4 of each of the backward's two (x
// and dy; 128 registers, no spill). The statistics pass ran 8% faster with 8 than with 4 (and 3
// blocks per multiprocessor); the backward with 4 ran the cudnn bf16 step 0.8% faster than with
// 2 (docs/logs/2026-12-04-relu-gate/waves), where it had to read y as well.
constexpr int kForwardRun = 8;
constexpr int kBackwardRun = 4;
// Windows per thread and loop step in the pooled chain's kernels: four packs of x each, and one
// of the pooled gradient in backward. Two windows' loads (ten packs) and the backward's sums and
// coefficients spilled past 128 registers, so backward takes one at a time.
constexpr int kForwardWindowRun = 2;
constexpr int kBackwardWindowRun = 1;
// The reduction kernels run one wave of this many blocks per multiprocessor; their launch bounds
// (128 registers) guarantee that they fit.
constexpr int kReduceBlocksPerMultiprocessor = 2;
constexpr int kMaxSplits = 512;
// At least this many pixels (or windows) a split on average: bn3_2's pooled backward (9216
// windows) had 144 splits at 64, one block on most of the 132 multiprocessors.
constexpr int kMinPixelsPerSplit = 16;
constexpr int kFinishLanes = 32;  // split lanes per channel in the finish kernels

// A thread's place in the (pixel lanes, pack lanes) block. Threads past pixelLanes * packLanes,
// and those of the last block beyond C / N packs, are idle.
struct Lane {
    int pack;        // its pack of channels pack * N .. pack * N + N - 1
    int pixelLane;   // its first pixel in each block step
    int pixelLanes;  // pixels per block step
    bool active;
};

__device__ __forceinline__ Lane laneOf(int packs, int packLanes) {
    const int packLane = int(threadIdx.x) % packLanes, pixelLane = int(threadIdx.x) / packLanes;
    const int pixelLanes = kThreads / packLanes;
    const int pack = int(blockIdx.x) * packLanes + packLane;
    return {pack, pixelLane, pixelLanes, pixelLane < pixelLanes && pack < packs};
}

// Adds the block's pixel lanes of (first[k], second[k]), each pack on its own, in a fixed tree
// (lane i takes lane i + half while the width halves), and writes the totals of the block's
// packs to partials[blockIdx.y][channel]. Called by every thread of the block.
template <int N>
__device__ __forceinline__ void writeBlockPartials(double (&first)[N], double (&second)[N],
                                                   const Lane& lane, int packLanes, int channels,
                                                   double2* __restrict__ partials) {
    __shared__ double laneSums[2 * N][kThreads];  // conflict-free: threads index the fast axis
#pragma unroll
    for (int k = 0; k < N; ++k) {
        laneSums[k][threadIdx.x] = first[k];
        laneSums[N + k][threadIdx.x] = second[k];
    }
    for (int width = lane.pixelLanes; width > 1;) {
        const int half = (width + 1) / 2;
        __syncthreads();  // lanes [half, width) were written in the previous step
        if (lane.active && lane.pixelLane + half < width) {
            const int partner = int(threadIdx.x) + half * packLanes;
#pragma unroll
            for (int k = 0; k < N; ++k) {
                first[k] += laneSums[k][partner];
                second[k] += laneSums[N + k][partner];
                laneSums[k][threadIdx.x] = first[k];
                laneSums[N + k][threadIdx.x] = second[k];
            }
        }
        width = half;
    }
    if (lane.active && lane.pixelLane == 0) {
        double2* out = partials + std::size_t(blockIdx.y) * channels + lane.pack * N;
#pragma unroll
        for (int k = 0; k < N; ++k) out[k] = double2{first[k], second[k]};
    }
}

// Block (32 channels, kFinishLanes split lanes): lane j adds splits j, j + kFinishLanes, ...,
// then the lanes are added in order. The total is valid in threadIdx.y == 0.
__device__ __forceinline__ double2 splitTotal(const double2* __restrict__ partials, int splits,
                                              int channels) {
    __shared__ double2 laneSums[kFinishLanes][32];
    const int channel = int(blockIdx.x) * 32 + int(threadIdx.x);
    double2 sum{0.0, 0.0};
    if (channel < channels)
        for (int split = int(threadIdx.y); split < splits; split += kFinishLanes) {
            const double2 part = partials[std::size_t(split) * channels + channel];
            sum.x += part.x;
            sum.y += part.y;
        }
    laneSums[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    double2 total{0.0, 0.0};
    if (threadIdx.y == 0)
        for (int lane = 0; lane < kFinishLanes; ++lane) {
            total.x += laneSums[lane][threadIdx.x].x;
            total.y += laneSums[lane][threadIdx.x].y;
        }
    return total;
}

// ---- training forward: statistics -----------------------------------------------------------

// partials[split][c] = (sum (x - K), sum (x - K)^2) over the split's pixels, K = x[0][c].
template <int N>
__global__ void __launch_bounds__(kThreads, kReduceBlocksPerMultiprocessor)
partialStatisticsKernel(const Bf16* __restrict__ x, int pixels, int channels, int packLanes,
                        double2* __restrict__ partials) {
    startAfterPriorGrid();
    using Pack = Packed<Bf16, N>;
    const Lane lane = laneOf(channels / N, packLanes);
    double sum[N] = {}, squares[N] = {};
    if (lane.active) {
        const Bf16* column = x + lane.pack * N;
        const Pack shiftPack = Pack::load(column);  // K: pixel 0, also read past the last pixel
        float shift[N];
#pragma unroll
        for (int k = 0; k < N; ++k) shift[k] = shiftPack.get(k);
        const int stride = int(gridDim.y) * lane.pixelLanes;
        for (int p = int(blockIdx.y) * lane.pixelLanes + lane.pixelLane; p < pixels;
             p += kForwardRun * stride) {
            Pack v[kForwardRun];
#pragma unroll
            for (int r = 0; r < kForwardRun; ++r)
                v[r] = p + r * stride < pixels ? Pack::load(column + (p + r * stride) * channels)
                                               : shiftPack;
            float runSum[N] = {}, runSquares[N] = {};
#pragma unroll
            for (int r = 0; r < kForwardRun; ++r)
#pragma unroll
                for (int k = 0; k < N; ++k) {
                    const float centred = v[r].get(k) - shift[k];
                    runSum[k] += centred;
                    runSquares[k] = fmaf(centred, centred, runSquares[k]);
                }
#pragma unroll
            for (int k = 0; k < N; ++k) {
                sum[k] += runSum[k];
                squares[k] += runSquares[k];
            }
        }
    }
    writeBlockPartials<N>(sum, squares, lane, packLanes, channels, partials);
}

// The batch statistics and the running-statistics update, from the shifted sums:
// mean = K + S1 / M, var = S2 / M - (S1 / M)^2 (the same as sum (x - mean)^2 / M).
__global__ void __launch_bounds__(32 * kFinishLanes)
statisticsKernel(const double2* __restrict__ partials, int splits, const Bf16* __restrict__ x,
                 int channels, double valuesPerChannel, float epsilon, float momentum,
                 float* __restrict__ runningMean, float* __restrict__ runningVar,
                 float* __restrict__ savedMean, float* __restrict__ savedInvStd) {
    startAfterPriorGrid();
    const double2 sums = splitTotal(partials, splits, channels);
    const int c = int(blockIdx.x) * 32 + int(threadIdx.x);
    if (threadIdx.y != 0 || c >= channels) return;
    const double shiftedMean = sums.x / valuesPerChannel;
    const double mean = double(__bfloat162float(x[c])) + shiftedMean;
    double variance = sums.y / valuesPerChannel - shiftedMean * shiftedMean;
    variance = variance > 0.0 ? variance : 0.0;  // rounding can leave a tiny negative
    savedMean[c] = float(mean);
    savedInvStd[c] = float(1.0 / sqrt(variance + double(epsilon)));
    const double unbiased = variance * valuesPerChannel / (valuesPerChannel - 1.0);
    runningMean[c] = float((1.0 - momentum) * runningMean[c] + momentum * mean);
    runningVar[c] = float((1.0 - momentum) * runningVar[c] + momentum * unbiased);
}

// ---- forward: normalisation -----------------------------------------------------------------

// y = (x - mean) * invStd * gamma + beta, then max(y, 0) when Relu: the training forward (mean,
// invStd: the batch's saved statistics) and inference (the running ones, invStd computed here
// when `invStdFromVariance`). y may be x: a thread loads a step's packs before storing them.
template <int N, bool Relu>
__global__ void __launch_bounds__(kThreads)
normalizeKernel(const Bf16* x, const float* __restrict__ gamma, const float* __restrict__ beta,
                const float* __restrict__ mean, const float* __restrict__ invStdOrVariance,
                bool invStdFromVariance, float epsilon, int pixels, int channels, int packLanes,
                Bf16* y) {
    startAfterPriorGrid();
    using Pack = Packed<Bf16, N>;
    const Lane lane = laneOf(channels / N, packLanes);
    if (!lane.active) return;
    const int first = lane.pack * N;
    float centre[N], scale[N], shift[N];
#pragma unroll
    for (int k = 0; k < N; ++k) {
        const float spread = __ldg(invStdOrVariance + first + k);
        const float invStd = invStdFromVariance ? rsqrtf(spread + epsilon) : spread;
        centre[k] = __ldg(mean + first + k);
        scale[k] = invStd * __ldg(gamma + first + k);
        shift[k] = __ldg(beta + first + k);
    }
    const int stride = int(gridDim.y) * lane.pixelLanes;
    // q counts pixels from the last one (see the file comment).
    for (int q = int(blockIdx.y) * lane.pixelLanes + lane.pixelLane; q < pixels;
         q += kForwardRun * stride) {
        Pack v[kForwardRun];
#pragma unroll
        for (int r = 0; r < kForwardRun; ++r)
            if (q + r * stride < pixels)
                v[r] = Pack::load(x + (pixels - 1 - q - r * stride) * channels + first);
#pragma unroll
        for (int r = 0; r < kForwardRun; ++r) {
            if (q + r * stride >= pixels) continue;
#pragma unroll
            for (int k = 0; k < N; ++k) {
                const float z = fmaf(v[r].get(k) - centre[k], scale[k], shift[k]);
                v[r].set(k, Relu ? (z > 0.0f ? z : 0.0f) : z);
            }
            v[r].store(y + (pixels - 1 - q - r * stride) * channels + first);
        }
    }
}

// ---- backward -------------------------------------------------------------------------------

// The normalisation's coefficients for one pack: z = (x - centre) * scale + shift.
template <int N>
struct PackCoefficients {
    float centre[N], scale[N], shift[N];

    __device__ __forceinline__ PackCoefficients(int first, const float* __restrict__ gamma,
                                                const float* __restrict__ beta,
                                                const float* __restrict__ mean,
                                                const float* __restrict__ invStd) {
#pragma unroll
        for (int k = 0; k < N; ++k) {
            centre[k] = __ldg(mean + first + k);
            scale[k] = __ldg(invStd + first + k) * __ldg(gamma + first + k);
            shift[k] = __ldg(beta + first + k);
        }
    }
    __device__ __forceinline__ float normalised(float x, int k) const {
        return fmaf(x - centre[k], scale[k], shift[k]);
    }
};

// The gradient reaching the batch norm's output: dz = dy, or through the ReLU dz = y > 0 ? dy : 0,
// where the fused forward stored y = bf16(max(z, 0)). z is recomputed from x, bit for bit as the
// forward's normalisation computed it, so that backward never reads y (two of seven tensor
// passes saved).
template <int N, bool Relu>
struct OutputGradient;

template <int N>
struct OutputGradient<N, false> {
    __device__ __forceinline__ OutputGradient(int, const float*, const float*, const float*,
                                              const float*) {}
    __device__ __forceinline__ float of(float dy, float, int) const { return dy; }
};

template <int N>
struct OutputGradient<N, true> {
    PackCoefficients<N> forward;

    __device__ __forceinline__ OutputGradient(int first, const float* __restrict__ gamma,
                                              const float* __restrict__ beta,
                                              const float* __restrict__ savedMean,
                                              const float* __restrict__ savedInvStd)
        : forward(first, gamma, beta, savedMean, savedInvStd) {}
    __device__ __forceinline__ float of(float dy, float x, int k) const {
        const float y = __bfloat162float(__float2bfloat16_rn(forward.normalised(x, k)));
        return y > 0.0f ? dy : 0.0f;
    }
};

// partials[split][c] = (sum dz, sum dz (x - savedMean)) over the split's pixels.
template <int N, bool Relu>
__global__ void __launch_bounds__(kThreads, kReduceBlocksPerMultiprocessor)
partialGradientSumsKernel(const Bf16* __restrict__ x, const Bf16* __restrict__ dy,
                          const float* __restrict__ gamma, const float* __restrict__ beta,
                          const float* __restrict__ savedMean,
                          const float* __restrict__ savedInvStd, int pixels, int channels,
                          int packLanes, double2* __restrict__ partials) {
    startAfterPriorGrid();
    using Pack = Packed<Bf16, N>;
    const Lane lane = laneOf(channels / N, packLanes);
    double dzSum[N] = {}, dzCentredSum[N] = {};
    if (lane.active) {
        const int first = lane.pack * N;
        float centre[N];
#pragma unroll
        for (int k = 0; k < N; ++k) centre[k] = __ldg(savedMean + first + k);
        const OutputGradient<N, Relu> gradient(first, gamma, beta, savedMean, savedInvStd);
        const int stride = int(gridDim.y) * lane.pixelLanes;
        for (int p = int(blockIdx.y) * lane.pixelLanes + lane.pixelLane; p < pixels;
             p += kBackwardRun * stride) {
            // Zeros past the last pixel: dz = 0 there.
            Pack xs[kBackwardRun] = {}, dys[kBackwardRun] = {};
#pragma unroll
            for (int r = 0; r < kBackwardRun; ++r) {
                if (p + r * stride >= pixels) continue;
                const int offset = (p + r * stride) * channels + first;
                xs[r] = Pack::load(x + offset);
                dys[r] = Pack::load(dy + offset);
            }
            float runSum[N] = {}, runCentred[N] = {};
#pragma unroll
            for (int r = 0; r < kBackwardRun; ++r)
#pragma unroll
                for (int k = 0; k < N; ++k) {
                    const float dz = gradient.of(dys[r].get(k), xs[r].get(k), k);
                    runSum[k] += dz;
                    runCentred[k] = fmaf(dz, xs[r].get(k) - centre[k], runCentred[k]);
                }
#pragma unroll
            for (int k = 0; k < N; ++k) {
                dzSum[k] += runSum[k];
                dzCentredSum[k] += runCentred[k];
            }
        }
    }
    writeBlockPartials<N>(dzSum, dzCentredSum, lane, packLanes, channels, partials);
}

// dbeta = sum dz, dgamma = sum dz xhat = savedInvStd * sum dz (x - savedMean).
__global__ void __launch_bounds__(32 * kFinishLanes)
parameterGradientsKernel(const double2* __restrict__ partials, int splits, int channels,
                         const float* __restrict__ savedInvStd, float* __restrict__ dgamma,
                         float* __restrict__ dbeta) {
    startAfterPriorGrid();
    const double2 sums = splitTotal(partials, splits, channels);
    const int c = int(blockIdx.x) * 32 + int(threadIdx.x);
    if (threadIdx.y != 0 || c >= channels) return;
    dbeta[c] = float(sums.x);
    dgamma[c] = float(double(savedInvStd[c]) * sums.y);
}

// dx = gamma invStd (dz - dbeta / M - xhat dgamma / M), as
// dx = gain dz + slope (x - mean) + offset for each channel of one pack; differentiates the
// normalisation line of the training forward through mean and variance.
template <int N>
struct InputGradientLine {
    float centre[N], gain[N], slope[N], offset[N];

    __device__ __forceinline__ InputGradientLine(int first, const float* __restrict__ gamma,
                                                 const float* __restrict__ savedMean,
                                                 const float* __restrict__ savedInvStd,
                                                 const float* __restrict__ dgamma,
                                                 const float* __restrict__ dbeta,
                                                 float valuesPerChannel) {
#pragma unroll
        for (int k = 0; k < N; ++k) {
            const int c = first + k;
            const float invStd = __ldg(savedInvStd + c);
            centre[k] = __ldg(savedMean + c);
            gain[k] = __ldg(gamma + c) * invStd;
            slope[k] = -gain[k] * invStd * (__ldg(dgamma + c) / valuesPerChannel);
            offset[k] = -gain[k] * (__ldg(dbeta + c) / valuesPerChannel);
        }
    }
    __device__ __forceinline__ float at(float dz, float x, int k) const {
        return fmaf(gain[k], dz, fmaf(slope[k], x - centre[k], offset[k]));
    }
};

// dx along InputGradientLine. dx may be dy: a thread loads a step's packs before storing them.
template <int N, bool Relu>
__global__ void __launch_bounds__(kThreads)
inputGradientKernel(const Bf16* x, const Bf16* dy, const float* __restrict__ gamma,
                    const float* __restrict__ beta, const float* __restrict__ savedMean,
                    const float* __restrict__ savedInvStd, const float* __restrict__ dgamma,
                    const float* __restrict__ dbeta, float valuesPerChannel, int pixels,
                    int channels, int packLanes, Bf16* dx) {
    startAfterPriorGrid();
    using Pack = Packed<Bf16, N>;
    const Lane lane = laneOf(channels / N, packLanes);
    if (!lane.active) return;
    const int first = lane.pack * N;
    const InputGradientLine<N> line(first, gamma, savedMean, savedInvStd, dgamma, dbeta,
                                    valuesPerChannel);
    const OutputGradient<N, Relu> gradient(first, gamma, beta, savedMean, savedInvStd);
    const int stride = int(gridDim.y) * lane.pixelLanes;
    // q counts pixels from the last one (see the file comment).
    for (int q = int(blockIdx.y) * lane.pixelLanes + lane.pixelLane; q < pixels;
         q += kBackwardRun * stride) {
        Pack xs[kBackwardRun], dys[kBackwardRun];
#pragma unroll
        for (int r = 0; r < kBackwardRun; ++r) {
            if (q + r * stride >= pixels) continue;
            const int index = (pixels - 1 - q - r * stride) * channels + first;
            xs[r] = Pack::load(x + index);
            dys[r] = Pack::load(dy + index);
        }
#pragma unroll
        for (int r = 0; r < kBackwardRun; ++r) {
            if (q + r * stride >= pixels) continue;
#pragma unroll
            for (int k = 0; k < N; ++k) {
                const float dz = gradient.of(dys[r].get(k), xs[r].get(k), k);
                xs[r].set(k, line.at(dz, xs[r].get(k), k));
            }
            xs[r].store(dx + (pixels - 1 - q - r * stride) * channels + first);
        }
    }
}

// ---- the chain maxPool(relu(batchNorm(x))) over 2x2 windows of stride 2 -------------------------

// Output pixel o = (n, h, w) of (batch, outHeight, outWidth) pools input pixels (n, 2h + i, 2w + j)
// of the (batch, 2 outHeight, 2 outWidth) image, i, j in {0, 1}; window position k = 2i + j is
// the row-major order in which pool.cu picks a window's first maximum.
struct PoolWindows {
    int outPixels, outHeight, outWidth;

    // The pixel index of window o's top-left input pixel.
    __device__ __forceinline__ int origin(int o) const {
        const int plane = outHeight * outWidth, image = o / plane, place = o % plane;
        const int h = place / outWidth, w = place % outWidth;
        return (image * 2 * outHeight + 2 * h) * 2 * outWidth + 2 * w;
    }
    // Pixel offset of window position k from the origin.
    __device__ __forceinline__ int offset(int k) const { return (k >> 1) * 2 * outWidth + (k & 1); }
};

// y = max(0, z over the window): relu then max, as max(relu(z_k)) = max(0, max z_k). The
// normalising pass of the chain's training forward; walks the windows from the last to the first
// (see the file comment). r, the ReLU's output, is never written.
template <int N>
__global__ void __launch_bounds__(kThreads)
normalizeReluMaxPoolKernel(const Bf16* __restrict__ x, const float* __restrict__ gamma,
                           const float* __restrict__ beta, const float* __restrict__ mean,
                           const float* __restrict__ invStd, PoolWindows windows, int channels,
                           int packLanes, Bf16* __restrict__ y) {
    startAfterPriorGrid();
    using Pack = Packed<Bf16, N>;
    const Lane lane = laneOf(channels / N, packLanes);
    if (!lane.active) return;
    const int first = lane.pack * N;
    const PackCoefficients<N> coefficients(first, gamma, beta, mean, invStd);
    const int stride = int(gridDim.y) * lane.pixelLanes;
    for (int q = int(blockIdx.y) * lane.pixelLanes + lane.pixelLane; q < windows.outPixels;
         q += kForwardWindowRun * stride) {
        Pack v[kForwardWindowRun][4];
#pragma unroll
        for (int r = 0; r < kForwardWindowRun; ++r) {
            if (q + r * stride >= windows.outPixels) continue;
            const int origin = windows.origin(windows.outPixels - 1 - q - r * stride);
#pragma unroll
            for (int k = 0; k < 4; ++k)
                v[r][k] = Pack::load(x + (origin + windows.offset(k)) * channels + first);
        }
#pragma unroll
        for (int r = 0; r < kForwardWindowRun; ++r) {
            if (q + r * stride >= windows.outPixels) continue;
            Pack pooled;
#pragma unroll
            for (int c = 0; c < N; ++c) {
                float largest = 0.0f;
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    largest = fmaxf(largest, coefficients.normalised(v[r][k].get(c), c));
                pooled.set(c, largest);
            }
            pooled.store(y + (windows.outPixels - 1 - q - r * stride) * channels + first);
        }
    }
}

// The window position that receives the pooled gradient, or -1 where none does: r_k, the ReLU's
// output as the unfused chain stores it (bf16), is recomputed from x; the first maximum takes
// the gradient (pool.cu's rule) and the ReLU passes it where that maximum is positive.
template <int N>
__device__ __forceinline__ int routedPosition(const Packed<Bf16, N> (&window)[4], int c,
                                              const PackCoefficients<N>& coefficients) {
    int argmax = 0;
    float best = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const float z = coefficients.normalised(window[k].get(c), c);
        const float r = __bfloat162float(__float2bfloat16_rn(z > 0.0f ? z : 0.0f));
        if (k == 0 || r > best) argmax = k, best = r;
    }
    return best > 0.0f ? argmax : -1;
}

// partials[split][c] = (sum dz, sum dz (x - savedMean)) over the split's windows, dz being the
// pooled gradient routed through the max and the ReLU (routedPosition).
template <int N>
__global__ void __launch_bounds__(kThreads, kReduceBlocksPerMultiprocessor)
partialPooledGradientSumsKernel(const Bf16* __restrict__ x, const Bf16* __restrict__ dy,
                                const float* __restrict__ gamma, const float* __restrict__ beta,
                                const float* __restrict__ savedMean,
                                const float* __restrict__ savedInvStd, PoolWindows windows,
                                int channels, int packLanes, double2* __restrict__ partials) {
    startAfterPriorGrid();
    using Pack = Packed<Bf16, N>;
    const Lane lane = laneOf(channels / N, packLanes);
    double dzSum[N] = {}, dzCentredSum[N] = {};
    if (lane.active) {
        const int first = lane.pack * N;
        const PackCoefficients<N> coefficients(first, gamma, beta, savedMean, savedInvStd);
        const int stride = int(gridDim.y) * lane.pixelLanes;
        for (int o = int(blockIdx.y) * lane.pixelLanes + lane.pixelLane; o < windows.outPixels;
             o += kBackwardWindowRun * stride) {
            Pack xs[kBackwardWindowRun][4], dys[kBackwardWindowRun];
#pragma unroll
            for (int r = 0; r < kBackwardWindowRun; ++r) {
                if (o + r * stride >= windows.outPixels) continue;
                const int origin = windows.origin(o + r * stride);
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    xs[r][k] = Pack::load(x + (origin + windows.offset(k)) * channels + first);
                dys[r] = Pack::load(dy + (o + r * stride) * channels + first);
            }
            float runSum[N] = {}, runCentred[N] = {};
#pragma unroll
            for (int r = 0; r < kBackwardWindowRun; ++r) {
                if (o + r * stride >= windows.outPixels) continue;
#pragma unroll
                for (int c = 0; c < N; ++c) {
                    const int routed = routedPosition<N>(xs[r], c, coefficients);
                    if (routed < 0) continue;
                    const float dz = dys[r].get(c);
                    float routedX = xs[r][0].get(c);
#pragma unroll
                    for (int k = 1; k < 4; ++k)
                        if (routed == k) routedX = xs[r][k].get(c);
                    runSum[c] += dz;
                    runCentred[c] = fmaf(dz, routedX - coefficients.centre[c], runCentred[c]);
                }
            }
#pragma unroll
            for (int c = 0; c < N; ++c) {
                dzSum[c] += runSum[c];
                dzCentredSum[c] += runCentred[c];
            }
        }
    }
    writeBlockPartials<N>(dzSum, dzCentredSum, lane, packLanes, channels, partials);
}

// dx along InputGradientLine at every pixel of every window, dz routed as in the partial sums;
// walks the windows from the last to the first.
template <int N>
__global__ void __launch_bounds__(kThreads)
pooledInputGradientKernel(const Bf16* __restrict__ x, const Bf16* __restrict__ dy,
                          const float* __restrict__ gamma, const float* __restrict__ beta,
                          const float* __restrict__ savedMean,
                          const float* __restrict__ savedInvStd, const float* __restrict__ dgamma,
                          const float* __restrict__ dbeta, float valuesPerChannel,
                          PoolWindows windows, int channels, int packLanes, Bf16* __restrict__ dx) {
    startAfterPriorGrid();
    using Pack = Packed<Bf16, N>;
    const Lane lane = laneOf(channels / N, packLanes);
    if (!lane.active) return;
    const int first = lane.pack * N;
    const PackCoefficients<N> coefficients(first, gamma, beta, savedMean, savedInvStd);
    const InputGradientLine<N> line(first, gamma, savedMean, savedInvStd, dgamma, dbeta,
                                    valuesPerChannel);
    const int stride = int(gridDim.y) * lane.pixelLanes;
    for (int q = int(blockIdx.y) * lane.pixelLanes + lane.pixelLane; q < windows.outPixels;
         q += kBackwardWindowRun * stride) {
        Pack xs[kBackwardWindowRun][4], dys[kBackwardWindowRun];
        int origins[kBackwardWindowRun];
#pragma unroll
        for (int r = 0; r < kBackwardWindowRun; ++r) {
            if (q + r * stride >= windows.outPixels) continue;
            const int o = windows.outPixels - 1 - q - r * stride;
            origins[r] = windows.origin(o);
#pragma unroll
            for (int k = 0; k < 4; ++k)
                xs[r][k] = Pack::load(x + (origins[r] + windows.offset(k)) * channels + first);
            dys[r] = Pack::load(dy + o * channels + first);
        }
#pragma unroll
        for (int r = 0; r < kBackwardWindowRun; ++r) {
            if (q + r * stride >= windows.outPixels) continue;
#pragma unroll
            for (int c = 0; c < N; ++c) {
                const int routed = routedPosition<N>(xs[r], c, coefficients);
                const float pooledGradient = dys[r].get(c);
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const float dz = routed == k ? pooledGradient : 0.0f;
                    xs[r][k].set(c, line.at(dz, xs[r][k].get(c), c));
                }
            }
#pragma unroll
            for (int k = 0; k < 4; ++k)
                xs[r][k].store(dx + (origins[r] + windows.offset(k)) * channels + first);
        }
    }
}

// ---- launch geometry ------------------------------------------------------------------------

// The block layout for packs of `packWidth` channels (see the file comment).
struct Tiling {
    int packLanes;      // min(C / packWidth, kThreads)
    int pixelLanes;     // kThreads / packLanes
    int channelBlocks;  // grid.x: blocks side by side over the packs
};

Tiling tilingFor(int channels, int packWidth) {
    const int packs = channels / packWidth;
    const int packLanes = packs < kThreads ? packs : kThreads;
    return {packLanes, kThreads / packLanes, (packs + packLanes - 1) / packLanes};
}

// 16-byte packs of 8 channels when C % 8 == 0 and every activation is 16-byte aligned (a null
// pointer, an unread y, counts as aligned).
bool packsOf8(int channels, std::initializer_list<const void*> activations) {
    if (channels % 8 != 0) return false;
    for (const void* activation : activations)
        if (!isAligned(activation, 16)) return false;
    return true;
}

int pixelCount(const BatchNormGeometry& g) { return g.batch * g.spatial; }

// The most splits (grid.y of the reduction kernels) over `pixels`, whatever the device: at most
// kMaxSplits, each of at least kMinPixelsPerSplit pixels on average. Sizes the workspace (a
// layer's windows are fewer than its pixels, so its pooled chain needs no more).
int maxSplits(int pixels) {
    const int splits = (pixels + kMinPixelsPerSplit - 1) / kMinPixelsPerSplit;
    return splits < kMaxSplits ? splits : kMaxSplits;
}

// Splits for one wave of a reduction kernel over `pixels` (or windows): `residentBlocks` in all,
// over the channel blocks.
int splitCount(int pixels, const Tiling& tiling, int residentBlocks) {
    const int wanted = (residentBlocks + tiling.channelBlocks - 1) / tiling.channelBlocks;
    const int most = maxSplits(pixels);
    return wanted < most ? wanted : most;
}

// grid.y of the elementwise `kernel`: a grid stride over `pixels` (or windows), pixelLanes per
// block step, in one wave of the blocks the GPU keeps resident. Each thread loads its pack's
// coefficients once and then streams; a grid of several waves paid that set-up again in each,
// which on fer-cnn's smaller layers took as long as the streaming (bn3_1's dx: 1056 blocks, four
// waves of about two steps a thread, 1.8 TB/s; docs/logs/2026-12-04-relu-gate).
template <typename Kernel>
unsigned pixelBlocks(Kernel* kernel, int pixels, const Tiling& tiling, int multiprocessors) {
    const int needed = (pixels + tiling.pixelLanes - 1) / tiling.pixelLanes;
    const int wave = int(residentBlocks(kernel, kThreads, multiprocessors)) / tiling.channelBlocks;
    return unsigned(std::max(1, std::min(needed, wave)));
}

void launchNormalize(const BatchNormGeometry& g, const Bf16* x, const float* gamma,
                     const float* beta, const float* mean, const float* invStdOrVariance,
                     bool invStdFromVariance, bool relu, Bf16* y, int multiprocessors,
                     cudaStream_t stream) {
    const bool vectorised = packsOf8(g.channels, {x, y});
    const Tiling tiling = tilingFor(g.channels, vectorised ? 8 : 1);
    auto* kernel = vectorised ? (relu ? &normalizeKernel<8, true> : &normalizeKernel<8, false>)
                              : (relu ? &normalizeKernel<1, true> : &normalizeKernel<1, false>);
    launchDependentKernel("batch norm (channels-last): normalize", kernel,
                          dim3(unsigned(tiling.channelBlocks),
                               pixelBlocks(kernel, pixelCount(g), tiling, multiprocessors)),
                          kThreads, stream, x, gamma, beta, mean, invStdOrVariance,
                          invStdFromVariance, g.epsilon, pixelCount(g), g.channels,
                          tiling.packLanes, y);
}

// The batch statistics of x and the running-statistics update: the training forward's first two
// kernels, also the pooled chain's.
void launchStatistics(const BatchNormGeometry& g, const Bf16* x, float* runningMean,
                      float* runningVar, float* savedMean, float* savedInvStd, void* workspace,
                      int multiprocessors, cudaStream_t stream) {
    auto* partials = static_cast<double2*>(workspace);
    const bool vectorised = packsOf8(g.channels, {x});
    const Tiling tiling = tilingFor(g.channels, vectorised ? 8 : 1);
    const int splits =
        splitCount(pixelCount(g), tiling, kReduceBlocksPerMultiprocessor * multiprocessors);
    launchDependentKernel("batch norm (channels-last): partial statistics",
                          vectorised ? &partialStatisticsKernel<8> : &partialStatisticsKernel<1>,
                          dim3(unsigned(tiling.channelBlocks), unsigned(splits)), kThreads, stream,
                          x, pixelCount(g), g.channels, tiling.packLanes, partials);
    launchDependentKernel("batch norm (channels-last): statistics", statisticsKernel,
                          unsigned((g.channels + 31) / 32), dim3(32, kFinishLanes), stream,
                          static_cast<const double2*>(partials), splits, x, g.channels,
                          double(pixelCount(g)), g.epsilon, g.momentum, runningMean, runningVar,
                          savedMean, savedInvStd);
}

// dbeta and dgamma from the partial sums the backward's first kernel wrote (`splits` of them).
void launchParameterGradients(const BatchNormGeometry& g, const void* workspace, int splits,
                              const float* savedInvStd, float* dgamma, float* dbeta,
                              cudaStream_t stream) {
    launchDependentKernel("batch norm (channels-last) backward: dgamma and dbeta",
                          parameterGradientsKernel, unsigned((g.channels + 31) / 32),
                          dim3(32, kFinishLanes), stream, static_cast<const double2*>(workspace),
                          splits, g.channels, savedInvStd, dgamma, dbeta);
}

PoolWindows poolWindows(const BatchNormGeometry& g, int outHeight, int outWidth) {
    return {g.batch * outHeight * outWidth, outHeight, outWidth};
}

}  // namespace

std::size_t batchNormChannelsLastWorkspaceBytes(const BatchNormGeometry& g) {
    return std::size_t(maxSplits(pixelCount(g))) * std::size_t(g.channels) * sizeof(double2);
}

void batchNormForwardTrainingChannelsLast(const BatchNormGeometry& g, const Bf16* x,
                                          const float* gamma, const float* beta, bool relu,
                                          Bf16* y, float* runningMean, float* runningVar,
                                          float* savedMean, float* savedInvStd, void* workspace,
                                          int multiprocessors, cudaStream_t stream) {
    launchStatistics(g, x, runningMean, runningVar, savedMean, savedInvStd, workspace,
                     multiprocessors, stream);
    launchNormalize(g, x, gamma, beta, savedMean, savedInvStd, false, relu, y, multiprocessors,
                    stream);
}

void batchNormForwardInferenceChannelsLast(const BatchNormGeometry& g, const Bf16* x,
                                           const float* gamma, const float* beta,
                                           const float* runningMean, const float* runningVar,
                                           bool relu, Bf16* y, int multiprocessors,
                                           cudaStream_t stream) {
    launchNormalize(g, x, gamma, beta, runningMean, runningVar, true, relu, y, multiprocessors,
                    stream);
}

void batchNormBackwardChannelsLast(const BatchNormGeometry& g, const Bf16* x, const Bf16* dy,
                                   const float* gamma, const float* beta, const float* savedMean,
                                   const float* savedInvStd, bool relu, Bf16* dx, float* dgamma,
                                   float* dbeta, void* workspace, int multiprocessors,
                                   cudaStream_t stream) {
    auto* partials = static_cast<double2*>(workspace);
    const bool vectorised = packsOf8(g.channels, {x, dy, dx});
    const Tiling tiling = tilingFor(g.channels, vectorised ? 8 : 1);
    const int splits =
        splitCount(pixelCount(g), tiling, kReduceBlocksPerMultiprocessor * multiprocessors);
    auto* sums = vectorised ? (relu ? &partialGradientSumsKernel<8, true>
                                    : &partialGradientSumsKernel<8, false>)
                            : (relu ? &partialGradientSumsKernel<1, true>
                                    : &partialGradientSumsKernel<1, false>);
    launchDependentKernel("batch norm (channels-last) backward: partial sums", sums,
                          dim3(unsigned(tiling.channelBlocks), unsigned(splits)), kThreads, stream,
                          x, dy, gamma, beta, savedMean, savedInvStd, pixelCount(g), g.channels,
                          tiling.packLanes, partials);
    launchParameterGradients(g, workspace, splits, savedInvStd, dgamma, dbeta, stream);
    auto* inputGradient =
        vectorised ? (relu ? &inputGradientKernel<8, true> : &inputGradientKernel<8, false>)
                   : (relu ? &inputGradientKernel<1, true> : &inputGradientKernel<1, false>);
    launchDependentKernel("batch norm (channels-last) backward: dx", inputGradient,
                          dim3(unsigned(tiling.channelBlocks),
                               pixelBlocks(inputGradient, pixelCount(g), tiling, multiprocessors)),
                          kThreads, stream, x, dy, gamma, beta, savedMean, savedInvStd,
                          static_cast<const float*>(dgamma), static_cast<const float*>(dbeta),
                          float(pixelCount(g)), pixelCount(g), g.channels, tiling.packLanes, dx);
}

void batchNormReluMaxPoolForwardTrainingChannelsLast(const BatchNormGeometry& g, int outHeight,
        int outWidth, const Bf16* x, const float* gamma, const float* beta, Bf16* y,
        float* runningMean, float* runningVar, float* savedMean, float* savedInvStd,
        void* workspace, int multiprocessors, cudaStream_t stream) {
    launchStatistics(g, x, runningMean, runningVar, savedMean, savedInvStd, workspace,
                     multiprocessors, stream);
    const PoolWindows windows = poolWindows(g, outHeight, outWidth);
    const bool vectorised = packsOf8(g.channels, {x, y});
    const Tiling tiling = tilingFor(g.channels, vectorised ? 8 : 1);
    auto* normalizeAndPool =
        vectorised ? &normalizeReluMaxPoolKernel<8> : &normalizeReluMaxPoolKernel<1>;
    launchDependentKernel(
        "batch norm + relu + max pool (channels-last): normalize and pool", normalizeAndPool,
        dim3(unsigned(tiling.channelBlocks),
             pixelBlocks(normalizeAndPool, windows.outPixels, tiling, multiprocessors)),
        kThreads, stream, x, gamma, beta, static_cast<const float*>(savedMean),
        static_cast<const float*>(savedInvStd), windows, g.channels, tiling.packLanes, y);
}

void batchNormReluMaxPoolBackwardChannelsLast(const BatchNormGeometry& g, int outHeight,
        int outWidth, const Bf16* x, const Bf16* dy, const float* gamma, const float* beta,
        const float* savedMean, const float* savedInvStd, Bf16* dx, float* dgamma, float* dbeta,
        void* workspace, int multiprocessors, cudaStream_t stream) {
    const PoolWindows windows = poolWindows(g, outHeight, outWidth);
    const bool vectorised = packsOf8(g.channels, {x, dy, dx});
    const Tiling tiling = tilingFor(g.channels, vectorised ? 8 : 1);
    const int splits =
        splitCount(windows.outPixels, tiling, kReduceBlocksPerMultiprocessor * multiprocessors);
    launchDependentKernel(
        "batch norm + relu + max pool (channels-last) backward: partial sums",
        vectorised ? &partialPooledGradientSumsKernel<8> : &partialPooledGradientSumsKernel<1>,
        dim3(unsigned(tiling.channelBlocks), unsigned(splits)), kThreads, stream, x, dy, gamma,
        beta, savedMean, savedInvStd, windows, g.channels, tiling.packLanes,
        static_cast<double2*>(workspace));
    launchParameterGradients(g, workspace, splits, savedInvStd, dgamma, dbeta, stream);
    auto* inputGradient =
        vectorised ? &pooledInputGradientKernel<8> : &pooledInputGradientKernel<1>;
    launchDependentKernel(
        "batch norm + relu + max pool (channels-last) backward: dx", inputGradient,
        dim3(unsigned(tiling.channelBlocks),
             pixelBlocks(inputGradient, windows.outPixels, tiling, multiprocessors)),
        kThreads, stream, x, dy, gamma, beta, savedMean, savedInvStd,
        static_cast<const float*>(dgamma), static_cast<const float*>(dbeta), float(pixelCount(g)),
        windows, g.channels, tiling.packLanes, dx);
}

}  // namespace cnnstudio::kernels
