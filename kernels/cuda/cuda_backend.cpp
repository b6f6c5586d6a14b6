// CudaBackend's device, stream, memory pool and step capture; createCudaBackend and
// gpuUnavailableReason. The ops are defined in the file named for each op.
#include "cuda/cuda_backend.h"

#include <cstdint>
#include <utility>

#include "cnnstudio/error.h"
#include "cnnstudio/kernels/gpu_backends.h"
#include "runtime/cuda_check.h"

namespace cnnstudio::kernels {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string mebibytes(std::size_t bytes) {
    return std::to_string(static_cast<long long>(double(bytes) / kMiB + 0.5));
}

std::string backendWhere(int device) { return "backend 'cuda', device " + std::to_string(device); }

// Thrown by CudaBackend::grow for a scratch that may be refused (the side stream's),
// caught by enqueueWeightGradient.
struct ScratchRefused {};

// A captured training step: one graph launch per replay, on the backend's stream.
class CudaStepGraph final : public StepGraph {
public:
    CudaStepGraph(cudaGraphExec_t graph, cudaStream_t stream, int device)
        : graph_(graph), stream_(stream), device_(device) {}
    ~CudaStepGraph() override { cudaGraphExecDestroy(graph_); }
    CudaStepGraph(const CudaStepGraph&) = delete;
    CudaStepGraph& operator=(const CudaStepGraph&) = delete;

    void replay() override {
        CNNSTUDIO_CUDA_CHECK(cudaSetDevice(device_));
        CNNSTUDIO_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
    }

private:
    cudaGraphExec_t graph_;
    cudaStream_t stream_;
    int device_;
};

const BackendOptions& requireOwnPrecision(const BackendOptions& options) {
    if (options.precision == Precision::Tf32)
        throw Error("the cuda backend runs fp32 and bf16, tf32 was asked for", "backend 'cuda'",
                    "pick fp32 or bf16, or the cudnn backend for tf32");
    return options;
}

}  // namespace

CudaBackend::CudaBackend(const BackendOptions& options)
    : CudaBackend(requireOwnPrecision(options), AnyPrecision{}) {}

CudaBackend::CudaBackend(const BackendOptions& options, AnyPrecision) { initialise(options); }

void CudaBackend::initialise(const BackendOptions& options) {
    device_ = options.device;
    precision_ = options.precision;
    if (std::string why = gpuUnavailableReason(); !why.empty())
        throw Error(why, backendWhere(device_), "run on a machine with an NVIDIA GPU, or use cpu");
    int deviceCount = 0;
    CNNSTUDIO_CUDA_CHECK(cudaGetDeviceCount(&deviceCount));
    if (device_ < 0 || device_ >= deviceCount)
        throw Error("CUDA device " + std::to_string(device_) + " does not exist",
                    backendWhere(device_),
                    "this machine has " + std::to_string(deviceCount) +
                        " CUDA device(s): pick a device from 0 to " +
                        std::to_string(deviceCount - 1));
    CNNSTUDIO_CUDA_CHECK(cudaSetDevice(device_));
    CNNSTUDIO_CUDA_CHECK(cudaGetDeviceProperties(&properties_, device_));

    int poolsSupported = 0;
    CNNSTUDIO_CUDA_CHECK(
        cudaDeviceGetAttribute(&poolsSupported, cudaDevAttrMemoryPoolsSupported, device_));
    if (!poolsSupported)
        throw Error(std::string(properties_.name) + " does not support stream-ordered memory pools",
                    backendWhere(device_), "update the NVIDIA driver, or use cpu");

    CNNSTUDIO_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // One priority for both: a higher one for stream_ made fer-cnn's cudnn bf16 step 0.7% slower
    // (docs/logs/2026-12-03-weight-gradient-overlap).
    CNNSTUDIO_CUDA_CHECK(cudaStreamCreateWithFlags(&sideStream_, cudaStreamNonBlocking));
    sideWorkspace_.mayBeRefused = true;
    CNNSTUDIO_CUDA_CHECK(cudaEventCreateWithFlags(&forkEvent_, cudaEventDisableTiming));
    CNNSTUDIO_CUDA_CHECK(cudaEventCreateWithFlags(&joinEvent_, cudaEventDisableTiming));
    cudaMemPoolProps poolProperties{};
    poolProperties.allocType = cudaMemAllocationTypePinned;
    poolProperties.location.type = cudaMemLocationTypeDevice;
    poolProperties.location.id = device_;
    CNNSTUDIO_CUDA_CHECK(cudaMemPoolCreate(&pool_, &poolProperties));
    // Keep every freed block in the pool: a step loop that frees and reallocates the same
    // sizes then never returns memory to the driver and never waits on cudaMalloc.
    std::uint64_t keepEverything = UINT64_MAX;
    CNNSTUDIO_CUDA_CHECK(
        cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keepEverything));
}

