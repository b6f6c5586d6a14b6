// Shape inference over a network spec, with no backend: per node its output shape, trainable
// parameters and forward FLOPs, and every problem found against the node it concerns. The
// designer annotates nodes with it while the user edits; building a Network starts with it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cnnstudio/spec.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio {

// The most trainable parameters a network may have: a Network keeps all of them in one tensor,
// and tensor sizes are int. Shape inference reports the node whose parameters cross it.
inline constexpr std::int64_t kMaxNetworkParameters = std::numeric_limits<int>::max();

// What shape inference found for one node. Shapes are per image (batch 1).
struct NodeInfo {
    std::string name;
    std::string type;
    TensorShape outputShape{1, 0, 0, 0};  // channels 0: unknown (this node or an input is broken)
    std::int64_t parameters = 0;    // trainable, as PyTorch counts them
    std::int64_t forwardFlops = 0;  // one multiply-add = 2 FLOPs, per image
    std::string problem;            // empty when the node is fine
};

struct ShapeReport {
    std::vector<NodeInfo> nodes;    // topological order (nodes in a cycle come last)
    std::vector<std::pair<std::string, std::string>> problems;  // node ("": network), message
    std::int64_t totalParameters = 0;
    std::int64_t totalForwardFlops = 0;
    std::int64_t activationBytesPerImage = 0;  // all node outputs, float32
    std::string outputNode;         // empty unless there is exactly one
    TensorShape inputShape{1, 0, 0, 0}, outputShape{1, 0, 0, 0};

    bool ok() const { return problems.empty(); }
    const NodeInfo* find(const std::string& nodeName) const;
};

// Never throws for a bad graph: every problem is reported against its node. A node whose
// input is broken is not re-reported; its own info stays empty.
ShapeReport analyseSpec(const NetworkSpec& spec);
// Throws Error naming the first problem's node ("node 'add1': shapes (64,24,24) and (32,24,24) differ").
ShapeReport inferShapes(const NetworkSpec& spec);

// The table the CLI prints for --summary: per node its name, type, output shape (C×H×W),
// parameters and forward FLOPs, then the totals and any problems. UTF-8, ends with a newline.
std::string formatSummaryTable(const ShapeReport& report);

}  // namespace cnnstudio
