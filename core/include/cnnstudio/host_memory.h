// How much of this machine's memory a process may still take, so that host backends refuse a
// batch too large before training instead of being killed by the kernel's OOM killer mid-step
// (Linux overcommits: malloc succeeds, the first touch of the pages kills the process).
//
//   available = MemAvailable of /proc/meminfo, lowered to the headroom (limit minus usage) of
//               this process's memory cgroup and each cgroup above it that sets a limit: a
//               container or a systemd slice caps a process below the machine. cgroup v2
//               (memory.max, memory.current) and v1 (memory.limit_in_bytes, ...usage_in_bytes).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>

namespace cnnstudio {

// None where /proc/meminfo cannot be read (not Linux). `root` stands for "/" (tests pass a
// folder holding proc/meminfo, proc/self/cgroup and sys/fs/cgroup/...)..
std::optional<std::size_t> availableHostMemoryBytes(const std::filesystem::path& root = "/");

}  // namespace cnnstudio
