// Runs a program with arguments (no shell) and collects its exit code, output and errors.
#pragma once

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

}  // namespace cnnstudio::e2e
