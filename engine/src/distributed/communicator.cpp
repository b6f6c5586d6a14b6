#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "distributed/local_communicator.h"
#include "distributed/mpi_communicator.h"

namespace cnnstudio {
namespace {

#ifdef CNNSTUDIO_HAVE_MPI
// The GPU ranks' reducer; the transport's unique id travels from rank 0 through MPI.
std::unique_ptr<DeviceReducer> bootstrapDeviceReducer(DeviceTransport& transport, Backend& backend,
                                                      const WorldInfo& world) {
    std::vector<char> id = world.rank == 0 ? transport.createUniqueId() : std::vector<char>();
    int bytes = int(id.size());
    MPI_Bcast(&bytes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    id.resize(std::size_t(bytes));
    MPI_Bcast(id.data(), bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
    return transport.createReducer(backend, world.rank, world.size, id);
}
#endif

}  // namespace

std::unique_ptr<Communicator> createCommunicator(Backend& backend, DeviceTransport* deviceTransport,
                                                 std::chrono::seconds stallTimeout) {
    WorldInfo world = initialiseWorld();
    if (world.size == 1) return std::make_unique<LocalCommunicator>(world);
#ifdef CNNSTUDIO_HAVE_MPI
    if (!backend.isDevice()) return std::make_unique<MpiCommunicator>(backend, world, stallTimeout);
    if (deviceTransport)
        return std::make_unique<MpiCommunicator>(
            backend, world, stallTimeout, bootstrapDeviceReducer(*deviceTransport, backend, world));
#endif
    throw Error("no transport between " + backend.name() + " ranks in this build",
                "rank " + std::to_string(world.rank), "rebuild with CUDA, NCCL and MPI");
}

GradientSync::GradientSync(Network& network, Communicator& communicator, std::size_t bucketBytes)
    : network_(network), communicator_(communicator),
      bucketFloats_(std::max<std::size_t>(bucketBytes / sizeof(float), 1)) {
    if (communicator.world().size > 1)
        network.setGradientsReadyHook(
            [this](std::size_t offset, std::size_t count) { onGradientsReady(offset, count); });
}

void GradientSync::onGradientsReady(std::size_t offset, std::size_t count) {
    // Slices arrive front to back and contiguous (Network lays parameters out that way).
    if (pendingCount_ == 0) pendingOffset_ = offset;
    pendingCount_ += count;
    if (pendingCount_ >= bucketFloats_) {
        // Mid-backward: the bucket's weight gradients may still be running beside it.
        network_.backend().awaitWeightGradients();
        communicator_.startAllReduceMean(network_.gradients() + pendingOffset_, pendingCount_);
        pendingCount_ = 0;
    }
}

void GradientSync::finish() {
    if (communicator_.world().size == 1) return;
    if (pendingCount_ > 0) {
        communicator_.startAllReduceMean(network_.gradients() + pendingOffset_, pendingCount_);
        pendingCount_ = 0;
    }
    communicator_.finishAllReduces();
}

}  // namespace cnnstudio
