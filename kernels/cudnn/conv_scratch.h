// Scratch memory for the cudnn backend's convolutions (conv.cpp, conv_channels_last.cpp): one
// workspace request carved into aligned regions, and the separate memory an algorithm search
// benchmarks in.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cudnn.h>

#include "cnnstudio/backend.h"

namespace cnnstudio::kernels {

// Algorithms chosen by heuristics during capture may not need more workspace than this.
constexpr std::size_t kHeuristicWorkspaceLimit = std::size_t(256) << 20;

constexpr std::size_t kScratchAlignment = 256;

inline std::size_t alignUp(std::size_t bytes) {
    return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

// Carves one workspace request into aligned regions: offsets first, then one allocation.
class ScratchLayout {
public:
    std::size_t add(std::size_t bytes) {
        const std::size_t offset = total_;
        total_ += alignUp(bytes);
        return offset;
    }
    std::size_t total() const { return total_; }

private:
    std::size_t total_ = 0;
};

inline std::size_t bf16Bytes(std::int64_t count) {
    return std::size_t(count) * sizeof(__nv_bfloat16);
}

// Device memory for one benchmark: room for the staged filter (bf16 only), an output the
// benchmark may overwrite, and the algorithms' workspace. Freed when the search ends
// (stream-ordered, after the synchronous benchmark). The benchmark times on the step's stream
// alone: weight gradients still running beside it are waited for first.
class AlgorithmSearch {
public:
    AlgorithmSearch(Backend& memory, std::size_t filterRoomBytes, std::size_t outputBytes,
                    std::size_t workspaceLimit)
        : memory_(memory), workspaceBytes_(workspaceLimit) {
        memory_.awaitWeightGradients();
        ScratchLayout layout;
        const std::size_t filterAt = layout.add(filterRoomBytes);
        const std::size_t outputAt = layout.add(outputBytes);
        const std::size_t workspaceAt = layout.add(workspaceLimit);
        base_ = static_cast<char*>(memory_.allocateBytes(layout.total()));
        filterRoom_ = base_ + filterAt;
        output_ = base_ + outputAt;
        workspace_ = base_ + workspaceAt;
    }
    ~AlgorithmSearch() { memory_.freeBytes(base_); }
    AlgorithmSearch(const AlgorithmSearch&) = delete;
    AlgorithmSearch& operator=(const AlgorithmSearch&) = delete;

    void* filterRoom() const { return filterRoom_; }
    void* output() const { return output_; }
    void* workspace() const { return workspace_; }
    std::size_t workspaceBytes() const { return workspaceBytes_; }

private:
    Backend& memory_;
    char* base_ = nullptr;
    void* filterRoom_ = nullptr;
    void* output_ = nullptr;
    void* workspace_ = nullptr;
    std::size_t workspaceBytes_;
};

}  // namespace cnnstudio::kernels
