#include "cnnstudio/op_checks.h"

#include <cmath>
#include <string>

#include "cnnstudio/error.h"

namespace cnnstudio::ops {
namespace {

constexpr const char* kGeometryHint =
    "build the geometry from the layer's inferred shapes; this is a bug in the caller";

[[noreturn]] void fail(const std::string& what, const OpLabel& op,
                       const char* hint = kGeometryHint) {
    throw Error(what, op.text(), hint);
}

// `field` is the field's name, or its prefix when `axis` ("Height") completes it.
void requirePositive(std::int64_t value, const char* field, const OpLabel& op,
                     const char* axis = "") {
    if (value < 1)
        fail(std::string(field) + axis + " is " + std::to_string(value) + ", must be at least 1", op);
}

void requireNonNegative(std::int64_t value, const char* field, const OpLabel& op,
                        const char* axis = "") {
    if (value < 0)
        fail(std::string(field) + axis + " is " + std::to_string(value) + ", must not be negative",
             op);
}

// One spatial axis of a window op (convolution or pooling): out = (in + 2 pad - kernel) / stride + 1.
// Field names are put together only on failure: this runs before every convolution.
void checkWindowAxis(const char* axis, int in, int out, int kernel, int stride, int pad,
                     const OpLabel& op) {
    requirePositive(in, "in", op, axis);
    requirePositive(out, "out", op, axis);
    requirePositive(kernel, "kernel", op, axis);
    requirePositive(stride, "stride", op, axis);
    requireNonNegative(pad, "pad", op, axis);
    const std::int64_t padded = std::int64_t(in) + 2 * std::int64_t(pad);
    if (padded < kernel)
        fail("kernel" + std::string(axis) + " " + std::to_string(kernel) + " is larger than the padded input (" +
                 std::to_string(padded) + ")", op);
    const std::int64_t expected = (padded - kernel) / stride + 1;
    if (out != expected)
        fail("out" + std::string(axis) + " is " + std::to_string(out) + ", but (in" + std::string(axis) + " " +
                 std::to_string(in) + " + 2 * pad " + std::to_string(pad) + " - kernel " +
                 std::to_string(kernel) + ") / stride " + std::to_string(stride) + " + 1 = " +
                 std::to_string(expected), op);
}

// Throws unless bn describes a tensor of (batch, channels, spatial), which `what` names.
void requireBatchNormOf(const BatchNormGeometry& bn, int batch, int channels,
                        std::int64_t spatial, const std::string& what, const OpLabel& op) {
    if (bn.batch == batch && bn.channels == channels && bn.spatial == spatial) return;
    fail("batch norm (batch " + std::to_string(bn.batch) + ", channels " +
             std::to_string(bn.channels) + ", spatial " + std::to_string(bn.spatial) +
             ") does not match " + what + " (batch " + std::to_string(batch) + ", channels " +
             std::to_string(channels) + ", spatial " + std::to_string(spatial) + ")", op);
}

}  // namespace

void failOp(const OpLabel& op, const std::string& what, const std::string& hint) {
    throw Error(what, op.text(), hint);
}

void requirePointer(const void* pointer, std::string_view argument, const OpLabel& op) {
    if (pointer == nullptr)
        fail("argument '" + std::string(argument) + "' is a null pointer", op,
             "allocate the buffer on this backend before calling the op");
}

void requirePointers(std::initializer_list<std::pair<const void*, std::string_view>> pointers,
                     const OpLabel& op) {
    for (const auto& [pointer, argument] : pointers) requirePointer(pointer, argument, op);
}

void checkConvGeometry(const ConvGeometry& g, const OpLabel& op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.inChannels, "inChannels", op);
    requirePositive(g.outChannels, "outChannels", op);
    requirePositive(g.groups, "groups", op);
    if (g.inChannels % g.groups != 0 || g.outChannels % g.groups != 0)
        fail("groups " + std::to_string(g.groups) + " does not divide inChannels " +
                 std::to_string(g.inChannels) + " and outChannels " + std::to_string(g.outChannels),
             op, "choose groups that divide both channel counts");
    checkWindowAxis("Height", g.inHeight, g.outHeight, g.kernelHeight, g.strideHeight, g.padHeight, op);
    checkWindowAxis("Width", g.inWidth, g.outWidth, g.kernelWidth, g.strideWidth, g.padWidth, op);
}

