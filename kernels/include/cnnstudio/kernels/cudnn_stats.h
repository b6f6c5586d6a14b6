// What the cudnn backend has set up so far: how many geometries it has planned, how many
// convolution algorithm benchmarks it has run and how many heuristic picks it made, and how many
// weight copies it staged ahead. Lets tests and the benchmark program check that steady-state
// steps reuse cached plans. No CUDA header.
#pragma once

#include <cstddef>

#include "cnnstudio/backend.h"

namespace cnnstudio::kernels {

struct CudnnStats {
    std::size_t convolutionPlans = 0;      // distinct convolution geometries seen
    std::size_t algorithmSearches = 0;     // cudnnFind*AlgorithmEx benchmarks run
    std::size_t heuristicChoices = 0;      // algorithms picked without benchmarking (capture)
    std::size_t poolPlans = 0;
    std::size_t batchNormPlans = 0;
    std::size_t largestWorkspaceBytes = 0;  // the largest workspace a chosen algorithm needs
    // bf16 weight copies staged again as a hold began, beside the first ops (held_weights.h)
    std::size_t weightCopiesStagedAhead = 0;
};

// Throws Error when `backend` is not the cudnn backend.
CudnnStats cudnnStats(const Backend& backend);

}  // namespace cnnstudio::kernels