CudaBackend::~CudaBackend() {
    // Nothing here may throw; errors at teardown have nowhere useful to go.
    cudaSetDevice(device_);
    if (sideStream_) cudaStreamSynchronize(sideStream_);
    if (stream_) cudaStreamSynchronize(stream_);
    for (void* pointer : deferredFrees_) cudaFreeAsync(pointer, stream_);
    for (Scratch* scratch : {&workspace_, &sideWorkspace_}) {
        if (scratch->data) cudaFree(scratch->data);
        for (void* pointer : scratch->retired) cudaFree(pointer);
    }
    if (forkEvent_) cudaEventDestroy(forkEvent_);
    if (joinEvent_) cudaEventDestroy(joinEvent_);
    if (sideStream_) cudaStreamDestroy(sideStream_);
    if (stream_) {
        cudaStreamSynchronize(stream_);
        cudaStreamDestroy(stream_);
    }
    // Blocks the caller never freed are released with the pool once they are returned.
    if (pool_) cudaMemPoolDestroy(pool_);
}

std::string CudaBackend::name() const { return "cuda"; }

std::optional<std::size_t> CudaBackend::freeMemoryBytes() const {
    CNNSTUDIO_CUDA_CHECK(cudaSetDevice(device_));
    std::size_t freeBytes = 0, totalBytes = 0;
    CNNSTUDIO_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    return freeBytes;
}

std::string CudaBackend::description() const {
    return std::string(properties_.name) + " (device " + std::to_string(device_) +
           "), own CUDA kernels, " + toString(precision_);
}

void CudaBackend::activateDevice() const {
    // Reading the current device is a thread-local lookup; switching only when it differs
    // keeps the common single-GPU path free of driver calls, inside step capture too.
    int current = -1;
    CNNSTUDIO_CUDA_CHECK(cudaGetDevice(&current));
    if (current != device_) CNNSTUDIO_CUDA_CHECK(cudaSetDevice(device_));
}

// ---- memory ---------------------------------------------------------------------------------

void* CudaBackend::allocateBytes(std::size_t bytes) {
    activateDevice();
    if (capturing_)
        throw Error("asked to allocate " + mebibytes(bytes) +
                        " MiB while a training step is being captured",
                    backendWhere(device_),
                    "allocate every buffer before the step is captured (a bug in the caller)");
    void* pointer = nullptr;
    // Size 0 still gets a distinct, freeable pointer, as with malloc.
    cudaError_t status =
        cudaMallocFromPoolAsync(&pointer, bytes > 0 ? bytes : 1, pool_, stream_);
    if (status == cudaErrorMemoryAllocation) {
        // The pool keeps freed blocks for reuse, possibly in pieces too small for this
        // request: give them back to the driver (once the frees have run) and try again.
        cudaGetLastError();
        CNNSTUDIO_CUDA_CHECK(cudaStreamSynchronize(stream_));
        CNNSTUDIO_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
        status = cudaMallocFromPoolAsync(&pointer, bytes > 0 ? bytes : 1, pool_, stream_);
    }
    if (status == cudaSuccess) return pointer;
    cudaGetLastError();  // clear the error so the next call does not see it
    std::size_t freeBytes = 0, totalBytes = 0;
    cudaMemGetInfo(&freeBytes, &totalBytes);
    // A request beyond what the device has may be refused as an invalid size rather than as
    // out of memory; to the user both mean the same.
    if (status == cudaErrorMemoryAllocation || bytes > freeBytes)
        throw Error("out of GPU memory allocating " + mebibytes(bytes) + " MiB on device " +
                        std::to_string(device_) + " (free " + mebibytes(freeBytes) + " MiB of " +
                        mebibytes(totalBytes) + " MiB)",
                    backendWhere(device_),
                    "lower the batch size, use a smaller network, or close other programs on "
                    "this GPU");
    throwCudaError(status, "cudaMallocFromPoolAsync", __FILE__, __LINE__);
}

