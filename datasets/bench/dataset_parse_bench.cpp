// dataset_parse_bench: how fast the FER2013 CSV reader goes on one file.
//   1. inflate only       zlib, the whole .gz into memory (what a gzip file costs at least)
//   2. parse only         parseFer2013Csv on the decompressed text in memory, one core
//   3. gzip + parse       loadFer2013Csv on the .gz (inflate on a background thread, parse here)
//   4. plain file + parse loadFer2013Csv on the decompressed text written to a temporary file
// Each is run `repeats` times (default 5); the median is reported in MB/s of CSV text (1 MB = 1e6 bytes),
// by the wall clock and, for the single-threaded steps 1 and 2, also by the thread's CPU time
// (the honest one-core figure when other processes share the machine).
//
// usage: dataset_parse_bench FILE.csv[.gz] [repeats]   (FER2013: see the README for where to get it)
#include "cnnstudio/datasets/compressed_file.h"
#include "cnnstudio/datasets/fer2013.h"
#include "cnnstudio/error.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace cnnstudio;
using namespace cnnstudio::datasets;

namespace {

double threadCpuSeconds() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

struct Timing {
    double wallSeconds, cpuSeconds;  // medians; cpu is this thread's only
};

Timing measure(int repeats, const std::function<void()>& work) {
    std::vector<double> wall, cpu;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        const double cpuStart = threadCpuSeconds();
        work();
        cpu.push_back(threadCpuSeconds() - cpuStart);
        wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

void report(const char* what, double bytes, Timing timing, bool singleThreaded) {
    std::printf("%-22s %7.1f MB/s wall", what, bytes / timing.wallSeconds / 1e6);
    if (singleThreaded) std::printf("  %7.1f MB/s cpu", bytes / timing.cpuSeconds / 1e6);
    else std::printf("                  ");
    std::printf("   (median wall %.3f s)\n", timing.wallSeconds);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: dataset_parse_bench FILE.csv[.gz] [repeats]\n");
        return 2;
    }
    const std::filesystem::path file(argv[1]);
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    try {
        std::string text;
        const Timing inflate = measure(repeats, [&] { text = readDecompressedFile(file); });
        const double bytes = double(text.size());
        std::printf("file %s: %.1f MB on disk, %.1f MB of CSV, %d repeats\n", file.c_str(),
                    double(std::filesystem::file_size(file)) / 1e6, bytes / 1e6, repeats);
        report("inflate only", bytes, inflate, true);

        std::size_t rows = 0;
        const Timing parse = measure(repeats, [&] {
            DatasetSplits splits = parseFer2013Csv(text, file.string(), false);
            rows = splits.train.size() + splits.validation.size() + splits.test.size();
        });
        report("parse only (1 core)", bytes, parse, true);

        LoadOptions options;
        options.validationFraction = 0;
        report("gzip + parse", bytes, measure(repeats, [&] { loadFer2013Csv(file, options); }), false);

        const std::filesystem::path plain = std::filesystem::temp_directory_path() / "dataset_parse_bench.csv";
        std::ofstream(plain, std::ios::binary).write(text.data(), std::streamsize(text.size()));
        const Timing plainLoad = measure(repeats, [&] { loadFer2013Csv(plain, options); });
        std::filesystem::remove(plain);
        report("plain file + parse", bytes, plainLoad, false);
        std::printf("%zu rows\n", rows);
    } catch (const Error& error) {
        std::fprintf(stderr, "dataset_parse_bench: %s\n", error.what());
        return 1;
    }
    return 0;
}
