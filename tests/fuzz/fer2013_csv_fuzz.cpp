// The FER2013 CSV reader (emotion,pixels,Usage rows of 48x48 grey pixels): a file is refused
// with an Error naming its line, or, when skipping bad rows, read with them counted. What is
// read must be usable: 48x48 grey images, one per label, labels among the 7 emotions.
#include "cnnstudio/datasets/fer2013.h"
#include "cnnstudio/error.h"
#include "fuzz_input.h"

namespace {

void requireUsable(const cnnstudio::datasets::Dataset& split) {
    if (split.channels != 1 || split.height != 48 || split.width != 48 ||
        split.images.size() != split.labels.size() * 48 * 48)
        __builtin_trap();
    for (std::int32_t label : split.labels)
        if (label < 0 || label > 6) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = cnnstudio::fuzz::asText(data, size);
    for (bool skipBad : {false, true}) {
        try {
            const auto splits = cnnstudio::datasets::parseFer2013Csv(text, "fuzz.csv", skipBad);
            requireUsable(splits.train);
            requireUsable(splits.validation);
            requireUsable(splits.test);
        } catch (const cnnstudio::Error&) {
        }
    }
    return 0;
}
