// The layout of an image folder: each input line is a path under the root ("cat/1.png",
// "train/dog/2.pgm", "val/", ...; a trailing / makes a folder, anything else a small valid
// image). The loader reads the classes and splits the layout describes or refuses it with an
// Error naming the folder. Lines that would leave the root (absolute, "..") are dropped.
#include "cnnstudio/datasets/image_folder.h"
#include "cnnstudio/error.h"
#include "fuzz_input.h"

namespace {

constexpr std::string_view kValidImage{"P5\n2 2\n255\n\x10\x80\xc0\xff", 15};
constexpr std::size_t kMaxEntries = 32;

bool staysInsideRoot(std::string_view line) {
    if (line.empty() || line.front() == '/' || line.find('\0') != std::string_view::npos) return false;
    const std::filesystem::path path{std::string(line)};
    for (const auto& part : path)
        if (part == "..") return false;
    return true;
}

void makeEntry(const std::filesystem::path& root, std::string_view line) {
    std::error_code ignored;  // a file where a folder is asked for (or the reverse): not made
    const std::filesystem::path path = root / std::string(line);
    if (line.back() == '/') {
        std::filesystem::create_directories(path, ignored);
        return;
    }
    std::filesystem::create_directories(path.parent_path(), ignored);
    cnnstudio::fuzz::writeFile(path, kValidImage);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path root = cnnstudio::fuzz::scratchFolder() / "layout";
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root);
    std::string_view text = cnnstudio::fuzz::asText(data, size);
    for (std::size_t entries = 0; !text.empty() && entries < kMaxEntries; ++entries) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (staysInsideRoot(line) && line.size() < 200) makeEntry(root, line);
    }
    cnnstudio::datasets::LoadOptions options;
    options.imageChannels = 1;
    options.imageHeight = 4;
    options.imageWidth = 4;
    for (bool skipBad : {false, true}) {
        options.skipBad = skipBad;
        try {
            cnnstudio::datasets::loadImageFolder(root, options);
        } catch (const cnnstudio::Error&) {
        }
    }
    return 0;
}
