// CpuRefBackend: host memory (64-byte aligned, so vector loads never straddle a cache line in
// the fast CPU backend's tests either) and a forward to each cpu_ref op.
#include "cpu_ref/cpu_ref_backend.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "cnnstudio/kernels/cpu_backends.h"
#include "cnnstudio/error.h"
#include "cpu_ref/cpu_ref_ops.h"
#include "cnnstudio/op_checks.h"

namespace cnnstudio {
namespace cpu_ref {

namespace {
constexpr std::size_t kAlignmentBytes = 64;
}

std::string CpuRefBackend::description() const {
    return "plain C++ loops, 1 thread, fp32 (reference)";
}

void* CpuRefBackend::allocateBytes(std::size_t bytes) {
    // aligned_alloc needs a size that is a multiple of the alignment, and at least one block so
    // that a zero-byte request still returns a distinct pointer.
    const std::size_t rounded = bytes == 0 ? kAlignmentBytes
                                           : (bytes + kAlignmentBytes - 1) / kAlignmentBytes * kAlignmentBytes;
    if (rounded < bytes)
        throw Error("cannot allocate " + std::to_string(bytes) + " bytes", "cpu-ref allocateBytes",
                    "the request overflows the address space; check the tensor shape");
    void* memory = std::aligned_alloc(kAlignmentBytes, rounded);
    if (memory == nullptr)
        throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes",
                    "cpu-ref allocateBytes", "lower the batch size or use a smaller network");
    return memory;
}

void CpuRefBackend::freeBytes(void* pointer) noexcept { std::free(pointer); }

void CpuRefBackend::upload(void* destination, const void* hostSource, std::size_t bytes) {
    copy(destination, hostSource, bytes);
}

void CpuRefBackend::download(void* hostDestination, const void* source, std::size_t bytes) {
    copy(hostDestination, source, bytes);
}

void CpuRefBackend::copy(void* destination, const void* source, std::size_t bytes) {
    if (bytes == 0) return;
    ops::requirePointer(destination, "destination", "cpu-ref copy");
    ops::requirePointer(source, "source", "cpu-ref copy");
    std::memmove(destination, source, bytes);
}

void CpuRefBackend::fill(float* y, float value, std::size_t count) { cpu_ref::fill(y, value, count); }
void CpuRefBackend::axpy(float alpha, const float* x, float* y, std::size_t count) {
    cpu_ref::axpy(alpha, x, y, count);
}
void CpuRefBackend::add(const float* a, const float* b, float* y, std::size_t count) {
    cpu_ref::add(a, b, y, count);
}
void CpuRefBackend::multiply(const float* a, const float* b, float* y, std::size_t count) {
    cpu_ref::multiply(a, b, y, count);
}
void CpuRefBackend::scale(float* y, float alpha, std::size_t count) { cpu_ref::scale(y, alpha, count); }

void CpuRefBackend::convForward(const ConvGeometry& g, const float* x, const float* w,
                                const float* bias, float* y) {
    cpu_ref::convForward(g, x, w, bias, y);
}
void CpuRefBackend::convBackwardData(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
    cpu_ref::convBackwardData(g, dy, w, dx);
}
void CpuRefBackend::convBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                                       float* dw, float* dbias) {
    cpu_ref::convBackwardFilter(g, x, dy, dw, dbias);
}

void CpuRefBackend::poolForward(const PoolGeometry& g, const float* x, float* y) {
    cpu_ref::poolForward(g, x, y);
}
void CpuRefBackend::poolBackward(const PoolGeometry& g, const float* x, const float* y,
                                 const float* dy, float* dx) {
    cpu_ref::poolBackward(g, x, y, dy, dx);
}

