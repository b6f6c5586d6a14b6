// The FER2013 CSV reader (emotion,pixels,Usage rows of 48x48 grey pixels): a file is refused
// with an Error naming its line, or, when skipping bad rows, read with them counted.
#include "cnnstudio/datasets/fer2013.h"
#include "cnnstudio/error.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = cnnstudio::fuzz::asText(data, size);
    for (bool skipBad : {false, true}) {
        try {
            cnnstudio::datasets::parseFer2013Csv(text, "fuzz.csv", skipBad);
        } catch (const cnnstudio::Error&) {
        }
    }
    return 0;
}
