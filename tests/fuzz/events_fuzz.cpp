// The event log (events.jsonl): every line read into a typed Event, counted as malformed, or
// skipped (another schema); the reader never throws on what a file holds.
#include "cnnstudio/error.h"
#include "cnnstudio/event_reader.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = cnnstudio::fuzz::scratchFolder() / "events.jsonl";
    cnnstudio::fuzz::writeFile(file, cnnstudio::fuzz::asText(data, size));
    cnnstudio::readEvents(file);
    return 0;
}
