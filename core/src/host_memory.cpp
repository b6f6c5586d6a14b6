#include "cnnstudio/host_memory.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace cnnstudio {
namespace {

namespace fs = std::filesystem;

// "MemAvailable:   22517204 kB" -> bytes.
std::optional<std::size_t> memAvailable(const fs::path& meminfo) {
    std::ifstream in(meminfo);
    std::string key, rest;
    std::size_t kibibytes = 0;
    while (in >> key >> kibibytes) {
        std::getline(in, rest);
        if (key == "MemAvailable:") return kibibytes * 1024;
    }
    return std::nullopt;
}

// A cgroup file holding one number; none for "max" (no limit) or no file.
std::optional<std::size_t> cgroupNumber(const fs::path& file) {
    std::ifstream in(file);
    std::string text;
    if (!(in >> text) || text == "max") return std::nullopt;
    try {
        return std::size_t(std::stoull(text));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// A cgroup v1 hierarchy's controller list, "cpu,cpuacct" or "memory", includes memory.
bool namesMemory(std::string_view controllers) {
    for (std::size_t start = 0; start <= controllers.size();) {
        const std::size_t end = std::min(controllers.find(',', start), controllers.size());
        if (controllers.substr(start, end - start) == "memory") return true;
        start = end + 1;
    }
    return false;
}

// Where one cgroup version keeps the memory controller's files.
struct MemoryController {
    fs::path mount;           // the hierarchy's top, under sys/fs/cgroup
    std::string limit, usage;  // file names in each cgroup folder
};

// This process's memory cgroup folders, its own first, then each parent up to the mount.
// /proc/self/cgroup names it on "0::/path" (v2) or "N:...memory...:/path" (v1).
std::vector<std::pair<fs::path, MemoryController>> memoryCgroups(const fs::path& root) {
    const MemoryController v2{root / "sys/fs/cgroup", "memory.max", "memory.current"};
    const MemoryController v1{root / "sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"};
    std::vector<std::pair<fs::path, MemoryController>> folders;
    std::ifstream in(root / "proc/self/cgroup");
    for (std::string line; std::getline(in, line);) {
        const std::size_t first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
        const MemoryController* controller = controllers.empty() ? &v2 : namesMemory(controllers) ? &v1 : nullptr;
        if (!controller) continue;
        const fs::path own = fs::path(line.substr(second + 1)).relative_path();
        for (fs::path folder = own.empty() ? controller->mount : controller->mount / own;;
             folder = folder.parent_path()) {
            folders.emplace_back(folder, *controller);
            if (folder == controller->mount || !folder.has_relative_path()) break;
        }
    }
    return folders;
}

}  // namespace

std::optional<std::size_t> availableHostMemoryBytes(const fs::path& root) {
    std::optional<std::size_t> available = memAvailable(root / "proc/meminfo");
    if (!available) return std::nullopt;
    for (const auto& [folder, controller] : memoryCgroups(root)) {
        const auto limit = cgroupNumber(folder / controller.limit);
        if (!limit) continue;
        const std::size_t used = cgroupNumber(folder / controller.usage).value_or(0);
        available = std::min(*available, *limit > used ? *limit - used : 0);
    }
    return available;
}

}  // namespace cnnstudio
