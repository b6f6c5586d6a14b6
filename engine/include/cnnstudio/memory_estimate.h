// What a training step (or a forward pass) keeps in backend memory, estimated from the network's
// shapes, so that a batch too large for the GPU or the host is refused before the work with a
// batch size that fits, instead of failing in an allocation deep inside the first step (or, on
// the host, the kernel's OOM killer ending the process without a word).
//
//   training:  fixed     = parameters x 4 bytes x (weights + gradients + optimiser state: 1 for
//                          sgd's velocity, 2 for adam's moments)
//              per image = every node's output x (activation + its gradient) x the activation
//                          element size (4 bytes fp32, 2 bytes bf16)
//   inference: fixed     = parameters x 4 bytes; per image = every node's output x element size
//   needed    = (fixed + batch x per image) x 1.25, for workspaces, the loss and the allocator
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cnnstudio/backend.h"
#include "cnnstudio/shape_inference.h"

namespace cnnstudio {

struct MemoryEstimate {
    std::int64_t fixedBytes = 0;     // parameters (with gradients and optimiser state to train)
    std::int64_t bytesPerImage = 0;  // activations (and their gradients to train)
    const char* work = "train";      // what the batch is for, in messages: "train", "run"
    std::int64_t bytesFor(int batch) const;  // with the margin
    // The largest power of two whose batch fits in `freeBytes`; 0 when not even one image does.
    int largestBatchWithin(std::size_t freeBytes) const;
};

MemoryEstimate estimateTrainingMemory(const ShapeReport& report, std::size_t activationElementBytes,
                                      const std::string& optimizerKind);
MemoryEstimate estimateInferenceMemory(const ShapeReport& report, std::size_t activationElementBytes);

// Where a batch must fit: the free bytes, where they are (Error::where(), "backend 'cudnn'
// device 0") and what to free when nothing fits ("this GPU", "this machine").
struct MemoryBudget {
    std::size_t freeBytes = 0;
    std::string where;
    std::string memoryName;
};

// Throws Error naming the batch, the memory it needs, the free memory and a batch that fits,
// when `batch` does not fit in `budget`.
void requireBatchFits(const MemoryEstimate& estimate, int batch, const MemoryBudget& budget);
// The same against what `backend` reports free (nothing to check when it reports none). Host
// backends share the machine's memory with the other ranks on it: each gets its part of it.
void requireBatchFits(const ShapeReport& report, int batch, const Backend& backend, const std::string& optimizerKind,
                      int ranksOnThisHost = 1);
// The same for a forward pass (evaluate, predict) of one process.
void requireInferenceBatchFits(const ShapeReport& report, int batch, const Backend& backend);

}  // namespace cnnstudio
