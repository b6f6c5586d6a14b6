// Runs a program with arguments (no shell) and collects its exit code, output and errors.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <sys/types.h>

namespace cnnstudio::e2e {

struct ProcessResult {
    int exitCode = -1;  // 128 + signal when killed by one
    std::string out, err;
    double seconds = 0;
};

// The program's stdout and stderr go to files under `workFolder`; `environment` entries
// ("NAME=value") are added to this process's environment, replacing a variable of that name.
ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& workFolder,
                         const std::vector<std::string>& environment = {});

// Starts the program and returns at once; finish with waitProcess. With ownProcessGroup it leads
// a process group of its own, as a terminal's foreground job does (its pid is the group's id).
pid_t startProcess(const std::vector<std::string>& argv, const std::string& workFolder,
                   const std::vector<std::string>& environment = {}, bool ownProcessGroup = false);
ProcessResult waitProcess(pid_t pid, const std::string& workFolder);
// runProcess with the program's stdout a pipe that nobody reads, as after `program | head -3`
// has printed its lines and exited; `out` stays empty.
ProcessResult runProcessWithStdoutClosed(const std::vector<std::string>& argv, const std::string& workFolder,
                                        const std::vector<std::string>& environment = {});

// How many threads of process `pid` there are, and how many of them take (do not block) at least
// one of `signals`, from each thread's SigBlk in /proc/PID/task/*/status. A thread waiting in
// sigwait shows the signals it waits for as taken.
struct SignalTakers {
    int threads = 0, taking = 0;
};
SignalTakers threadsTakingSignals(pid_t pid, std::initializer_list<int> signals);

// The processes whose parent is `pid` (from /proc/*/stat).
std::vector<pid_t> childrenOf(pid_t pid);

}  // namespace cnnstudio::e2e
