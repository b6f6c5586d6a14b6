#include "run_process.h"

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace cnnstudio::e2e {

namespace {

std::string readFile(const std::string& path) {
    std::ifstream stream(path);
    std::ostringstream text;
    text << stream.rdbuf();
    return text.str();
}

// startProcess, with the program's stdout on `stdoutDescriptor` where it is not -1.
pid_t spawnProcess(const std::vector<std::string>& argv, const std::string& workFolder,
                   const std::vector<std::string>& environment, bool ownProcessGroup, int stdoutDescriptor) {
    std::vector<char*> arguments;
    for (const auto& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
    arguments.push_back(nullptr);
    std::vector<std::string> variables;
    // A given variable replaces this process's one of the same name (getenv reads the first).
    auto givenHere = [&environment](const std::string& entry) {
        const std::string name = entry.substr(0, entry.find('=') + 1);
        for (const auto& given : environment)
            if (given.rfind(name, 0) == 0) return true;
        return false;
    };
    for (char** entry = environ; *entry; ++entry)
        if (!givenHere(*entry)) variables.emplace_back(*entry);
    variables.insert(variables.end(), environment.begin(), environment.end());
    std::vector<char*> environmentPointers;
    for (auto& variable : variables) environmentPointers.push_back(variable.data());
    environmentPointers.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = workFolder + "/stdout.txt", err = workFolder + "/stderr.txt";
    if (stdoutDescriptor >= 0) posix_spawn_file_actions_adddup2(&actions, stdoutDescriptor, 1);
    else posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    if (ownProcessGroup) {
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attributes, 0);
    }
    pid_t pid = 0;
    const int failed =
        posix_spawn(&pid, arguments[0], &actions, &attributes, arguments.data(), environmentPointers.data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (failed) throw std::runtime_error("cannot start " + argv[0]);
    return pid;
}

}  // namespace

pid_t startProcess(const std::vector<std::string>& argv, const std::string& workFolder,
                   const std::vector<std::string>& environment, bool ownProcessGroup) {
    return spawnProcess(argv, workFolder, environment, ownProcessGroup, -1);
}

ProcessResult waitProcess(pid_t pid, const std::string& workFolder) {
    ProcessResult result;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) throw std::runtime_error("waitpid failed");
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = readFile(workFolder + "/stdout.txt");
    result.err = readFile(workFolder + "/stderr.txt");
    return result;
}

ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& workFolder,
                         const std::vector<std::string>& environment) {
    const auto start = std::chrono::steady_clock::now();
    ProcessResult result = waitProcess(startProcess(argv, workFolder, environment), workFolder);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

ProcessResult runProcessWithStdoutClosed(const std::vector<std::string>& argv, const std::string& workFolder,
                                        const std::vector<std::string>& environment) {
    std::filesystem::remove(workFolder + "/stdout.txt");  // nothing of an earlier run is read back as its output
    int pipeEnds[2];
    if (::pipe2(pipeEnds, O_CLOEXEC) != 0) throw std::runtime_error("cannot make a pipe");
    ::close(pipeEnds[0]);  // no reader: every write to the pipe fails with EPIPE (or SIGPIPE)
    pid_t pid = 0;
    try {
        pid = spawnProcess(argv, workFolder, environment, false, pipeEnds[1]);
    } catch (...) {
        ::close(pipeEnds[1]);
        throw;
    }
    ::close(pipeEnds[1]);
    return waitProcess(pid, workFolder);
}

SignalTakers threadsTakingSignals(pid_t pid, std::initializer_list<int> signals) {
    SignalTakers takers;
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
        std::ifstream status(task.path() / "status");
        std::string line;
        while (std::getline(status, line) && line.rfind("SigBlk:", 0) != 0) {}
        if (line.empty()) continue;  // the thread ended while being read
        const unsigned long long blocked = std::stoull(line.substr(7), nullptr, 16);
        bool takes = false;
        for (int signal : signals) takes = takes || !(blocked >> (signal - 1) & 1);
        takers.taking += takes;
        ++takers.threads;
    }
    return takers;
}

std::vector<pid_t> childrenOf(pid_t pid) {
    std::vector<pid_t> children;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
        const std::string stat = readFile(entry.path() / "stat");
        const std::size_t end = stat.rfind(')');
        if (end == std::string::npos) continue;  // the process ended while being read
        std::istringstream fields(stat.substr(end + 1));
        std::string state;
        pid_t parent = 0;
        if (fields >> state >> parent && parent == pid) children.push_back(pid_t(std::stol(name)));
    }
    return children;
}

}  // namespace cnnstudio::e2e
