// ConvEngine: one convolution direction of one geometry on cuDNN's graph (backend) API, which
// reaches every engine cuDNN has for the GPU — on Hopper its warpgroup (sm90) implicit-GEMM
// kernels, which the legacy cudnnConvolution* algorithms do not choose. The cudnn backend uses it
// for bf16 channels-last activations; fp32 and tf32 keep the legacy API.
//
// Choosing: cuDNN's heuristics (mode A) list candidate engine configurations, best first; each
// that builds an execution plan within the workspace limit is timed on the caller's operands
// (outputs go to scratch) and the fastest kept, as cudnnFind* does for the legacy API. During
// stream capture nothing can be timed, so the first candidate that builds is taken.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <cudnn.h>

#include "cnnstudio/backend.h"
#include "cudnn/backend_descriptor.h"

namespace cnnstudio::kernels {

// "convolution (N,C,H,W) -> (N,K,P,Q), kernel RxS, stride …, padding …, groups G".
std::string describeConv(const ConvGeometry& g);

enum class ConvDirection { Forward, BackwardData, BackwardFilter };

// The operands of one execution, in the direction's roles.
struct ConvOperands {
    const void* x = nullptr;  // forward and backward-filter input (bf16 NHWC)
    const void* w = nullptr;  // forward and backward-data filter (bf16 KRSC)
    const void* dy = nullptr;  // backward data and filter (bf16 NHWC)
    void* output = nullptr;    // y, dx or dw
};

struct ConvEngineChoice {
    bool timed = false;  // false: the heuristics' first pick (chosen during capture)
    std::size_t workspaceBytes = 0;
};

class ConvEngine {
public:
    // Builds the operation graph for `direction` of `g` with bf16 NHWC/KRSC operands and fp32
    // accumulation. Throws Error naming the geometry when cuDNN cannot express it.
    ConvEngine(cudnnHandle_t handle, const ConvGeometry& g, ConvDirection direction);

    bool chosen() const { return plan_ != nullptr; }
    // Picks the execution plan (see the top of this file). `scratchOutput` has room for the
    // direction's output; `workspace` holds `workspaceLimit` bytes. Skips nondeterministic
    // engines when `deterministic`. Throws Error when no candidate can run.
    ConvEngineChoice choose(const ConvOperands& operands, void* scratchOutput, void* workspace,
                            std::size_t workspaceLimit, bool timed, bool deterministic,
                            cudaStream_t stream);
    std::size_t workspaceBytes() const { return workspaceBytes_; }
    // Enqueues the convolution on the handle's stream; `workspace` holds workspaceBytes().
    void run(const ConvOperands& operands, void* workspace) const;

private:
    cudnnHandle_t handle_;
    ConvDirection direction_;
    std::string what_;  // "convolution (…) forward", for errors
    BackendDescriptor graph_;
    BackendDescriptor plan_;
    std::size_t workspaceBytes_ = 0;
};

}  // namespace cnnstudio::kernels
