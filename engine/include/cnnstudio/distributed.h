// Data-parallel training across ranks (one process per GPU, launched by mpirun): a
// Communicator reduces gradients and metrics across ranks, and GradientSync all-reduces the
// flat gradient buffer in buckets while backward is still running, last layers first.
// Between GPU ranks the gradients go through NCCL (bootstrapped through MPI); between CPU
// ranks through MPI. Without MPI (or outside mpirun) the world is one rank.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "cnnstudio/backend.h"
#include "cnnstudio/device_reducer.h"

namespace cnnstudio {

class Network;

struct WorldInfo {
    int rank = 0, size = 1;
    int localRank = 0, localSize = 1;  // among the ranks on this host
    std::string host;
};

// True when this process was started by mpirun with more than one rank.
bool launchedByMpi();
// Initialises MPI when launchedByMpi() (once per process) and returns this process's place.
WorldInfo initialiseWorld();
void finaliseWorld();

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual const WorldInfo& world() const = 0;
    virtual std::string transport() const = 0;  // "local", "mpi", "nccl"

    // Starts averaging `count` floats of backend memory across ranks, in place. It may finish
    // later: finishAllReduces() makes every started reduction visible to later backend work.
    virtual void startAllReduceMean(float* data, std::size_t count) = 0;
    virtual void finishAllReduces() = 0;
    void allReduceMean(float* data, std::size_t count) {
        startAllReduceMean(data, count);
        finishAllReduces();
    }
    // Root's values of `count` floats of backend memory to every rank.
    virtual void broadcast(float* data, std::size_t count, int root) = 0;
    // Sums host values across ranks (metrics, counts).
    virtual void allReduceSumHost(std::span<double> values) = 0;
    virtual void barrier() = 0;
};

// A communicator over the world from initialiseWorld(): `deviceTransport` (NCCL, from the
// backend registry) when the backend is a GPU backend and the world has several ranks, MPI for
// CPU backends, local for one rank. A collective that does not complete within `stallTimeout`
// ends the whole job with an error naming this rank and host (a dead or stalled peer must not
// hang the others).
std::unique_ptr<Communicator> createCommunicator(
    Backend& backend, DeviceTransport* deviceTransport,
    std::chrono::seconds stallTimeout = std::chrono::seconds(30));

// PyTorch DDP's bucket. A network whose gradients fit in one bucket (fer-cnn's 14 MB) is
// all-reduced only after the whole backward pass: smaller buckets overlap it.
inline constexpr std::size_t kDefaultGradientBucketBytes = std::size_t(25) << 20;

// Buckets the network's gradient slices as backward completes them and all-reduces each full
// bucket at once, so communication overlaps the rest of backward.
class GradientSync {
public:
    GradientSync(Network& network, Communicator& communicator,
                 std::size_t bucketBytes = kDefaultGradientBucketBytes);
    // Called after backward: reduces what is left and waits for every bucket.
    void finish();

private:
    void onGradientsReady(std::size_t offset, std::size_t count);
    Network& network_;
    Communicator& communicator_;
    std::size_t bucketFloats_;
    std::size_t pendingOffset_ = 0, pendingCount_ = 0;
};

}  // namespace cnnstudio
