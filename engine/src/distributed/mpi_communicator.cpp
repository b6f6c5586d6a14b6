// Reductions between CPU ranks with MPI, on host memory. Errors come back as codes
// (MPI_ERRORS_RETURN, set in initialiseWorld) and become an Error naming the rank and host;
// a collective that stalls ends the job through the watchdog.
#ifdef CNNSTUDIO_HAVE_MPI

#include "distributed/mpi_communicator.h"

#include <cstdlib>
#include <iostream>

#include "cnnstudio/error.h"

namespace cnnstudio {

MpiCommunicator::MpiCommunicator(Backend& backend, WorldInfo world, std::chrono::seconds stallTimeout,
                                 std::unique_ptr<DeviceReducer> deviceReducer)
    : backend_(backend), world_(std::move(world)),
      watchdog_(stallTimeout, [this](const std::string& what) { abortJob(what); }),
      deviceReducer_(std::move(deviceReducer)) {
    if (backend.isDevice() && !deviceReducer_)
        throw Error("MPI reductions need host memory; backend '" + backend.name() + "' is a GPU backend",
                    where(), "GPU ranks reduce through NCCL");
}

std::string MpiCommunicator::where() const {
    return "rank " + std::to_string(world_.rank) + " on " + world_.host;
}

void MpiCommunicator::check(int code, const char* call) const {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(std::string(call) + " failed: " + text, where(),
                "a peer rank may have died; see the other ranks' messages");
}

void MpiCommunicator::abortJob(const std::string& what) const {
    std::cerr << "cnnstudio-train: " << where() << ": " << what
              << ": a peer rank died or stalled; ending the job" << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::abort();  // MPI_Abort does not return; this tells the compiler so
}

void MpiCommunicator::startAllReduceMean(float* data, std::size_t count) {
    if (deviceReducer_) return deviceReducer_->startAllReduceMean(data, count);
    MPI_Request request;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, int(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request),
          "MPI_Iallreduce");
    pending_.push_back({request, data, count});
}

void MpiCommunicator::finishAllReduces() {
    if (deviceReducer_) return deviceReducer_->finishAllReduces();
    if (pending_.empty()) return;
    StallWatchdog::Guard guard(watchdog_, "gradient all-reduce");
    for (Pending& reduction : pending_) {
        check(MPI_Wait(&reduction.request, MPI_STATUS_IGNORE), "MPI_Wait");
        backend_.scale(reduction.data, 1.0f / float(world_.size), reduction.count);
    }
    pending_.clear();
}

void MpiCommunicator::broadcast(float* data, std::size_t count, int root) {
    StallWatchdog::Guard guard(watchdog_, "broadcast");
    if (deviceReducer_) {
        deviceReducer_->broadcast(data, count, root);
        backend_.synchronize();
        return;
    }
    check(MPI_Bcast(data, int(count), MPI_FLOAT, root, MPI_COMM_WORLD), "MPI_Bcast");
}

void MpiCommunicator::allReduceSumHost(std::span<double> values) {
    StallWatchdog::Guard guard(watchdog_, "metric all-reduce");
    check(MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_DOUBLE, MPI_SUM,
                        MPI_COMM_WORLD),
          "MPI_Allreduce");
}

void MpiCommunicator::barrier() {
    StallWatchdog::Guard guard(watchdog_, "barrier");
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

}  // namespace cnnstudio

#endif  // CNNSTUDIO_HAVE_MPI