void checkPoolGeometry(const PoolGeometry& g, const OpLabel& op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.channels, "channels", op);
    checkWindowAxis("Height", g.inHeight, g.outHeight, g.kernelHeight, g.strideHeight, g.padHeight, op);
    checkWindowAxis("Width", g.inWidth, g.outWidth, g.kernelWidth, g.strideWidth, g.padWidth, op);
    if (2 * g.padHeight > g.kernelHeight || 2 * g.padWidth > g.kernelWidth)
        fail("pooling padding (" + std::to_string(g.padHeight) + ", " + std::to_string(g.padWidth) +
                 ") is more than half the kernel (" + std::to_string(g.kernelHeight) + ", " +
                 std::to_string(g.kernelWidth) + ")", op,
             "a window could lie wholly in the padding, with no value to pool; lower the padding");
}

void checkBatchNormGeometry(const BatchNormGeometry& g, bool training, const OpLabel& op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.channels, "channels", op);
    requirePositive(g.spatial, "spatial", op);
    if (!(g.epsilon > 0.0f) || !std::isfinite(g.epsilon))
        fail("epsilon is " + std::to_string(g.epsilon) + ", must be a positive number", op,
             "use a small positive epsilon such as 1e-5");
    if (!(g.momentum >= 0.0f && g.momentum <= 1.0f))
        fail("momentum is " + std::to_string(g.momentum) + ", must lie in [0, 1]", op,
             "PyTorch's default is 0.1");
    if (training && std::int64_t(g.batch) * g.spatial < 2)
        fail("batch normalisation in training needs more than one value per channel, got batch " +
                 std::to_string(g.batch) + " x spatial " + std::to_string(g.spatial), op,
             "use a batch size of at least 2 or remove the batch norm after a 1x1 feature map");
}

void checkDenseGeometry(const DenseGeometry& g, const OpLabel& op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.inFeatures, "inFeatures", op);
    requirePositive(g.outFeatures, "outFeatures", op);
}

void checkConvBatchNormChain(const ConvGeometry& g, const BatchNormGeometry& bn, const OpLabel& op) {
    requireBatchNormOf(bn, g.batch, g.outChannels, std::int64_t(g.outHeight) * g.outWidth,
                       "the convolution's output", op);
}

void checkBatchNormMaxPoolChain(const BatchNormGeometry& bn, const PoolGeometry& pool,
                                const OpLabel& op) {
    if (pool.kind != PoolKind::Max)
        fail("the pooling after the batch norm and ReLU is average pooling", op,
             "only max pooling is fused with them");
    requireBatchNormOf(bn, pool.batch, pool.channels, std::int64_t(pool.inHeight) * pool.inWidth,
                       "the pooling's input", op);
}

void checkLossGeometry(const LossGeometry& g, const OpLabel& op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.classes, "classes", op);
    if (!(g.labelSmoothing >= 0.0f && g.labelSmoothing <= 1.0f))
        fail("labelSmoothing is " + std::to_string(g.labelSmoothing) + ", must lie in [0, 1]", op,
             "typical values are 0 (off) to 0.1");
    if (!(g.temperature > 0.0f && std::isfinite(g.temperature)))
        fail("temperature is " + std::to_string(g.temperature) + ", must be positive", op,
             "1 for training; distillation softens a teacher with 2 to 4");
}

