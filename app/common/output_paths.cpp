#include "common/output_paths.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <unistd.h>

#include "cnnstudio/error.h"

namespace cnnstudio {

void requireOutputIsNotInput(const std::filesystem::path& output, const std::string& outputOption,
                             const std::filesystem::path& input, const std::string& inputOption) {
    if (output.empty() || input.empty()) return;
    std::error_code notComparable;  // either does not exist: then they are not one file
    const bool sameFile = std::filesystem::equivalent(output, input, notComparable);
    bool insideInput = false;
    if (!sameFile && std::filesystem::is_directory(input, notComparable)) {
        const std::filesystem::path folder = std::filesystem::canonical(input, notComparable);
        const std::filesystem::path written = std::filesystem::weakly_canonical(output, notComparable);
        insideInput = !notComparable &&
                      std::mismatch(folder.begin(), folder.end(), written.begin(), written.end()).first == folder.end();
    }
    if (sameFile || insideInput)
        throw Error(std::string(sameFile ? "is the same file as " : "is inside ") + inputOption + " " + input.string() +
                        ", which writing it would damage",
                    outputOption + " " + output.string(), "write " + outputOption + " to another path");
}

void requireWritableOutput(const std::filesystem::path& output, const std::string& option) {
    if (output.empty()) return;
    const std::string where = option + " " + output.string();
    std::error_code notThere;
    if (std::filesystem::is_directory(output, notThere))
        throw Error("is a folder, not a file", where, "name a file in it");
    const std::filesystem::path folder = output.parent_path().empty() ? "." : output.parent_path();
    if (!std::filesystem::is_directory(folder, notThere))
        throw Error("its folder " + folder.string() + " does not exist", where, "make the folder first");
    if (::access(folder.c_str(), W_OK) != 0)
        throw Error("its folder " + folder.string() + " is not writable: " + std::strerror(errno), where,
                    "choose a folder you can write to");
}

}  // namespace cnnstudio
