// Hostfile lines are split into words by hand rather than matched with std::regex: libstdc++'s
// regex recurses once per character, so a long line could overflow the stack, and a slot count
// is read with from_chars, which reports a number too large instead of throwing.
#include "train/hostfile.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

constexpr std::string_view kSpaces = " \t\r\v\f";
constexpr std::string_view kHostCharacters =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-";

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> found;
    for (std::size_t start = line.find_first_not_of(kSpaces); start != std::string_view::npos;) {
        const std::size_t end = std::min(line.find_first_of(kSpaces, start), line.size());
        found.push_back(line.substr(start, end - start));
        start = line.find_first_not_of(kSpaces, end);
    }
    return found;
}

// mpirun hands host names to ssh, which would read "-oProxyCommand=..." as an option.
void rejectOptionLikeHost(std::string_view host, const std::string& where) {
    if (host.front() != '-') return;
    throw Error("host name '" + std::string(host) + "' begins with '-', which ssh would take as an option",
                where, "write the machine's name or address; names cannot begin with '-'");
}

// "slots=N" or "max_slots=N": N, or nothing when the word is neither.
std::optional<int> slotCount(std::string_view word, std::string_view key, const std::string& where) {
    if (!word.starts_with(key) || word.size() == key.size() || word[key.size()] != '=') return std::nullopt;
    const std::string_view digits = word.substr(key.size() + 1);
    if (digits.empty() || digits.front() == '-' || digits.front() == '+') return std::nullopt;
    int count = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (end != digits.data() + digits.size()) return std::nullopt;
    if (error == std::errc::result_out_of_range || count < 1 || count > kMaxSlotsPerHost)
        throw Error(std::string(key) + " must be from 1 to " + std::to_string(kMaxSlotsPerHost) + ", not " +
                        std::string(digits),
                    where, "give the number of ranks the node runs");
    return count;
}

}  // namespace

std::vector<HostEntry> parseHostfile(std::string_view text, const std::string& source) {
    std::vector<HostEntry> hosts;
    int number = 0;
    while (!text.empty()) {
        const std::size_t newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        ++number;
        line = line.substr(0, line.find('#'));
        const std::vector<std::string_view> parts = words(line);
        if (parts.empty()) continue;
        const std::string where = source + ":" + std::to_string(number);
        rejectOptionLikeHost(parts.front(), where);
        const auto unreadable = [&] {
            return Error("cannot read '" + std::string(line) + "'", where, "each line is 'host' or 'host slots=N'");
        };
        if (parts.front().find_first_not_of(kHostCharacters) != std::string_view::npos) throw unreadable();
        HostEntry entry{std::string(parts.front()), 1};
        for (std::size_t i = 1; i < parts.size(); ++i) {
            if (std::optional<int> slots = slotCount(parts[i], "slots", where)) entry.slots = *slots;
            else if (!slotCount(parts[i], "max_slots", where)) throw unreadable();
        }
        hosts.push_back(entry);
    }
    if (hosts.empty()) throw Error("the hostfile names no host", source);
    return hosts;
}

std::vector<HostEntry> readHostfile(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw Error("cannot read the hostfile", path, "give a readable file of 'host slots=N' lines");
    std::ostringstream text;
    text << file.rdbuf();
    return parseHostfile(text.str(), path);
}

}  // namespace cnnstudio
