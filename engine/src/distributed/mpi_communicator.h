#pragma once

#ifdef CNNSTUDIO_HAVE_MPI

#include <memory>
#include <vector>

#include <mpi.h>

#include "cnnstudio/distributed.h"
#include "distributed/stall_watchdog.h"

namespace cnnstudio {

// Reduces through MPI on host memory; with a device reducer (NCCL between GPU ranks), device
// memory goes through it and only host values (metrics) through MPI.
class MpiCommunicator : public Communicator {
public:
    MpiCommunicator(Backend& backend, WorldInfo world, std::chrono::seconds stallTimeout,
                    std::unique_ptr<DeviceReducer> deviceReducer = nullptr);
    const WorldInfo& world() const override { return world_; }
    std::string transport() const override { return deviceReducer_ ? "nccl" : "mpi"; }
    void startAllReduceMean(float* data, std::size_t count) override;
    void finishAllReduces() override;
    void broadcast(float* data, std::size_t count, int root) override;
    void allReduceSumHost(std::span<double> values) override;
    void barrier() override;

private:
    struct Pending {
        MPI_Request request;
        float* data;
        std::size_t count;
    };
    std::string where() const;
    void check(int code, const char* call) const;
    [[noreturn]] void abortJob(const std::string& what) const;

    Backend& backend_;
    WorldInfo world_;
    StallWatchdog watchdog_;
    std::unique_ptr<DeviceReducer> deviceReducer_;
    std::vector<Pending> pending_;
};

}  // namespace cnnstudio

#endif  // CNNSTUDIO_HAVE_MPI