void checkSoftTargets(const SoftTargets& soft, const OpLabel& op) {
    if ((soft.probabilities == nullptr) != (soft.sets == 0) || soft.sets < 0)
        fail("soft targets with " + std::to_string(soft.sets) + " sets and " +
                 (soft.probabilities ? "a" : "no") + " probability table",
             op, "give the table and its number of sets (one per teacher), or neither");
    if (!(soft.weight >= 0.0f && soft.weight <= 1.0f))
        fail("the soft targets' weight is " + std::to_string(soft.weight) + ", must lie in [0, 1]",
             op, "it is the share of the loss that learns the teachers' probabilities");
}

void checkMetricsGeometry(const MetricsGeometry& g, const OpLabel& op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.classes, "classes", op);
}

void checkLabel(std::int32_t label, int sample, int classes, const OpLabel& op) {
    if (label < 0 || label >= classes)
        fail("label " + std::to_string(label) + " of sample " + std::to_string(sample) +
                 " is outside [0, " + std::to_string(classes) + ")", op,
             "check that the dataset's class count matches the network's last layer");
}

double checkLabelsAndTotalWeight(const LossGeometry& g, const std::int32_t* labels,
                                 const float* classWeights, const OpLabel& op, const LabelMix& mix) {
    auto weightOf = [&](std::int32_t label) { return classWeights ? double(classWeights[label]) : 1.0; };
    double total = 0.0;
    for (int i = 0; i < g.batch; ++i) {
        checkLabel(labels[i], i, g.classes, op);
        if (mix.secondLabels == nullptr) {
            total += weightOf(labels[i]);
            continue;
        }
        checkLabel(mix.secondLabels[i], i, g.classes, op);
        const double share = mix.labelWeights[i];
        if (!(share >= 0.0 && share <= 1.0))
            fail("label weight " + std::to_string(share) + " of sample " + std::to_string(i) +
                     " is outside [0, 1]", op, "the mixing weight lambda is a fraction");
        total += share * weightOf(labels[i]) + (1.0 - share) * weightOf(mix.secondLabels[i]);
    }
    if (!(total > 0.0))
        fail("the class weights of this batch's labels sum to " + std::to_string(total) +
                 ", so the weighted mean loss is undefined",
             op, "give every class a positive weight");
    return total;
}

void checkLabelMix(const LabelMix& mix, const OpLabel& op) {
    if ((mix.secondLabels == nullptr) != (mix.labelWeights == nullptr))
        fail(std::string("the label mix has ") + (mix.secondLabels ? "second labels but no label weights"
                                                                   : "label weights but no second labels"),
             op, "give both, or neither for plain labels");
}

void checkAugmentGeometry(const AugmentGeometry& g, const OpLabel& op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.channels, "channels", op);
    requirePositive(g.height, "height", op);
    requirePositive(g.width, "width", op);
}

void checkAugmentations(const AugmentGeometry& g, const ImageAugmentation* augmentations,
                        const OpLabel& op) {
    for (int i = 0; i < g.batch; ++i) {
        const ImageAugmentation& a = augmentations[i];
        const std::string image = "image " + std::to_string(i) + "'s augmentation";
        for (float entry : a.sourceFromOutput)
            if (!std::isfinite(entry))
                fail(image + " has a non-finite sampling matrix entry", op,
                     "draw the augmentation with datasets::imageAugmentation");
        if (a.border != AugmentBorder::Constant && a.border != AugmentBorder::Replicate)
            fail(image + " has an unknown border " + std::to_string(int(a.border)), op,
                 "use AugmentBorder::Constant or Replicate");
        if (a.eraseFill != EraseFill::Zero && a.eraseFill != EraseFill::Noise)
            fail(image + " has an unknown erase fill " + std::to_string(int(a.eraseFill)), op,
                 "use EraseFill::Zero or Noise");
        if (a.partner < -1 || a.partner >= g.batch)
            fail(image + " mixes with image " + std::to_string(a.partner) + ", outside [0, " +
                     std::to_string(g.batch) + ")", op, "partners are images of the same batch; -1 for none");
        if (!(a.mixKeep >= 0.0f && a.mixKeep <= 1.0f))
            fail(image + " keeps " + std::to_string(a.mixKeep) + " of itself, outside [0, 1]", op,
                 "mixKeep is mixup's lambda");
    }
}

