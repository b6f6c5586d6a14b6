// safetensors files (an 8-byte header length, a JSON header of names, dtypes, shapes and
// offsets, then the data): read, or refused with an Error naming the file.
#include "cnnstudio/error.h"
#include "cnnstudio/safetensors.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = cnnstudio::fuzz::scratchFolder() / "input.safetensors";
    cnnstudio::fuzz::writeFile(file, cnnstudio::fuzz::asText(data, size));
    try {
        cnnstudio::readSafetensors(file);
    } catch (const cnnstudio::Error&) {
    }
    return 0;
}
