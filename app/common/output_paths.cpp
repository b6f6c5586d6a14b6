#include "common/output_paths.h"

#include <algorithm>
#include <system_error>

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

}  // namespace cnnstudio
