// What every fuzz target shares: the readers under test take files, so an input is written to
// a scratch file first (on /dev/shm when there is one: it is memory, and millions of writes
// wear no disk), and inputs of several files are split at a marker line.
//
// A target catches cnnstudio::Error only: that is how our readers refuse bad input. Anything
// else (a crash, a sanitizer report, another exception, a hang) is a bug libFuzzer reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace cnnstudio::fuzz {

// A folder of this process's own, made on first use and removed when the process ends
// normally (libFuzzer's -runs or -max_total_time reached; a crash leaves it for a look).
inline const std::filesystem::path& scratchFolder() {
    struct Folder {
        std::filesystem::path path;
        ~Folder() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    };
    static const Folder folder{[] {
        const std::filesystem::path base =
            std::filesystem::is_directory("/dev/shm") ? std::filesystem::path("/dev/shm")
                                                      : std::filesystem::temp_directory_path();
        std::filesystem::path made = base / ("cnnstudio-fuzz-" + std::to_string(getpid()));
        std::filesystem::create_directories(made);
        return made;
    }()};
    return folder.path;
}

inline void writeFile(const std::filesystem::path& file, std::string_view bytes) {
    std::ofstream stream(file, std::ios::binary | std::ios::trunc);
    stream.write(bytes.data(), std::streamsize(bytes.size()));
}

inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// The line that separates the files of a multi-file input (corpus files spell it out).
inline constexpr std::string_view kPartMarker = "\n--8<-- next file --8<--\n";

// The input cut at each marker into exactly `count` parts (missing ones empty, the last one
// keeps any further markers).
inline std::vector<std::string_view> splitParts(std::string_view input, std::size_t count) {
    std::vector<std::string_view> parts;
    while (parts.size() + 1 < count) {
        const std::size_t at = input.find(kPartMarker);
        if (at == std::string_view::npos) break;
        parts.push_back(input.substr(0, at));
        input.remove_prefix(at + kPartMarker.size());
    }
    parts.push_back(input);
    parts.resize(count);
    return parts;
}

}  // namespace cnnstudio::fuzz
