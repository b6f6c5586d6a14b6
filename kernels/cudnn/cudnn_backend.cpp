// CudnnBackend set-up: handles bound to the backend's stream, math modes per precision, the
// factory, and helpers shared by the op files (capture state, bf16 conversion, plan-cache hashes).

#include "cudnn/cudnn_backend.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

#include "cnnstudio/error.h"
#include "cnnstudio/kernels/gpu_backends.h"
#include "runtime/cuda_check.h"

namespace cnnstudio::kernels {
namespace {

// cuBLAS's own workspace, set explicitly so that it never allocates inside a captured step.
// 32 MiB is what NVIDIA recommends for Hopper.
constexpr std::size_t kCublasWorkspaceBytes = std::size_t(32) << 20;

// Algorithm benchmarks may use at most this much scratch (and at most a quarter of free memory).
constexpr std::size_t kMaxSearchWorkspaceBytes = std::size_t(1) << 30;

std::string cudnnVersionText() {
    const std::size_t version = cudnnGetVersion();
    return std::to_string(version / 10000) + "." + std::to_string((version % 10000) / 100) + "." +
           std::to_string(version % 100);
}

void combine(std::size_t& seed, std::size_t value) {
    seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
}

template <typename... Ints>
std::size_t hashAll(Ints... values) {
    std::size_t seed = 0;
    (combine(seed, std::hash<long long>{}(static_cast<long long>(values))), ...);
    return seed;
}

}  // namespace

std::size_t ConvKeyHash::operator()(const ConvKey& key) const noexcept {
    const ConvGeometry& g = key.geometry;
    return hashAll(g.batch, g.inChannels, g.inHeight, g.inWidth, g.outChannels, g.outHeight,
                   g.outWidth, g.kernelHeight, g.kernelWidth, g.strideHeight, g.strideWidth,
                   g.padHeight, g.padWidth, g.groups, int(key.precision));
}

std::size_t PoolGeometryHash::operator()(const PoolGeometry& g) const noexcept {
    return hashAll(int(g.kind), g.batch, g.channels, g.inHeight, g.inWidth, g.outHeight,
                   g.outWidth, g.kernelHeight, g.kernelWidth, g.strideHeight, g.strideWidth,
                   g.padHeight, g.padWidth);
}

std::size_t BatchNormGeometryHash::operator()(const BatchNormGeometry& g) const noexcept {
    return hashAll(g.batch, g.channels, g.spatial, std::bit_cast<std::uint32_t>(g.epsilon),
                   std::bit_cast<std::uint32_t>(g.momentum));
}

std::size_t DenseGeometryHash::operator()(const DenseGeometry& g) const noexcept {
    return hashAll(g.batch, g.inFeatures, g.outFeatures);
}

CudnnBackend::CudnnBackend(const BackendOptions& options)
    : CudaBackend(options, AnyPrecision{}), deterministic_(options.deterministic) {
    activateDevice();
    // The destructor does not run when a constructor throws, so the handles made so far are
    // released here before the error goes on.
    try {
        CNNSTUDIO_CUDNN_CHECK(cudnnCreate(&cudnn_));
        CNNSTUDIO_CUDNN_CHECK(cudnnSetStream(cudnn_, stream()));
        createCublas(stepCublas_, stream());
        createCublas(sideCublas_, sideStream());
    } catch (...) {
        releaseCublas(sideCublas_);
        releaseCublas(stepCublas_);
        if (cudnn_) cudnnDestroy(cudnn_);
        throw;
    }
}

void CudnnBackend::createCublas(CublasOnStream& cublas, cudaStream_t stream) {
    CNNSTUDIO_CUBLAS_CHECK(cublasCreate(&cublas.handle));
    // cublasSetStream resets the workspace, so the workspace is set after it.
    CNNSTUDIO_CUBLAS_CHECK(cublasSetStream(cublas.handle, stream));
    cublas.workspace = allocateBytes(kCublasWorkspaceBytes);
    CNNSTUDIO_CUBLAS_CHECK(cublasSetWorkspace(cublas.handle, cublas.workspace, kCublasWorkspaceBytes));
    // fp32 and bf16 name their compute type per GEMM; the handle's mode only matters for tf32,
    // where it lets the tensor cores take TF32 inputs.
    CNNSTUDIO_CUBLAS_CHECK(cublasSetMathMode(
        cublas.handle, precision() == Precision::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
}

void CudnnBackend::releaseCublas(CublasOnStream& cublas) noexcept {
    if (cublas.handle) cublasDestroy(cublas.handle);
    if (cublas.workspace) freeBytes(cublas.workspace);
    cublas = {};
}

cublasHandle_t CudnnBackend::cublas() const {
    return stream() == sideStream() ? sideCublas_.handle : stepCublas_.handle;
}

CudnnBackend::~CudnnBackend() {
    // Nothing here may throw. Work still queued on either stream may use a cuBLAS workspace.
    cudaSetDevice(device());
    cudaStreamSynchronize(sideStream());
    cudaStreamSynchronize(stream());
    convPlans_.clear();
    poolPlans_.clear();
    batchNormPlans_.clear();
    for (auto& [savedMean, reserve] : batchNormReserves_) freeBytes(reserve);
    densePlans_.clear();
    reluDescriptor_.reset();
    flatDescriptors_.clear();
    releaseCublas(sideCublas_);
    releaseCublas(stepCublas_);
    cudnnDestroy(cudnn_);
}

void CudnnBackend::bindStream(cudaStream_t stream) {
    CNNSTUDIO_CUDNN_CHECK(cudnnSetStream(cudnn_, stream));
}

std::string CudnnBackend::name() const { return "cudnn"; }

std::string CudnnBackend::description() const {
    return std::string(deviceProperties().name) + " (device " + std::to_string(device()) +
           "), cuDNN " + cudnnVersionText() + ", " + toString(precision());
}

CudnnStats CudnnBackend::stats() const {
    CudnnStats result = stats_;
    result.convolutionPlans = convPlans_.size();
    result.poolPlans = poolPlans_.size();
    result.batchNormPlans = batchNormPlans_.size();
    return result;
}

void CudnnBackend::beginWeightsHeld(std::span<const float> weights) {
    const std::size_t stagedAhead = heldWeights_.beginHold(
        weights, [this](const std::function<void()>& stage) { enqueueBeside(stage); });
    stats_.weightCopiesStagedAhead += stagedAhead;
    awaitingStagedAhead_ = stagedAhead > 0;
}

void CudnnBackend::endWeightsHeld() noexcept {
    awaitStagedAhead();  // a capture ends with every stream it forked joined again
    heldWeights_.endHold();
}

const void* CudnnBackend::heldCopy(const float* w, const HeldWeights::Shape& shape,
                                   std::size_t bytes, HeldWeights::Stage stage) {
    awaitStagedAhead();
    return heldWeights_.copyOf(*this, w, shape, bytes, std::move(stage));
}

void CudnnBackend::awaitStagedAhead() noexcept {
    if (awaitingStagedAhead_) awaitBeside();
    awaitingStagedAhead_ = false;
}

bool CudnnBackend::streamIsCapturing() const {
    if (isCapturing()) return true;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CNNSTUDIO_CUDA_CHECK(cudaStreamIsCapturing(stream(), &status));
    return status != cudaStreamCaptureStatusNone;
}

std::size_t CudnnBackend::searchWorkspaceLimit() const {
    std::size_t freeBytes = 0, totalBytes = 0;
    CNNSTUDIO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    return std::min(kMaxSearchWorkspaceBytes, freeBytes / 4);
}

cudnnTensorFormat_t CudnnBackend::activationLayout() const {
    return storesBf16() ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

cudnnDataType_t CudnnBackend::computeType() const {
    return precision() == Precision::Bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

cudnnMathType_t CudnnBackend::requestedMathType() const {
    // Strict fp32 asks for FMA math (CUDNN_DEFAULT_MATH would allow TF32 on Ampere and newer).
    // tf32 asks for DEFAULT: each algorithm runs as TF32 where it has a tensor-core path and as
    // FMA where not, and the benchmark keeps the fastest (fer-cnn step at batch 256 on an H200,
    // 2026-11-30: 14.3k img/s, against 13.2k when TENSOR_OP math was forced). bf16 data runs
    // natively on tensor cores. The "allow conversion" mode is never used (it may go to fp16).
    switch (precision()) {
    case Precision::Fp32: return CUDNN_FMA_MATH;
    case Precision::Tf32: return CUDNN_DEFAULT_MATH;
    default: return CUDNN_TENSOR_OP_MATH;
    }
}

CudnnStats cudnnStats(const Backend& backend) {
    const auto* cudnn = dynamic_cast<const CudnnBackend*>(&backend);
    if (cudnn == nullptr)
        throw Error("backend '" + backend.name() + "' is not the cudnn backend", "cudnnStats",
                    "create the backend with createBackend(\"cudnn\")");
    return cudnn->stats();
}

std::unique_ptr<Backend> createCudnnBackend(const BackendOptions& options) {
    if (std::string why = gpuUnavailableReason(); !why.empty())
        throw Error(why, "backend 'cudnn'", "use backend 'cpu' on this machine");
    return std::make_unique<CudnnBackend>(options);
}

}  // namespace cnnstudio::kernels
