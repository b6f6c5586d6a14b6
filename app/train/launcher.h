// Turns `cnnstudio-train --gpus N` / `--ranks N` / `--nodes M --hostfile F` into the mpirun
// command that starts one worker per rank, and runs it. The worker's own arguments pass
// through unchanged; the ranks see they were started by mpirun and train data-parallel.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "train/hostfile.h"

namespace cnnstudio {

struct DistributedRequest {
    int ranksPerNode = 1;    // --gpus N (GPU backends) or --ranks N (CPU backends)
    int nodes = 1;           // --nodes M
    std::string hostfile;    // --hostfile F (required with nodes > 1)
    bool gpuBackend = false;
};

// The full argv: mpirun, its options, then `worker` and `workerArguments`. Checks the request
// against this machine: mpirun on the PATH, enough GPUs for a one-node GPU run, enough hosts
// and slots in the hostfile. Throws Error saying what is wrong and what to do.
std::vector<std::string> mpirunCommand(const DistributedRequest& request, const std::string& worker,
                                       const std::vector<std::string>& workerArguments);

// Shell-quoted, for --dry-run and logs (the command itself is run without a shell).
std::string quoteCommand(const std::vector<std::string>& argv);

struct MpirunResult {
    int status = 0;          // mpirun's exit status (128 + signal when it was killed)
    // "rank 2 (pid 4711 on node-a) was killed by signal 9 (Killed)"; empty when mpirun named none
    std::string failedRank;
    bool stopForwarded = false;   // a stop signal to this launcher was passed on to mpirun
    bool endedAfterStop = false;  // the job outlived the stop's grace and the launcher ended it
};

// Runs argv (no shell) in its own process group, so that a terminal's Ctrl-C reaches only this
// launcher, which forwards the stop signals it watches (common/stop_signals.h; watchStopSignals
// first) to it: the first as SIGUSR1, which mpirun passes on to the ranks as a graceful stop; a
// later one as it came (SIGINT, SIGTERM: mpirun ends every rank at once). A job still running
// `stopGrace` after the first stop is ended all the same: mpirun gets SIGTERM, its process group
// SIGKILL seconds later (seen: mpirun outliving ranks that had stopped, the launcher waiting on
// it forever). mpirun gets SIGTERM, ending every rank, if this launcher dies first (the app's
// Kill). Its standard error is passed through and read for the rank that ended the job; the
// launcher returns when mpirun ends, even if a process it left behind holds that pipe. When
// running as root, allows OpenMPI to run as root.
MpirunResult runMpirun(const std::vector<std::string>& argv, std::chrono::seconds stopGrace);

}  // namespace cnnstudio
