// One image file of an image folder: the input is decoded (OpenCV, any format it reads) as an
// image of class "a" next to a valid image of class "b"; an image that does not decode is
// refused with an Error naming it, or skipped and counted when skipping bad images.
#include "cnnstudio/datasets/image_folder.h"
#include "cnnstudio/error.h"
#include "fuzz_input.h"

namespace {

// A 2x2 grey PGM: every folder of this target holds a second, valid class.
constexpr std::string_view kValidImage{"P5\n2 2\n255\n\x10\x80\xc0\xff", 15};

const std::filesystem::path& imageRoot() {
    static const std::filesystem::path root = [] {
        const std::filesystem::path made = cnnstudio::fuzz::scratchFolder() / "images";
        std::filesystem::create_directories(made / "a");
        std::filesystem::create_directories(made / "b");
        cnnstudio::fuzz::writeFile(made / "b" / "valid.pgm", kValidImage);
        return made;
    }();
    return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The name says png; OpenCV decodes by content, so every format is reached.
    cnnstudio::fuzz::writeFile(imageRoot() / "a" / "input.png", cnnstudio::fuzz::asText(data, size));
    cnnstudio::datasets::LoadOptions options;
    options.imageHeight = 8;
    options.imageWidth = 8;
    for (bool skipBad : {false, true}) {
        options.skipBad = skipBad;
        options.imageChannels = skipBad ? 1 : 3;
        try {
            cnnstudio::datasets::loadImageFolder(imageRoot(), options);
        } catch (const cnnstudio::Error&) {
        }
    }
    return 0;
}
