// Gradient all-reduce between GPU ranks through NCCL. Reductions run on a side stream that
// waits for the gradients enqueued so far on the backend's stream, so the all-reduce of the
// last layers' bucket overlaps the backward pass of the earlier layers; the backend's stream
// waits for every reduction before the optimiser update. Events order the two streams, which
// keeps the whole pattern capturable in the backend's step graph.
#include <nccl.h>

#include <deque>

#include "cnnstudio/error.h"
#include "cnnstudio/kernels/gpu_backends.h"
#include "cuda/cuda_backend.h"
#include "runtime/cuda_check.h"

namespace cnnstudio::kernels {
namespace {

class NcclReducer : public DeviceReducer {
public:
    NcclReducer(CudaBackend& backend, int rank, int ranks, const std::vector<char>& uniqueId)
        : backend_(backend), rank_(rank) {
        if (uniqueId.size() != sizeof(ncclUniqueId))
            throw Error("NCCL unique id of " + std::to_string(uniqueId.size()) + " bytes, expected " +
                        std::to_string(sizeof(ncclUniqueId)), where());
        ncclUniqueId id;
        std::copy(uniqueId.begin(), uniqueId.end(), id.internal);
        backend_.activateDevice();
        check(ncclCommInitRank(&comm_, ranks, id, rank), "ncclCommInitRank");
        CNNSTUDIO_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
        CNNSTUDIO_CUDA_CHECK(cudaEventCreateWithFlags(&reduced_, cudaEventDisableTiming));
    }

    ~NcclReducer() override {
        for (cudaEvent_t event : ready_) cudaEventDestroy(event);
        cudaEventDestroy(reduced_);
        cudaStreamDestroy(side_);
        ncclCommDestroy(comm_);
    }

    void startAllReduceMean(float* data, std::size_t count) override {
        backend_.activateDevice();
        cudaEvent_t ready = readyEvent(started_++);
        CNNSTUDIO_CUDA_CHECK(cudaEventRecord(ready, backend_.stream()));
        CNNSTUDIO_CUDA_CHECK(cudaStreamWaitEvent(side_, ready, 0));
        check(ncclAllReduce(data, data, count, ncclFloat, ncclAvg, comm_, side_), "ncclAllReduce");
    }

    void finishAllReduces() override {
        if (started_ == 0) return;
        CNNSTUDIO_CUDA_CHECK(cudaEventRecord(reduced_, side_));
        CNNSTUDIO_CUDA_CHECK(cudaStreamWaitEvent(backend_.stream(), reduced_, 0));
        started_ = 0;
    }

    void broadcast(float* data, std::size_t count, int root) override {
        backend_.activateDevice();
        check(ncclBroadcast(data, data, count, ncclFloat, root, comm_, backend_.stream()), "ncclBroadcast");
    }

private:
    // One event per bucket in flight: an event re-recorded before the side stream consumed
    // it would lose the earlier dependency.
    cudaEvent_t readyEvent(std::size_t index) {
        while (ready_.size() <= index) {
            cudaEvent_t event;
            CNNSTUDIO_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
            ready_.push_back(event);
        }
        return ready_[index];
    }

    std::string where() const { return "rank " + std::to_string(rank_) + " (NCCL)"; }

    void check(ncclResult_t result, const char* call) const {
        if (result != ncclSuccess)
            throw Error(std::string(call) + " failed: " + ncclGetErrorString(result) + " (" +
                            ncclGetLastError(comm_) + ")",
                        where(), "check that every rank sees its own GPU and that NCCL_* settings agree");
    }

    CudaBackend& backend_;
    int rank_;
    ncclComm_t comm_ = nullptr;
    cudaStream_t side_ = nullptr;
    std::deque<cudaEvent_t> ready_;
    cudaEvent_t reduced_ = nullptr;
    std::size_t started_ = 0;
};

class NcclTransport : public DeviceTransport {
public:
    std::string name() const override { return "nccl"; }

    std::vector<char> createUniqueId() override {
        ncclUniqueId id;
        if (ncclResult_t result = ncclGetUniqueId(&id); result != ncclSuccess)
            throw Error(std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(result), "rank 0 (NCCL)");
        return std::vector<char>(id.internal, id.internal + sizeof id.internal);
    }

    std::unique_ptr<DeviceReducer> createReducer(Backend& gpuBackend, int rank, int ranks,
                                                 const std::vector<char>& uniqueId) override {
        auto* cuda = dynamic_cast<CudaBackend*>(&gpuBackend);
        if (!cuda)
            throw Error("NCCL needs a GPU backend, got '" + gpuBackend.name() + "'",
                        "rank " + std::to_string(rank));
        return std::make_unique<NcclReducer>(*cuda, rank, ranks, uniqueId);
    }
};

}  // namespace

std::unique_ptr<DeviceTransport> createNcclTransport() { return std::make_unique<NcclTransport>(); }

}  // namespace cnnstudio::kernels
