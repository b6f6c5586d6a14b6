// The OpenMPI hostfile of a multi-node run: host entries, or an Error naming file:line. The
// text is parsed in memory (readHostfile reads the file and calls the same parser).
#include "cnnstudio/error.h"
#include "fuzz_input.h"
#include "train/hostfile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        for (const cnnstudio::HostEntry& entry : cnnstudio::parseHostfile(cnnstudio::fuzz::asText(data, size), "hostfile"))
            if (entry.host.empty() || entry.host.front() == '-' || entry.slots < 1 ||
                entry.slots > cnnstudio::kMaxSlotsPerHost)
                __builtin_trap();
    } catch (const cnnstudio::Error&) {
    }
    return 0;
}
