// The network spec: a JSON file read into a NetworkSpec (refused with an Error naming the file
// and line, or the node) and, when it reads, shape inference over it: analyseSpec reports
// problems per node and never throws, inferShapes throws the first as an Error.
#include "cnnstudio/error.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = cnnstudio::fuzz::scratchFolder() / "network.json";
    cnnstudio::fuzz::writeFile(file, cnnstudio::fuzz::asText(data, size));
    cnnstudio::NetworkSpec spec;
    try {
        spec = cnnstudio::NetworkSpec::load(file);
    } catch (const cnnstudio::Error&) {
        return 0;
    }
    cnnstudio::formatSummaryTable(cnnstudio::analyseSpec(spec));
    try {
        cnnstudio::inferShapes(spec);
    } catch (const cnnstudio::Error&) {
    }
    // What the designer saves must read back as the same spec.
    spec.save(file);
    if (!(cnnstudio::NetworkSpec::load(file) == spec)) __builtin_trap();
    return 0;
}