void CpuRefBackend::batchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                             const float* gamma, const float* beta, float* y,
                                             float* runningMean, float* runningVar,
                                             float* savedMean, float* savedInvStd) {
    cpu_ref::batchNormForwardTraining(g, x, gamma, beta, y, runningMean, runningVar, savedMean, savedInvStd);
}
void CpuRefBackend::batchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                              const float* gamma, const float* beta,
                                              const float* runningMean, const float* runningVar,
                                              float* y) {
    cpu_ref::batchNormForwardInference(g, x, gamma, beta, runningMean, runningVar, y);
}
void CpuRefBackend::batchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                      const float* gamma, const float* savedMean,
                                      const float* savedInvStd, float* dx, float* dgamma,
                                      float* dbeta) {
    cpu_ref::batchNormBackward(g, x, dy, gamma, savedMean, savedInvStd, dx, dgamma, dbeta);
}

void CpuRefBackend::activationForward(Activation kind, float alpha, const float* x, float* y,
                                      std::size_t count) {
    cpu_ref::activationForward(kind, alpha, x, y, count);
}
void CpuRefBackend::activationBackward(Activation kind, float alpha, const float* x, const float* y,
                                       const float* dy, float* dx, std::size_t count) {
    cpu_ref::activationBackward(kind, alpha, x, y, dy, dx, count);
}

void CpuRefBackend::dropoutMask(float probability, std::uint64_t seed, const StepScalars* step,
                                float* mask, std::size_t count) {
    cpu_ref::dropoutMask(probability, seed, step, mask, count);
}

void CpuRefBackend::denseForward(const DenseGeometry& g, const float* x, const float* w,
                                 const float* bias, float* y) {
    cpu_ref::denseForward(g, x, w, bias, y);
}
void CpuRefBackend::denseBackwardData(const DenseGeometry& g, const float* dy, const float* w, float* dx) {
    cpu_ref::denseBackwardData(g, dy, w, dx);
}
void CpuRefBackend::denseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy,
                                         float* dw, float* dbias) {
    cpu_ref::denseBackwardWeights(g, x, dy, dw, dbias);
}

void CpuRefBackend::copyChannels(int batch, int spatial, int channels, const float* src,
                                 int srcChannels, int srcOffset, float* dst, int dstChannels,
                                 int dstOffset) {
    cpu_ref::copyChannels(batch, spatial, channels, src, srcChannels, srcOffset, dst, dstChannels, dstOffset);
}

void CpuRefBackend::softmaxCrossEntropyForward(const LossGeometry& g, const float* logits,
                                               const std::int32_t* labels,
                                               const float* classWeights, float* probabilities,
                                               float* loss) {
    cpu_ref::softmaxCrossEntropyForward(g, logits, labels, classWeights, probabilities, loss);
}
void CpuRefBackend::softmaxCrossEntropyBackward(const LossGeometry& g, const float* probabilities,
                                                const std::int32_t* labels,
                                                const float* classWeights, float* dlogits) {
    cpu_ref::softmaxCrossEntropyBackward(g, probabilities, labels, classWeights, dlogits);
}

void CpuRefBackend::sgdUpdate(const SgdSettings& s, const StepScalars* step, float* params,
                              const float* grads, float* velocity, std::size_t count) {
    cpu_ref::sgdUpdate(s, step, params, grads, velocity, count);
}
void CpuRefBackend::adamUpdate(const AdamSettings& s, const StepScalars* step, float* params,
                               const float* grads, float* m, float* v, std::size_t count) {
    cpu_ref::adamUpdate(s, step, params, grads, m, v, count);
}

}  // namespace cpu_ref

// cpu-ref runs one thread whatever options.threads says (it is the single-thread baseline) and
// only fp32 (it is the reference the other backends' precisions are measured against).
std::unique_ptr<Backend> createCpuRefBackend(const BackendOptions& options) {
    if (options.precision != Precision::Fp32)
        throw Error("cpu-ref computes in fp32 only, not " + toString(options.precision), "backend 'cpu-ref'",
                    "choose fp32, or a GPU backend for tf32 and bf16");
    return std::make_unique<cpu_ref::CpuRefBackend>();
}

}  // namespace cnnstudio
