// IDX files (MNIST's format, plain or gzip): the same bytes read as an images file and as a
// labels file; each is read or refused with an Error naming the file. What is read must be
// usable: positive image sizes and exactly count x height x width pixels.
#include "cnnstudio/datasets/idx.h"
#include "cnnstudio/error.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = cnnstudio::fuzz::scratchFolder() / "input-idx-ubyte";
    cnnstudio::fuzz::writeFile(file, cnnstudio::fuzz::asText(data, size));
    try {
        const cnnstudio::datasets::Dataset images = cnnstudio::datasets::readIdxImages(file);
        if (images.height <= 0 || images.width <= 0 ||
            images.images.size() != images.labels.size() * std::size_t(images.height) * std::size_t(images.width))
            __builtin_trap();
    } catch (const cnnstudio::Error&) {
    }
    try {
        cnnstudio::datasets::readIdxLabels(file);
    } catch (const cnnstudio::Error&) {
    }
    return 0;
}
