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

void requireBatchFits(const TrainingMemoryEstimate& estimate, int batch, const MemoryBudget& budget) {
    const std::int64_t needed = estimate.bytesFor(batch);
    if (needed <= std::int64_t(budget.freeBytes)) return;
    const int fits = estimate.largestBatchWithin(budget.freeBytes);
    const std::string what = "batch " + std::to_string(batch) + " needs about " + gibibytes(double(needed)) +
                             " to train, " + gibibytes(double(budget.freeBytes)) + " is free";
    if (fits == 0)
        throw Error(what + "; not even one image fits beside the parameters and optimiser state", budget.where,
                    "use a smaller network, or free memory on " + budget.memoryName);
    throw Error(what, budget.where, "use --batch " + std::to_string(fits) + " or less (about " +
                                        gibibytes(double(estimate.bytesFor(fits))) + ")");
}

void requireBatchFits(const ShapeReport& report, int batch, const Backend& backend, const std::string& optimizerKind,
                      int ranksOnThisHost) {
    const std::optional<std::size_t> freeBytes = backend.freeMemoryBytes();
    if (!freeBytes) return;
    MemoryBudget budget{*freeBytes, "backend '" + backend.name() + "'", "this GPU"};
    if (!backend.isDevice()) {
        budget.memoryName = "this machine";
        if (ranksOnThisHost > 1) {
            budget.freeBytes /= std::size_t(ranksOnThisHost);
            budget.where += " (one of " + std::to_string(ranksOnThisHost) + " ranks sharing this machine's memory)";
        }
    }
    requireBatchFits(estimateTrainingMemory(report, backend.activationBytes(1), optimizerKind), batch, budget);
}

}  // namespace cnnstudio
