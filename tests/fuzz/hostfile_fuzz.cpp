// The OpenMPI hostfile of a multi-node run: host entries, or an Error naming file:line.
#include "cnnstudio/error.h"
#include "fuzz_input.h"
#include "train/hostfile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = cnnstudio::fuzz::scratchFolder() / "hostfile";
    cnnstudio::fuzz::writeFile(file, cnnstudio::fuzz::asText(data, size));
    try {
        cnnstudio::readHostfile(file.string());
    } catch (const cnnstudio::Error&) {
    }
    return 0;
}
