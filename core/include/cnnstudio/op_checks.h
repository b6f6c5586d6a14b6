// The argument checks of the Backend interface: Backend's public ops run them once before calling
// a backend's implementation (backend.cpp), so a wrong shape becomes a cnnstudio::Error naming
// the op and the field instead of an out-of-bounds write. `op` labels the error
// ("cpu-ref convForward", see OpLabel). failOp is for a backend's own limits; the label checks
// and the Adam corrections read host memory, so only the CPU backends call them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "cnnstudio/backend.h"

namespace cnnstudio::ops {

// Throws Error(what, op.text(), hint). For the checks of a backend's own limits: build `what`
// only on failure (`if (!fits) failOp(...)`) so that the hot path pays nothing.
[[noreturn]] void failOp(const OpLabel& op, const std::string& what, const std::string& hint);

// Throws when `pointer` is null; `argument` is its name on the Backend interface ("dy").
void requirePointer(const void* pointer, std::string_view argument, const OpLabel& op);
// requirePointer for each (pointer, argument) pair.
void requirePointers(std::initializer_list<std::pair<const void*, std::string_view>> pointers,
                     const OpLabel& op);

// Positive sizes, stride >= 1, padding >= 0, channels divisible by groups, and
// outHeight/outWidth equal to (in + 2 pad - kernel) / stride + 1 (PyTorch's floor rule).
void checkConvGeometry(const ConvGeometry& g, const OpLabel& op);

// As for convolution, plus 2 pad <= kernel (PyTorch's rule, and the spec's) so that every
// window holds at least one non-padding element (the average divides by that count; the max
// needs a candidate).
void checkPoolGeometry(const PoolGeometry& g, const OpLabel& op);

// Positive sizes, epsilon > 0, momentum in [0, 1]. Training also needs more than one value
// per channel (batch * spatial > 1): the unbiased variance divides by count - 1.
void checkBatchNormGeometry(const BatchNormGeometry& g, bool training, const OpLabel& op);

void checkDenseGeometry(const DenseGeometry& g, const OpLabel& op);

// bn describes the convolution's output: the same batch, outChannels channels and
// outHeight * outWidth values per channel.
void checkConvBatchNormChain(const ConvGeometry& g, const BatchNormGeometry& bn, const OpLabel& op);

// pool is a max pooling of the batch norm's output: the same batch and channels, and
// inHeight * inWidth values per channel.
void checkBatchNormMaxPoolChain(const BatchNormGeometry& bn, const PoolGeometry& pool,
                                const OpLabel& op);

// batch, classes >= 1 and labelSmoothing in [0, 1].
void checkLossGeometry(const LossGeometry& g, const OpLabel& op);

// batch, classes >= 1.
void checkMetricsGeometry(const MetricsGeometry& g, const OpLabel& op);

// Throws unless 0 <= label < classes; `sample` is the label's index in the batch.
void checkLabel(std::int32_t label, int sample, int classes, const OpLabel& op);

// Checks every label (host memory) and returns sum_i w[y_i], the batch size without class
// weights; throws when that sum is not positive (the weighted mean loss would be 0/0).
// With a mix, the second labels are checked too, every label weight must lie in [0, 1], and
// the total is sum_i (l_i w[a_i] + (1 - l_i) w[b_i]) (backend.h, LossGeometry).
double checkLabelsAndTotalWeight(const LossGeometry& g, const std::int32_t* labels,
                                 const float* classWeights, const OpLabel& op,
                                 const LabelMix& mix = {});

// Both of a LabelMix's pointers set, or neither.
void checkLabelMix(const LabelMix& mix, const OpLabel& op);
// A table with at least one set, or none; a weight in [0, 1].
void checkSoftTargets(const SoftTargets& soft, const OpLabel& op);

// Positive batch, channels, height and width.
void checkAugmentGeometry(const AugmentGeometry& g, const OpLabel& op);
// Every image's augmentation (host memory): a finite sampling matrix, a known border and fill,
// a partner in [-1, batch), mixKeep in [0, 1]. Only the CPU backends can read them.
void checkAugmentations(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                        const OpLabel& op);

// Channel ranges inside both tensors, positive batch, spatial and channels.
void checkCopyChannels(int batch, int spatial, int channels, int srcChannels, int srcOffset,
                       int dstChannels, int dstOffset, const OpLabel& op);

// One of the Activation kinds (an enum read from a file may hold anything).
void checkActivationKind(Activation kind, const OpLabel& op);

// 0 <= probability <= 1 (1 drops everything).
void checkDropoutProbability(float probability, const OpLabel& op);

// momentum >= 0, weightDecay >= 0, nesterov only with momentum > 0 (as torch.optim.SGD).
void checkSgdSettings(const SgdSettings& s, const OpLabel& op);

// 0 <= beta < 1, epsilon > 0, weightDecay >= 0 (as torch.optim.Adam / AdamW).
void checkAdamSettings(const AdamSettings& s, const OpLabel& op);
// The step's Adam bias corrections (host memory) are positive.
void checkAdamCorrections(const StepScalars& step, const OpLabel& op);

}  // namespace cnnstudio::ops
