// A data set held in memory: uint8 images (N, C, H, W) with int32 labels, and the
// train / validation / test splits every loader produces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cnnstudio/error.h"

namespace cnnstudio::datasets {

// One split. images holds size() * sampleBytes() bytes, sample after sample, each sample
// channel after channel, each channel row after row (NCHW), pixels 0..255.
struct Dataset {
    int channels = 0, height = 0, width = 0;
    std::vector<std::uint8_t> images;
    std::vector<std::int32_t> labels;

    std::size_t size() const { return labels.size(); }
    bool empty() const { return labels.empty(); }
    std::size_t sampleBytes() const { return std::size_t(channels) * height * width; }
    std::span<const std::uint8_t> image(std::size_t index) const {
        return {images.data() + index * sampleBytes(), sampleBytes()};
    }
    // Appends one sample; pixels must hold sampleBytes() bytes.
    void append(std::span<const std::uint8_t> pixels, std::int32_t label);
    // How many samples carry each label 0..classCount-1.
    std::vector<std::size_t> classCounts(std::size_t classCount) const;
    // The samples at the given positions, in that order.
    Dataset select(std::span<const std::size_t> indices) const;
};

// A row or an image that LoadOptions::skipBad would have left out. Its hint offers --skip-bad,
// the command line's switch; the app offers its own check box in its place, after fix().
class UnreadableInputError : public Error {
public:
    // fix: what mends the input ("fix or remove the row"); skipped: what --skip-bad skips ("bad rows")
    UnreadableInputError(const std::string& what, const std::string& where, const std::string& fix,
                         const std::string& skipped)
        : Error(what, where, fix + ", or pass --skip-bad to skip " + skipped), fix_(fix) {}
    const std::string& fix() const noexcept { return fix_; }

private:
    std::string fix_;
};

// Rows or files a loader dropped because LoadOptions::skipBad was set.
struct SkippedInput {
    std::size_t count = 0;
    std::vector<std::string> firstMessages;  // the first few, "file:line: what is wrong"
    static constexpr std::size_t kMessagesKept = 10;
    void record(std::string message);
};

struct DatasetSplits {
    Dataset train, validation, test;
    std::vector<std::string> classNames;
    std::string description;  // what was loaded, for logs and the run record ("FER2013 CSV a.csv")
    SkippedInput skipped;
};

struct LoadOptions {
    std::size_t limit = 0;          // keep only the first N training samples (0: all)
    bool skipBad = false;           // skip malformed rows / unreadable images, counting them
    double validationFraction = 0.1;  // held out of train when a source has no validation split
    double testFraction = 0.1;        // held out of train when an image folder has no test/
    std::uint64_t seed = 0;           // picks the held-out samples
    // Image folders only: every image is converted to these channels (1 grey or 3 RGB) and
    // resized to height x width.
    int imageChannels = 3, imageHeight = 64, imageWidth = 64;
};

// Moves a deterministic random fraction of `from` (chosen by seed) into a new Dataset and
// returns it; both keep their samples in their original relative order.
Dataset holdOut(Dataset& from, double fraction, std::uint64_t seed);

// Applies LoadOptions::limit to splits.train.
void applyLimit(DatasetSplits& splits, std::size_t limit);

}  // namespace cnnstudio::datasets
