// The OpenMPI hostfile of a multi-node run (`cnnstudio-train --nodes M --hostfile F`): one
// "host [slots=N] [max_slots=N]" line per node, comments with #.
#pragma once

#include <string>
#include <vector>

namespace cnnstudio {

// One "host slots=N" line of an OpenMPI hostfile.
struct HostEntry {
    std::string host;
    int slots = 1;
};

// Parses an OpenMPI hostfile (comments with #, "host [slots=N] [max_slots=N]"). Throws Error
// naming file:line for anything else, and when the file holds no host.
std::vector<HostEntry> readHostfile(const std::string& path);

}  // namespace cnnstudio
