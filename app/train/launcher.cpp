#include "train/launcher.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/hardware.h"

extern char** environ;

namespace cnnstudio {
namespace {

std::string findOnPath(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::stringstream folders(path ? path : "/usr/bin:/bin");
    for (std::string folder; std::getline(folders, folder, ':');) {
        std::filesystem::path candidate = std::filesystem::path(folder) / program;
        if (!folder.empty() && access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
    return {};
}

// The NCCL and OpenMPI settings every rank must see; mpirun forwards them with -x.
const char* const forwardedVariables[] = {"NCCL_NVLS_ENABLE", "NCCL_DEBUG", "NCCL_SOCKET_IFNAME",
                                          "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS"};

pid_t runningChild = 0;
std::atomic<int> signalsForwarded{0};  // lock-free: touched by the signal handler

// mpirun ends the job at once on SIGINT/SIGTERM but passes SIGUSR1 on to every rank, which
// the ranks take as a graceful stop (checkpoint at an agreed step). So the first signal
// becomes SIGUSR1; a second one is passed on as it is and ends the job now.
void forwardSignal(int signal) {
    if (runningChild <= 0) return;
    kill(runningChild, signalsForwarded.fetch_add(1) == 0 ? SIGUSR1 : signal);
}

}  // namespace

std::vector<std::string> mpirunCommand(const DistributedRequest& request, const std::string& worker,
                                       const std::vector<std::string>& workerArguments) {
    if (request.ranksPerNode < 1) throw Error("--gpus / --ranks must be at least 1");
    if (request.nodes < 1) throw Error("--nodes must be at least 1");
    std::string mpirun = findOnPath("mpirun");
    if (mpirun.empty())
        throw Error("mpirun was not found on the PATH", "", "install OpenMPI (apt-get install openmpi-bin)");

    std::vector<std::string> argv{mpirun, "-np", std::to_string(request.ranksPerNode * request.nodes)};
    if (request.nodes > 1) {
        if (request.hostfile.empty())
            throw Error("--nodes " + std::to_string(request.nodes) + " needs --hostfile", "",
                        "list one 'host slots=N' line per node");
        std::vector<HostEntry> hosts = readHostfile(request.hostfile);
        if (int(hosts.size()) < request.nodes)
            throw Error("the hostfile lists " + std::to_string(hosts.size()) + " host(s), " +
                        std::to_string(request.nodes) + " nodes were asked for", request.hostfile);
        for (int i = 0; i < request.nodes; ++i)
            if (hosts[std::size_t(i)].slots < request.ranksPerNode)
                throw Error("host '" + hosts[std::size_t(i)].host + "' has " +
                            std::to_string(hosts[std::size_t(i)].slots) + " slot(s), " +
                            std::to_string(request.ranksPerNode) + " ranks per node were asked for",
                            request.hostfile);
        argv.insert(argv.end(), {"--hostfile", request.hostfile});
    } else if (request.gpuBackend) {
        HardwareInfo hardware = discoverHardware();
        if (int(hardware.gpus.size()) < request.ranksPerNode)
            throw Error(std::to_string(request.ranksPerNode) + " GPUs were asked for, this machine has " +
                            std::to_string(hardware.gpus.size()) +
                            (hardware.gpuProblem.empty() ? "" : " (" + hardware.gpuProblem + ")"),
                        "--gpus", "ask for at most " + std::to_string(hardware.gpus.size()));
    } else {
        argv.push_back("--oversubscribe");  // CPU ranks may outnumber cores
    }
    // One rank per GPU on each node, no core binding (each rank runs its own threads).
    argv.insert(argv.end(), {"--map-by", "ppr:" + std::to_string(request.ranksPerNode) + ":node",
                             "--bind-to", "none"});
    for (const char* variable : forwardedVariables)
        if (std::getenv(variable)) argv.insert(argv.end(), {"-x", variable});
    argv.push_back(worker);
    argv.insert(argv.end(), workerArguments.begin(), workerArguments.end());
    return argv;
}

std::string quoteCommand(const std::vector<std::string>& argv) {
    std::string text;
    for (const std::string& argument : argv) {
        if (!text.empty()) text += ' ';
        bool plain = !argument.empty() &&
                     argument.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                "0123456789-_./=:,+@%") == std::string::npos;
        if (plain) {
            text += argument;
            continue;
        }
        text += '\'';
        for (char c : argument) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
        text += '\'';
    }
    return text;
}

int runMpirun(const std::vector<std::string>& argv) {
    if (geteuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    std::vector<char*> arguments;
    for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
    arguments.push_back(nullptr);
    pid_t child = 0;
    if (int error = posix_spawn(&child, argv[0].c_str(), nullptr, nullptr, arguments.data(), environ); error != 0)
        throw Error("cannot start " + argv[0] + ": " + std::strerror(error));
    runningChild = child;
    std::signal(SIGINT, forwardSignal);
    std::signal(SIGTERM, forwardSignal);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    runningChild = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace cnnstudio
