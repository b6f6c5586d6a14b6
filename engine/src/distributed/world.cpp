// Where this process stands in an mpirun job. OpenMPI exports the rank layout to every process
// it starts, so it is known before MPI_Init.
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "cnnstudio/distributed.h"
#include "cnnstudio/error.h"

#ifdef CNNSTUDIO_HAVE_MPI
#include <mpi.h>
#endif

namespace cnnstudio {
namespace {

int environmentInt(const char* name, int fallback) {
    const char* value = std::getenv(name);
    return value ? std::atoi(value) : fallback;
}

std::string hostName() {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    return name;
}

}  // namespace

bool launchedByMpi() { return environmentInt("OMPI_COMM_WORLD_SIZE", 1) > 1; }

WorldInfo initialiseWorld() {
    WorldInfo world;
    world.host = hostName();
    if (!launchedByMpi()) return world;
#ifdef CNNSTUDIO_HAVE_MPI
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
        // Errors come back as codes, so they become an Error naming the rank, not an abort.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world.size);
    world.localRank = environmentInt("OMPI_COMM_WORLD_LOCAL_RANK", 0);
    world.localSize = environmentInt("OMPI_COMM_WORLD_LOCAL_SIZE", 1);
    return world;
#else
    throw Error("started by mpirun with " + std::to_string(environmentInt("OMPI_COMM_WORLD_SIZE", 1)) +
                    " ranks, but this build of CNN Studio has no MPI support",
                "rank " + std::to_string(environmentInt("OMPI_COMM_WORLD_RANK", 0)),
                "rebuild with libopenmpi-dev installed (CNNSTUDIO_MPI=ON)");
#endif
}

void finaliseWorld() {
#ifdef CNNSTUDIO_HAVE_MPI
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised && !finalised) MPI_Finalize();
#endif
}

}  // namespace cnnstudio
