// Dataset helpers shared by every loader: appending, selecting, holding out, limiting.
#include "cnnstudio/datasets/dataset.h"

#include "cnnstudio/error.h"
#include "random.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cnnstudio::datasets {

void Dataset::append(std::span<const std::uint8_t> pixels, std::int32_t label) {
    if (pixels.size() != sampleBytes())
        throw Error("sample has " + std::to_string(pixels.size()) + " bytes, expected " +
                        std::to_string(sampleBytes()),
                    "Dataset::append", "every sample of a split must have the same C x H x W");
    images.insert(images.end(), pixels.begin(), pixels.end());
    labels.push_back(label);
}

std::vector<std::size_t> Dataset::classCounts(std::size_t classCount) const {
    std::vector<std::size_t> counts(classCount, 0);
    for (std::int32_t label : labels)
        if (label >= 0 && std::size_t(label) < classCount) ++counts[std::size_t(label)];
    return counts;
}

Dataset Dataset::select(std::span<const std::size_t> indices) const {
    Dataset out;
    out.channels = channels;
    out.height = height;
    out.width = width;
    const std::size_t bytes = sampleBytes();
    out.images.resize(indices.size() * bytes);
    out.labels.resize(indices.size());
    for (std::size_t i = 0; i < indices.size(); ++i) {
        if (indices[i] >= size())
            throw Error("sample index " + std::to_string(indices[i]) + " is past the end (" +
                            std::to_string(size()) + " samples)",
                        "Dataset::select");
        std::memcpy(out.images.data() + i * bytes, images.data() + indices[i] * bytes, bytes);
        out.labels[i] = labels[indices[i]];
    }
    return out;
}

void SkippedInput::record(std::string message) {
    ++count;
    if (firstMessages.size() < kMessagesKept) firstMessages.push_back(std::move(message));
}

Dataset holdOut(Dataset& from, double fraction, std::uint64_t seed) {
    if (!(fraction >= 0.0 && fraction < 1.0))
        throw Error("hold-out fraction " + std::to_string(fraction) + " is outside [0, 1)",
                    "validation/test fraction", "use a fraction such as 0.1");
    const std::size_t heldCount = std::size_t(std::llround(fraction * double(from.size())));
    if (heldCount == 0) return Dataset{from.channels, from.height, from.width, {}, {}};
    std::vector<std::size_t> order = seededPermutation(from.size(), seed);
    std::vector<std::size_t> held(order.begin(), order.begin() + std::ptrdiff_t(heldCount));
    std::vector<std::size_t> kept(order.begin() + std::ptrdiff_t(heldCount), order.end());
    std::sort(held.begin(), held.end());
    std::sort(kept.begin(), kept.end());
    Dataset heldOut = from.select(held);
    from = from.select(kept);
    return heldOut;
}

void applyLimit(DatasetSplits& splits, std::size_t limit) {
    if (limit == 0 || limit >= splits.train.size()) return;
    splits.train.labels.resize(limit);
    splits.train.images.resize(limit * splits.train.sampleBytes());
    splits.train.images.shrink_to_fit();
    splits.train.labels.shrink_to_fit();
}

}  // namespace cnnstudio::datasets
