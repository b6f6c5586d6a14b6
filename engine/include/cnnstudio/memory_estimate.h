// What a training step keeps in backend memory, estimated from the network's shapes, so that a
// batch too large for the GPU is refused before training with a batch size that fits, instead
// of failing in an allocation deep inside the first step.
//
//   fixed     = parameters x 4 bytes x (weights + gradients + optimiser state: 1 for sgd's
//               velocity, 2 for adam's moments)
//   per image = every node's output x (activation + its gradient) x the activation element size
//               (4 bytes fp32, 2 bytes bf16)
//   needed    = (fixed + batch x per image) x 1.25, for workspaces, the loss and the allocator
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "cnnstudio/backend.h"
#include "cnnstudio/shape_inference.h"

namespace cnnstudio {

struct TrainingMemoryEstimate {
    std::int64_t fixedBytes = 0;     // parameters, gradients, optimiser state
    std::int64_t bytesPerImage = 0;  // activations and their gradients
    std::int64_t bytesFor(int batch) const;  // with the margin
    // The largest power of two whose batch fits in `freeBytes`; 0 when not even one image does.
    int largestBatchWithin(std::size_t freeBytes) const;
};

TrainingMemoryEstimate estimateTrainingMemory(const ShapeReport& report, std::size_t activationElementBytes,
                                              const std::string& optimizerKind);

// Throws Error naming the batch, the memory it needs, the free memory and a batch that fits,
// when `batch` does not fit in `freeBytes` on `device` (a "where" such as "backend 'cudnn' device 0").
void requireBatchFits(const TrainingMemoryEstimate& estimate, int batch, std::size_t freeBytes,
                      const std::string& device);
// The same against what `backend` reports free; nothing to check for host backends, which report none.
void requireBatchFits(const ShapeReport& report, int batch, const Backend& backend, const std::string& optimizerKind);

}  // namespace cnnstudio
