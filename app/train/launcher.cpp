#include "train/launcher.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
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
    // When the first stop was passed on; none before.
    std::optional<std::chrono::steady_clock::time_point> firstForwardedAt() {
        std::lock_guard lock(mutex_);
        return firstForwardedAt_;
    }

private:
    void passOn(int signal) {  // mutex_ held
        if (forwarded_++ == 0) {
            firstForwardedAt_ = std::chrono::steady_clock::now();
            signal = SIGUSR1;
        }
        kill(mpirun_, signal);
    }

    std::mutex mutex_;
    pid_t mpirun_ = 0;
    int forwarded_ = 0;
    int waiting_ = 0;
    std::optional<std::chrono::steady_clock::time_point> firstForwardedAt_;
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

// How often the launcher looks at mpirun while relaying its messages, and how long it waits
// for the last of them once mpirun has ended.
constexpr std::chrono::milliseconds kPollInterval{200}, kDrainWait{50};
// How long mpirun gets to end its ranks after SIGTERM before its process group is killed.
constexpr std::chrono::seconds kKillAfterTerm{5};

// Passes mpirun's standard error through unchanged, line by line, and keeps the line that says
// which rank ended the job.
class ErrorRelay {
public:
    enum class Relayed { Nothing, Some, End };

    explicit ErrorRelay(int fd) : fd_(fd) {}
    ~ErrorRelay() { ::close(fd_); }
    ErrorRelay(const ErrorRelay&) = delete;
    ErrorRelay& operator=(const ErrorRelay&) = delete;

    // Relays what arrives within `timeout`; End once every writer has closed the pipe.
    Relayed relayFor(std::chrono::milliseconds timeout) {
        if (closed_) return Relayed::End;
        pollfd readable{fd_, POLLIN, 0};
        if (::poll(&readable, 1, int(timeout.count())) <= 0) return Relayed::Nothing;  // or EINTR
        char buffer[4096];
        const ssize_t got = ::read(fd_, buffer, sizeof buffer);
        if (got < 0) return errno == EINTR ? Relayed::Nothing : (closed_ = true, Relayed::End);
        if (got == 0) {
            closed_ = true;
            return Relayed::End;
        }
        pending_.append(buffer, std::size_t(got));
        for (std::size_t end; (end = pending_.find('\n')) != std::string::npos;) {
            relayLine(pending_.substr(0, end + 1));
            pending_.erase(0, end + 1);
        }
        return Relayed::Some;
    }
    // Relays an unfinished last line.
    void finish() {
        if (!pending_.empty()) relayLine(pending_ + "\n");
        pending_.clear();
    }
    const std::string& failedRank() const { return failedRank_; }

private:
    void relayLine(const std::string& line) {
        std::fwrite(line.data(), 1, line.size(), stderr);
        std::fflush(stderr);
        if (failedRank_.empty() && isRankFailureLine(line)) failedRank_ = describeRankFailure(line);
    }

    int fd_;
    bool closed_ = false;
    std::string pending_;
    std::string failedRank_;
};

// Ends a job that did not take a stop: SIGTERM to mpirun (which ends every rank) once `grace`
// has passed since the stop, SIGKILL to its process group kKillAfterTerm later.
class JobEnder {
public:
    JobEnder(pid_t mpirun, std::chrono::seconds grace) : mpirun_(mpirun), grace_(grace) {}

    void endIfStillRunning(std::chrono::steady_clock::time_point stopped) {
        const auto waited = std::chrono::steady_clock::now() - stopped;
        if (!terminated_ && waited >= grace_) {
            std::fprintf(stderr, "cnnstudio: the distributed job did not end within %lld s of the stop; ending it\n",
                         static_cast<long long>(grace_.count()));
            ::kill(mpirun_, SIGTERM);
            terminated_ = true;
        } else if (terminated_ && !killed_ && waited >= grace_ + kKillAfterTerm) {
            ::kill(-mpirun_, SIGKILL);
            killed_ = true;
        }
    }
    bool ended() const { return terminated_; }

private:
    pid_t mpirun_;
    std::chrono::seconds grace_;
    bool terminated_ = false, killed_ = false;
};

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

MpirunResult runMpirun(const std::vector<std::string>& argv, std::chrono::seconds stopGrace) {
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
    ::setpgid(child, child);  // as the child does, so that the group exists before it is signalled
    ::close(errorPipe[1]);
    signalsToMpirun.started(child);

    // mpirun's standard error is relayed until mpirun ends, not until the pipe closes: a process
    // it started may outlive it holding the pipe. A job that has not ended `stopGrace` after the
    // first stop was passed on is ended (mpirun, or the ranks, did not take the stop).
    ErrorRelay relay(errorPipe[0]);
    MpirunResult result;
    JobEnder ender(child, stopGrace);
    int status = 0;
    for (bool piped = true;;) {
        if (piped) piped = relay.relayFor(kPollInterval) != ErrorRelay::Relayed::End;
        else ::poll(nullptr, 0, int(kPollInterval.count()));
        const pid_t ended = ::waitpid(child, &status, WNOHANG);
        if (ended == child || (ended < 0 && errno != EINTR)) break;
        if (const auto stopped = signalsToMpirun.firstForwardedAt()) ender.endIfStillRunning(*stopped);
    }
    while (relay.relayFor(kDrainWait) == ErrorRelay::Relayed::Some) {
    }
    relay.finish();
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.failedRank = relay.failedRank();
    result.stopForwarded = signalsToMpirun.firstForwardedAt().has_value();
    result.endedAfterStop = ender.ended();
    return result;
}

}  // namespace cnnstudio
