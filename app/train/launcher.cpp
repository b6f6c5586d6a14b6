#include "train/launcher.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <regex>
#include <sstream>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/hardware.h"
#include "common/stop_signals.h"

extern char** environ;  // handed to mpirun as it is

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
// CNNSTUDIO_RUN_LAYOUT tells the ranks how the launcher laid them out (app/train/run_config.h).
const char* const forwardedVariables[] = {"NCCL_NVLS_ENABLE", "NCCL_DEBUG", "NCCL_SOCKET_IFNAME",
                                          "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "CNNSTUDIO_RUN_LAYOUT"};

// mpirun ends the job at once on SIGINT/SIGTERM but passes SIGUSR1 on to every rank, which
// the ranks take as a graceful stop (checkpoint at an agreed step). So the launcher's first stop
// signal reaches mpirun as SIGUSR1; a later one is passed on as it came and ends the job now.
// One that comes before mpirun exists is passed on once it does.
class SignalsToMpirun {
public:
    void forward(int signal) {
        std::lock_guard lock(mutex_);
        if (mpirun_ <= 0) {
            waiting_ = signal;
            return;
        }
        passOn(signal);
    }
    void started(pid_t mpirun) {
        std::lock_guard lock(mutex_);
        mpirun_ = mpirun;
        if (waiting_ != 0) passOn(waiting_);
    }
    bool anyForwarded() {
        std::lock_guard lock(mutex_);
        return forwarded_ > 0;
    }

private:
    void passOn(int signal) { kill(mpirun_, forwarded_++ == 0 ? SIGUSR1 : signal); }  // mutex_ held

    std::mutex mutex_;
    pid_t mpirun_ = 0;
    int forwarded_ = 0;
    int waiting_ = 0;
};

// OpenMPI's words for a rank that ended the job: "mpirun noticed that process rank 2 with PID
// 4711 on node a exited on signal 9 (Killed)." (the PID is often 0). A rank that exits non-zero
// is reported over several lines and names no signal; the ranks' own messages say more there.
bool isRankFailureLine(const std::string& line) {
    static const std::regex noticed(R"(process rank \d+ with PID \d+ on node \S+ exited on signal \d+)");
    return std::regex_search(line, noticed);
}

std::string describeRankFailure(const std::string& line) {
    static const std::regex parts(R"(process rank (\d+) with PID (\d+) on node (\S+) exited on signal (\d+)( \(([^)]*)\))?)");
    std::smatch match;
    if (!std::regex_search(line, match, parts)) return {};
    // OpenMPI 4.1 often reports PID 0 for a rank it lost: leave out a pid that says nothing.
    const std::string pid = match[2].str() == "0" ? "" : "pid " + match[2].str() + " ";
    std::string text = "rank " + match[1].str() + " (" + pid + "on " + match[3].str() + ") was killed by signal " +
                       match[4].str();
    if (match[6].matched) text += " (" + match[6].str() + ")";
    return text;
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
    // No standard input for the ranks: mpirun runs in its own process group, and reading a
    // terminal from there would stop it (SIGTTIN).
    argv.insert(argv.end(), {"--map-by", "ppr:" + std::to_string(request.ranksPerNode) + ":node",
                             "--bind-to", "none", "--stdin", "none"});
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

MpirunResult runMpirun(const std::vector<std::string>& argv) {
    if (geteuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    std::vector<char*> arguments;
    for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
    arguments.push_back(nullptr);
    int errorPipe[2];
    if (::pipe2(errorPipe, O_CLOEXEC) != 0) throw Error(std::string("cannot make a pipe: ") + std::strerror(errno));
    SignalsToMpirun signalsToMpirun;
    const StopSignalsRedirected redirect([&signalsToMpirun](int signal) { signalsToMpirun.forward(signal); });
    const pid_t parent = ::getpid();
    const pid_t child = ::fork();
    if (child < 0) {
        const int why = errno;
        ::close(errorPipe[0]);
        ::close(errorPipe[1]);
        throw Error("cannot start " + argv[0] + ": " + std::strerror(why));
    }
    if (child == 0) {
        // Only async-signal-safe calls from here to exec.
        // Its own process group: a terminal's Ctrl-C reaches this launcher alone, which turns
        // it into the checkpointed stop; mpirun itself would end the job at once.
        ::setpgid(0, 0);
        // Whatever ends this launcher (the app's Kill, kill -9) ends the job: mpirun takes
        // SIGTERM as "kill every rank".
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl took hold
        unblockAllSignals();  // this launcher's stop signals are blocked for its waiting thread
        // Its standard error is a pipe to this launcher: once the launcher is gone, mpirun must
        // still get to end the ranks rather than die of SIGPIPE on its next message.
        ::signal(SIGPIPE, SIG_IGN);
        ::dup2(errorPipe[1], STDERR_FILENO);
        ::execve(arguments[0], arguments.data(), environ);
        ::_exit(127);
    }
    ::close(errorPipe[1]);
    signalsToMpirun.started(child);
    // mpirun's standard error passes through unchanged; the line saying which rank ended the job
    // is kept for the run's `failed` event.
    MpirunResult result;
    FILE* errors = ::fdopen(errorPipe[0], "r");
    char* line = nullptr;
    std::size_t capacity = 0;
    for (ssize_t length; (length = ::getline(&line, &capacity, errors)) >= 0;) {
        std::fwrite(line, 1, std::size_t(length), stderr);
        std::fflush(stderr);
        if (std::string text(line, std::size_t(length)); result.failedRank.empty() && isRankFailureLine(text))
            result.failedRank = describeRankFailure(text);
    }
    std::free(line);
    std::fclose(errors);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.stopForwarded = signalsToMpirun.anyForwarded();
    return result;
}

}  // namespace cnnstudio
