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

std::int64_t MemoryEstimate::bytesFor(int batch) const {
    return std::int64_t(double(fixedBytes + std::int64_t(batch) * bytesPerImage) * kMargin);
}

int MemoryEstimate::largestBatchWithin(std::size_t freeBytes) const {
    int batch = 0;
    for (int candidate = 1; candidate <= (1 << 20) && bytesFor(candidate) <= std::int64_t(freeBytes); candidate *= 2)
        batch = candidate;
    return batch;
}

MemoryEstimate estimateTrainingMemory(const ShapeReport& report, std::size_t activationElementBytes,
                                      const std::string& optimizerKind) {
    const int optimizerBuffers = optimizerKind == "sgd" ? 1 : 2;
    MemoryEstimate estimate;
    estimate.fixedBytes = report.totalParameters * std::int64_t(sizeof(float)) * (2 + optimizerBuffers);
    // activationBytesPerImage counts every node's output in fp32.
    const std::int64_t elements = report.activationBytesPerImage / std::int64_t(sizeof(float));
    estimate.bytesPerImage = elements * 2 * std::int64_t(activationElementBytes);
    return estimate;
}

MemoryEstimate estimateInferenceMemory(const ShapeReport& report, std::size_t activationElementBytes) {
    MemoryEstimate estimate;
    estimate.fixedBytes = report.totalParameters * std::int64_t(sizeof(float));
    estimate.bytesPerImage =
        report.activationBytesPerImage / std::int64_t(sizeof(float)) * std::int64_t(activationElementBytes);
    estimate.work = "run";
    return estimate;
}

void requireBatchFits(const MemoryEstimate& estimate, int batch, const MemoryBudget& budget) {
    const std::int64_t needed = estimate.bytesFor(batch);
    if (needed <= std::int64_t(budget.freeBytes)) return;
    const int fits = estimate.largestBatchWithin(budget.freeBytes);
    const std::string what = "batch " + std::to_string(batch) + " needs about " + gibibytes(double(needed)) +
                             " to " + estimate.work + ", " +
                             gibibytes(double(budget.freeBytes)) + " is free";
    if (fits == 0)
        throw Error(what + "; not even one image fits beside the parameters and optimiser state", budget.where,
                    "use a smaller network, or free memory on " + budget.memoryName);
    throw Error(what, budget.where, "use --batch " + std::to_string(fits) + " or less (about " +
                                        gibibytes(double(estimate.bytesFor(fits))) + ")");
}

namespace {

// What `backend` reports free, as a budget; none when it reports none.
std::optional<MemoryBudget> budgetOf(const Backend& backend, int ranksOnThisHost) {
    const std::optional<std::size_t> freeBytes = backend.freeMemoryBytes();
    if (!freeBytes) return std::nullopt;
    MemoryBudget budget{*freeBytes, "backend '" + backend.name() + "'", "this GPU"};
    if (!backend.isDevice()) {
        budget.memoryName = "this machine";
        if (ranksOnThisHost > 1) {
            budget.freeBytes /= std::size_t(ranksOnThisHost);
            budget.where += " (one of " + std::to_string(ranksOnThisHost) + " ranks sharing this machine's memory)";
        }
    }
    return budget;
}

}  // namespace

void requireBatchFits(const ShapeReport& report, int batch, const Backend& backend, const std::string& optimizerKind,
                      int ranksOnThisHost) {
    if (const auto budget = budgetOf(backend, ranksOnThisHost))
        requireBatchFits(estimateTrainingMemory(report, backend.activationBytes(1), optimizerKind), batch, *budget);
}

void requireInferenceBatchFits(const ShapeReport& report, int batch, const Backend& backend) {
    if (const auto budget = budgetOf(backend, 1))
        requireBatchFits(estimateInferenceMemory(report, backend.activationBytes(1)), batch, *budget);
}

}  // namespace cnnstudio
