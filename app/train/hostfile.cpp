#include "train/hostfile.h"

#include <fstream>
#include <regex>

#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

// mpirun hands host names to ssh, which would read "-oProxyCommand=..." as an option.
void rejectOptionLikeHost(const std::string& line, const std::string& where) {
    const std::size_t start = line.find_first_not_of(" \t");
    if (line[start] != '-') return;
    const std::string host = line.substr(start, line.find_first_of(" \t\r", start) - start);
    throw Error("host name '" + host + "' begins with '-', which ssh would take as an option", where,
                "write the machine's name or address; names cannot begin with '-'");
}

}  // namespace

std::vector<HostEntry> readHostfile(const std::string& path) {
    std::ifstream file(path);
    if (!file) throw Error("cannot read the hostfile", path, "give a readable file of 'host slots=N' lines");
    static const std::regex line(R"(^\s*([A-Za-z0-9_.:-]+)((?:\s+(?:slots|max_slots)=\d+)*)\s*$)");
    static const std::regex slots(R"(\bslots=(\d+))");
    std::vector<HostEntry> hosts;
    int number = 0;
    for (std::string text; std::getline(file, text);) {
        ++number;
        text = text.substr(0, text.find('#'));
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
        rejectOptionLikeHost(text, path + ":" + std::to_string(number));
        std::smatch match;
        if (!std::regex_match(text, match, line))
            throw Error("cannot read '" + text + "'", path + ":" + std::to_string(number),
                        "each line is 'host' or 'host slots=N'");
        HostEntry entry{match[1], 1};
        std::smatch slotMatch;
        std::string options = match[2];
        if (std::regex_search(options, slotMatch, slots)) entry.slots = std::stoi(slotMatch[1]);
        if (entry.slots < 1)
            throw Error("slots must be at least 1", path + ":" + std::to_string(number));
        hosts.push_back(entry);
    }
    if (hosts.empty()) throw Error("the hostfile names no host", path);
    return hosts;
}

}  // namespace cnnstudio