void CudaBackend::freeBytes(void* pointer) noexcept {
    if (!pointer) return;
    if (capturing_) {
        // A free issued on the capturing stream would become part of the graph; release it
        // once capture has ended instead.
        deferredFrees_.push_back(pointer);
        return;
    }
    cudaSetDevice(device_);
    cudaFreeAsync(pointer, stream_);
}

void CudaBackend::doUpload(void* destination, const void* hostSource, std::size_t bytes) {
    activateDevice();
    if (capturing_)
        throw Error("upload of " + std::to_string(bytes) + " bytes inside a captured step",
                    backendWhere(device_),
                    "upload inputs before replaying the step, not while recording it");
    // From pageable memory the call returns once the source has been staged, so the caller
    // may reuse hostSource immediately.
    CNNSTUDIO_CUDA_CHECK(
        cudaMemcpyAsync(destination, hostSource, bytes, cudaMemcpyHostToDevice, stream_));
}

void CudaBackend::doDownload(void* hostDestination, const void* source, std::size_t bytes) {
    activateDevice();
    if (capturing_)
        throw Error("download of " + std::to_string(bytes) + " bytes inside a captured step",
                    backendWhere(device_),
                    "read results after the step has run, not while recording it");
    CNNSTUDIO_CUDA_CHECK(
        cudaMemcpyAsync(hostDestination, source, bytes, cudaMemcpyDeviceToHost, stream_));
    CNNSTUDIO_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::doCopy(void* destination, const void* source, std::size_t bytes) {
    activateDevice();
    CNNSTUDIO_CUDA_CHECK(
        cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaBackend::synchronize() {
    activateDevice();
    if (capturing_)
        throw Error("synchronize() inside a captured step", backendWhere(device_),
                    "a captured step must not wait for the device");
    CNNSTUDIO_CUDA_CHECK(cudaStreamSynchronize(sideStream_));
    CNNSTUDIO_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void* CudaBackend::workspace(std::size_t bytes) {
    return grow(onSideStream_ ? sideWorkspace_ : workspace_, bytes);
}

void* CudaBackend::grow(Scratch& scratch, std::size_t bytes) {
    if (bytes <= scratch.bytes) return scratch.data;
    if (bytes >= scratch.refusedBytes) throw ScratchRefused{};
    activateDevice();
    // Grow by at least half again, so that a sequence of slightly larger requests does not
    // allocate every time.
    std::size_t grown = scratch.bytes + scratch.bytes / 2;
    std::size_t newBytes = bytes > grown ? bytes : grown;
    void* pointer = nullptr;
    // cudaMalloc is outside stream order and is not recorded into a graph; during capture it
    // is only allowed in relaxed mode, so switch this thread to it for the call.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CNNSTUDIO_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    cudaError_t status = cudaMalloc(&pointer, newBytes);
    CNNSTUDIO_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    if (status == cudaErrorMemoryAllocation && !capturing_) {
        // Memory the pool keeps for reuse is not free to cudaMalloc: release it and retry.
        cudaGetLastError();
        CNNSTUDIO_CUDA_CHECK(cudaStreamSynchronize(stream_));
        CNNSTUDIO_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
        status = cudaMalloc(&pointer, newBytes);
    }
    if (status == cudaErrorMemoryAllocation && scratch.mayBeRefused) {
        cudaGetLastError();
        scratch.refusedBytes = newBytes;
        throw ScratchRefused{};
    }
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        std::size_t freeBytes = 0, totalBytes = 0;
        cudaMemGetInfo(&freeBytes, &totalBytes);
        throw Error("out of GPU memory allocating " + mebibytes(newBytes) +
                        " MiB of scratch space on device " + std::to_string(device_) +
                        " (free " + mebibytes(freeBytes) + " MiB of " + mebibytes(totalBytes) +
                        " MiB)",
                    backendWhere(device_), "lower the batch size or use a smaller network");
    }
    CNNSTUDIO_CUDA_CHECK(status);
    if (scratch.data) scratch.retired.push_back(scratch.data);
    scratch.data = pointer;
    scratch.bytes = newBytes;
    return scratch.data;
}

// ---- work beside the step's stream: weight gradients, staging ---------------------------------

void CudaBackend::enqueueBeside(const std::function<void()>& enqueue) {
    // What enqueue reads was written on stream_: the side stream starts after it.
    CNNSTUDIO_CUDA_CHECK(cudaEventRecord(forkEvent_, stream_));
    CNNSTUDIO_CUDA_CHECK(cudaStreamWaitEvent(sideStream_, forkEvent_, 0));
    switchToSideStream(true);
    sidePending_ = true;
    try {
        enqueue();
    } catch (...) {
        switchToSideStream(false);
        throw;
    }
    switchToSideStream(false);
}

void CudaBackend::switchToSideStream(bool side) {
    onSideStream_ = side;
    bindStream(stream());
}

void CudaBackend::awaitBeside() noexcept {
    // Unchecked: an error here is the device's sticky one, which the next checked call reports.
    cudaSetDevice(device_);
    joinSideStream();
}

void CudaBackend::beginWeightGradientOverlap() { overlapOpen_ = true; }

void CudaBackend::enqueueWeightGradient(const std::function<void()>& enqueue) {
    if (!overlapOpen_) {
        enqueue();
        return;
    }
    try {
        enqueueBeside(enqueue);
    } catch (const ScratchRefused&) {
        // No memory for a second workspace: this weight gradient runs in order instead. enqueue
        // asks for its workspace before it enqueues anything, so nothing of it ran beside.
        enqueue();
    }
}

cudaError_t CudaBackend::joinSideStream() {
    if (!sidePending_) return cudaSuccess;
    sidePending_ = false;
    cudaError_t status = cudaEventRecord(joinEvent_, sideStream_);
    return status == cudaSuccess ? cudaStreamWaitEvent(stream_, joinEvent_, 0) : status;
}

void CudaBackend::awaitWeightGradients() {
    activateDevice();
    CNNSTUDIO_CUDA_CHECK(joinSideStream());
}

void CudaBackend::endWeightGradientOverlap() noexcept {
    overlapOpen_ = false;
    awaitBeside();
}

// ---- step capture ---------------------------------------------------------------------------

std::unique_ptr<StepGraph> CudaBackend::captureStep(const std::function<void()>& recordStep) {
    activateDevice();
    if (capturing_)
        throw Error("captureStep called while a step is already being captured",
                    backendWhere(device_), "capture one step at a time");
    CNNSTUDIO_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    capturing_ = true;
    auto finishCapture = [this](cudaGraph_t* graph) {
        capturing_ = false;
        cudaError_t status = cudaStreamEndCapture(stream_, graph);
        for (void* pointer : deferredFrees_) cudaFreeAsync(pointer, stream_);
        deferredFrees_.clear();
        return status;
    };
    try {
        recordStep();
    } catch (...) {
        cudaGraph_t abandoned = nullptr;
        finishCapture(&abandoned);
        if (abandoned) cudaGraphDestroy(abandoned);
        cudaGetLastError();
        throw;
    }
    cudaGraph_t graph = nullptr;
    cudaError_t status = finishCapture(&graph);
    if (status != cudaSuccess) {
        cudaGetLastError();
        if (graph) cudaGraphDestroy(graph);
        throw Error(std::string("capturing the training step as a CUDA graph failed: ") +
                        cudaGetErrorString(status),
                    backendWhere(device_),
                    "something in the step cannot be captured (a host copy or a wait); "
                    "train without step capture");
    }
    cudaGraphExec_t executable = nullptr;
    status = cudaGraphInstantiate(&executable, graph, 0);
    cudaGraphDestroy(graph);
    CNNSTUDIO_CUDA_CHECK(status);
    return std::make_unique<CudaStepGraph>(executable, stream_, device_);
}

// ---- factory --------------------------------------------------------------------------------

std::unique_ptr<Backend> createCudaBackend(const BackendOptions& options) {
    return std::make_unique<CudaBackend>(options);
}

std::string gpuUnavailableReason() {
    int deviceCount = 0;
    cudaError_t status = cudaGetDeviceCount(&deviceCount);
    if (status == cudaErrorNoDevice) {
        cudaGetLastError();
        return "no CUDA device found";
    }
    if (status == cudaErrorInsufficientDriver) {
        cudaGetLastError();
        return "no usable NVIDIA driver (none installed, or one older than this build's CUDA "
               "runtime " + std::to_string(CUDART_VERSION / 1000) + "." +
               std::to_string(CUDART_VERSION % 1000 / 10) + ")";
    }
    if (status != cudaSuccess) {
        cudaGetLastError();
        return std::string("the CUDA driver cannot be used: ") + cudaGetErrorString(status);
    }
    if (deviceCount == 0) return "no CUDA device found";
    return {};
}

}  // namespace cnnstudio::kernels
