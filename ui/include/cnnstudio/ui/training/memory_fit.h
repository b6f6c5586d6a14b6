// Whether a run's batch fits the memory it trains in, known before Train is pressed. The worker
// refuses a batch that does not (cnnstudio/memory_estimate.h, with the command line's words);
// the Train page says so first, in the user's words, with a batch size that fits. It checks what
// this machine can know: its own memory for the CPU backends on one node (shared by the ranks),
// and the chosen GPUs' free memory as discovered. No widgets: NetworkFitNotice shows it.
#pragma once

#include <cstddef>
#include <optional>

#include <QString>

#include "cnnstudio/hardware.h"
#include "cnnstudio/ui/training/network_fit.h"
#include "cnnstudio/ui/training/run_settings.h"

namespace cnnstudio::ui {

// Why `settings`' batch of the fitted network does not fit; empty when it fits, when the fit is
// not known yet, or when there is nothing to check against (other nodes, undiscovered GPUs).
// hostFreeBytes: the memory the CPU backends may take (availableHostMemoryBytes), none if unknown.
QString batchMemoryRefusal(const NetworkFit& fit, const RunSettings& settings, const HardwareInfo& hardware,
                           std::optional<std::size_t> hostFreeBytes);

}  // namespace cnnstudio::ui
