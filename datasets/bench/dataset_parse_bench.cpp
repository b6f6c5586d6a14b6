// dataset_parse_bench: how fast the FER2013 CSV reader goes on one file.
//   1. inflate only       zlib, the whole .gz into memory (what a gzip file costs at least)
//   2. parse only         parseFer2013Csv on the decompressed text in memory, one core
//   3. gzip + parse       loadFer2013Csv on the .gz (inflate on a background thread, parse here)
//   4. plain file + parse loadFer2013Csv on the decompressed text written to a temporary file
// Each is run `repeats` times (default 5); the median is reported in MB/s of CSV text (1 MB = 1e6 bytes).
//
// usage: dataset_parse_bench [FILE.csv[.gz]] [repeats]
#include "cnnstudio/datasets/compressed_file.h"
#include "cnnstudio/datasets/fer2013.h"
#include "cnnstudio/error.h"

#include <algorithm>
#include <chrono>
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

double medianSeconds(int repeats, const std::function<void()>& work) {
    std::vector<double> seconds;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        work();
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
}

void report(const char* what, double bytes, double seconds) {
    std::printf("%-22s %8.1f MB/s   (median %.3f s for %.1f MB of CSV)\n", what, bytes / seconds / 1e6, seconds,
                bytes / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
    const std::filesystem::path file =
        argc > 1 ? std::filesystem::path(argv[1])
                 : std::filesystem::path(CNNSTUDIO_SHARED_DIR) / "datasets/fer2013/fer2013_train.csv.gz";
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    try {
        std::string text;
        const double inflateSeconds = medianSeconds(repeats, [&] { text = readDecompressedFile(file); });
        const double bytes = double(text.size());
        std::printf("file %s: %.1f MB on disk, %.1f MB of CSV, %d repeats\n", file.c_str(),
                    double(std::filesystem::file_size(file)) / 1e6, bytes / 1e6, repeats);
        report("inflate only", bytes, inflateSeconds);

        std::size_t rows = 0;
        const double parseSeconds = medianSeconds(repeats, [&] {
            DatasetSplits splits = parseFer2013Csv(text, file.string(), false);
            rows = splits.train.size() + splits.validation.size() + splits.test.size();
        });
        report("parse only (1 core)", bytes, parseSeconds);

        LoadOptions options;
        options.validationFraction = 0;
        const double endToEndSeconds = medianSeconds(repeats, [&] { loadFer2013Csv(file, options); });
        report("gzip + parse", bytes, endToEndSeconds);

        const std::filesystem::path plain = std::filesystem::temp_directory_path() / "dataset_parse_bench.csv";
        std::ofstream(plain, std::ios::binary).write(text.data(), std::streamsize(text.size()));
        const double plainSeconds = medianSeconds(repeats, [&] { loadFer2013Csv(plain, options); });
        std::filesystem::remove(plain);
        report("plain file + parse", bytes, plainSeconds);
        std::printf("%zu rows\n", rows);
    } catch (const Error& error) {
        std::fprintf(stderr, "dataset_parse_bench: %s\n", error.what());
        return 1;
    }
    return 0;
}
