// The OpenMPI hostfile of a multi-node run (`cnnstudio-train --nodes M --hostfile F`): one
// "host [slots=N] [max_slots=N]" line per node, comments with #.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cnnstudio {

// One "host slots=N" line of an OpenMPI hostfile.
struct HostEntry {
    std::string host;
    int slots = 1;
};

// More ranks than any node runs; a larger count is a typing slip.
constexpr int kMaxSlotsPerHost = 65536;

// Parses an OpenMPI hostfile (comments with #, "host [slots=N] [max_slots=N]"). Throws Error
// naming file:line for anything else (slot counts outside 1..kMaxSlotsPerHost included), and
// when the file holds no host.
std::vector<HostEntry> readHostfile(const std::string& path);

// The same for hostfile text; `source` names it in errors.
std::vector<HostEntry> parseHostfile(std::string_view text, const std::string& source);

}  // namespace cnnstudio
