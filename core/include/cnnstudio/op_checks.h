// Argument checks shared by every backend (cpu-ref, cpu, and the GPU backends in kernels/, which
// add their own indexing limit): each op validates its geometry and pointers before touching
// memory, so a wrong shape becomes a cnnstudio::Error naming the op and the field instead of an
// out-of-bounds write. `op` names the caller, e.g. "cpu-ref convForward".
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "cnnstudio/backend.h"

namespace cnnstudio::ops {

// Throws when `pointer` is null; `argument` is its name on the Backend interface ("dy").
void requirePointer(const void* pointer, std::string_view argument, std::string_view op);
// requirePointer for each (pointer, argument) pair.
void requirePointers(std::initializer_list<std::pair<const void*, std::string_view>> pointers,
                     std::string_view op);

// Positive sizes, stride >= 1, padding >= 0, channels divisible by groups, and
// outHeight/outWidth equal to (in + 2 pad - kernel) / stride + 1 (PyTorch's floor rule).
void checkConvGeometry(const ConvGeometry& g, std::string_view op);

// As for convolution, plus 2 pad <= kernel (PyTorch's rule, and the spec's) so that every
// window holds at least one non-padding element (the average divides by that count; the max
// needs a candidate).
void checkPoolGeometry(const PoolGeometry& g, std::string_view op);

// Positive sizes, epsilon > 0, momentum in [0, 1]. Training also needs more than one value
// per channel (batch * spatial > 1): the unbiased variance divides by count - 1.
void checkBatchNormGeometry(const BatchNormGeometry& g, bool training, std::string_view op);

void checkDenseGeometry(const DenseGeometry& g, std::string_view op);

// batch, classes >= 1 and labelSmoothing in [0, 1].
void checkLossGeometry(const LossGeometry& g, std::string_view op);

// Throws unless 0 <= label < classes; `sample` is the label's index in the batch.
void checkLabel(std::int32_t label, int sample, int classes, std::string_view op);

// Checks every label (host memory) and returns sum_i w[y_i], the batch size without class
// weights; throws when that sum is not positive (the weighted mean loss would be 0/0).
double checkLabelsAndTotalWeight(const LossGeometry& g, const std::int32_t* labels,
                                 const float* classWeights, std::string_view op);

// Channel ranges inside both tensors, positive batch, spatial and channels.
void checkCopyChannels(int batch, int spatial, int channels, int srcChannels, int srcOffset,
                       int dstChannels, int dstOffset, std::string_view op);

// 0 <= probability <= 1 (1 drops everything).
void checkDropoutProbability(float probability, std::string_view op);

// momentum >= 0, weightDecay >= 0, nesterov only with momentum > 0 (as torch.optim.SGD).
void checkSgdSettings(const SgdSettings& s, std::string_view op);

// 0 <= beta < 1, epsilon > 0, weightDecay >= 0 (as torch.optim.Adam / AdamW).
void checkAdamSettings(const AdamSettings& s, std::string_view op);
// The step's Adam bias corrections (host memory) are positive.
void checkAdamCorrections(const StepScalars& step, std::string_view op);

}  // namespace cnnstudio::ops