void checkCopyChannels(int batch, int spatial, int channels, int srcChannels, int srcOffset,
                       int dstChannels, int dstOffset, const OpLabel& op) {
    requirePositive(batch, "batch", op);
    requirePositive(spatial, "spatial", op);
    requirePositive(channels, "channels", op);
    requireNonNegative(srcOffset, "srcOffset", op);
    requireNonNegative(dstOffset, "dstOffset", op);
    if (std::int64_t(srcOffset) + channels > srcChannels)
        fail("source channels [" + std::to_string(srcOffset) + ", " +
                 std::to_string(std::int64_t(srcOffset) + channels) + ") exceed srcChannels " +
                 std::to_string(srcChannels), op);
    if (std::int64_t(dstOffset) + channels > dstChannels)
        fail("destination channels [" + std::to_string(dstOffset) + ", " +
                 std::to_string(std::int64_t(dstOffset) + channels) + ") exceed dstChannels " +
                 std::to_string(dstChannels), op);
}

void checkActivationKind(Activation kind, const OpLabel& op) {
    switch (kind) {
    case Activation::Relu:
    case Activation::LeakyRelu:
    case Activation::Elu:
    case Activation::Silu: return;
    }
    fail("unknown activation kind " + std::to_string(int(kind)), op,
         "use relu, leaky relu, elu or silu");
}

void checkDropoutProbability(float probability, const OpLabel& op) {
    if (!(probability >= 0.0f && probability <= 1.0f))
        fail("dropout probability is " + std::to_string(probability) + ", must lie in [0, 1]", op,
             "set the layer's rate between 0 and 1");
}

void checkSgdSettings(const SgdSettings& s, const OpLabel& op) {
    if (!(s.momentum >= 0.0f))
        fail("SGD momentum is " + std::to_string(s.momentum) + ", must not be negative", op,
             "typical values are 0 or 0.9");
    if (!(s.weightDecay >= 0.0f))
        fail("weight decay is " + std::to_string(s.weightDecay) + ", must not be negative", op,
             "typical values are 0 to 5e-4");
    if (s.nesterov && s.momentum <= 0.0f)
        fail("Nesterov momentum needs a positive momentum", op,
             "set momentum (0.9, say) or turn Nesterov off");
}

void checkAdamSettings(const AdamSettings& s, const OpLabel& op) {
    if (!(s.beta1 >= 0.0f && s.beta1 < 1.0f) || !(s.beta2 >= 0.0f && s.beta2 < 1.0f))
        fail("Adam betas (" + std::to_string(s.beta1) + ", " + std::to_string(s.beta2) +
                 ") must lie in [0, 1)", op, "the usual values are 0.9 and 0.999");
    if (!(s.epsilon > 0.0f))
        fail("Adam epsilon is " + std::to_string(s.epsilon) + ", must be positive", op,
             "the usual value is 1e-8");
    if (!(s.weightDecay >= 0.0f))
        fail("weight decay is " + std::to_string(s.weightDecay) + ", must not be negative", op,
             "typical values are 0 to 0.01");
}

void checkAdamCorrections(const StepScalars& step, const OpLabel& op) {
    if (!(step.adamCorrection1 > 0.0f) || !(step.adamCorrection2 > 0.0f))
        fail("Adam bias corrections are (" + std::to_string(step.adamCorrection1) + ", " +
                 std::to_string(step.adamCorrection2) + "), must be positive",
             op, "set adamCorrection1 = 1 - beta1^t and adamCorrection2 = 1 - beta2^t, t = step + 1");
}

}  // namespace cnnstudio::ops
