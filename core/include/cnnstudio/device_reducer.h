// Collectives between the GPU ranks of a data-parallel job, as the engine sees them. The GPU
// wing (kernels/nccl) implements them with NCCL; the application hands a DeviceTransport to
// createCommunicator (distributed.h), so the engine never reaches for the GPU libraries itself.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace cnnstudio {

class Backend;

// Collectives on GPU memory, enqueued on a GPU backend's stream so that they order with its
// ops and can be captured in its step graph.
class DeviceReducer {
public:
    virtual ~DeviceReducer() = default;
    // Averages `count` floats across ranks in place, on a side stream that first waits for the
    // work enqueued so far; finishAllReduces() makes the backend's stream wait for them all.
    virtual void startAllReduceMean(float* data, std::size_t count) = 0;
    virtual void finishAllReduces() = 0;
    virtual void broadcast(float* data, std::size_t count, int root) = 0;
};

// How GPU ranks find each other: rank 0 makes a unique id, the engine's communicator sends it
// to every rank over MPI, and every rank then makes its reducer from it.
class DeviceTransport {
public:
    virtual ~DeviceTransport() = default;
    virtual std::string name() const = 0;  // "nccl"
    virtual std::vector<char> createUniqueId() = 0;
    // Throws Error naming the rank when the transport cannot be set up.
    virtual std::unique_ptr<DeviceReducer> createReducer(Backend& gpuBackend, int rank, int ranks,
                                                         const std::vector<char>& uniqueId) = 0;
};

}  // namespace cnnstudio
