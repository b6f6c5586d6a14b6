#include "cnnstudio/memory_estimate.h"

#include <cstdio>

#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

// Workspaces (convolution algorithms), the loss, the allocator's rounding: a quarter more than
// the tensors themselves, so that a batch said to fit does.
constexpr double kMargin = 1.25;

std::string gibibytes(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1ull << 30));
    return text;
}

}  // namespace

std::int64_t TrainingMemoryEstimate::bytesFor(int batch) const {
    return std::int64_t(double(fixedBytes + std::int64_t(batch) * bytesPerImage) * kMargin);
}

int TrainingMemoryEstimate::largestBatchWithin(std::size_t freeBytes) const {
    int batch = 0;
    for (int candidate = 1; candidate <= (1 << 20) && bytesFor(candidate) <= std::int64_t(freeBytes); candidate *= 2)
        batch = candidate;
    return batch;
}

TrainingMemoryEstimate estimateTrainingMemory(const ShapeReport& report, std::size_t activationElementBytes,
                                              const std::string& optimizerKind) {
    const int optimizerBuffers = optimizerKind == "sgd" ? 1 : 2;
    TrainingMemoryEstimate estimate;
    estimate.fixedBytes = report.totalParameters * std::int64_t(sizeof(float)) * (2 + optimizerBuffers);
    // activationBytesPerImage counts every node's output in fp32.
    const std::int64_t elements = report.activationBytesPerImage / std::int64_t(sizeof(float));
    estimate.bytesPerImage = elements * 2 * std::int64_t(activationElementBytes);
    return estimate;
}

void requireBatchFits(const TrainingMemoryEstimate& estimate, int batch, std::size_t freeBytes,
                      const std::string& device) {
    const std::int64_t needed = estimate.bytesFor(batch);
    if (needed <= std::int64_t(freeBytes)) return;
    const int fits = estimate.largestBatchWithin(freeBytes);
    const std::string what = "batch " + std::to_string(batch) + " needs about " + gibibytes(double(needed)) +
                             " to train, " + gibibytes(double(freeBytes)) + " is free";
    if (fits == 0)
        throw Error(what + "; not even one image fits beside the parameters and optimiser state", device,
                    "use a smaller network, or free memory on this GPU");
    throw Error(what, device, "use --batch " + std::to_string(fits) + " or less (about " +
                                  gibibytes(double(estimate.bytesFor(fits))) + ")");
}

void requireBatchFits(const ShapeReport& report, int batch, const Backend& backend, const std::string& optimizerKind) {
    const std::optional<std::size_t> freeBytes = backend.freeMemoryBytes();
    if (!freeBytes) return;
    requireBatchFits(estimateTrainingMemory(report, backend.activationBytes(1), optimizerKind), batch, *freeBytes,
                     "backend '" + backend.name() + "'");
}

}  // namespace cnnstudio
