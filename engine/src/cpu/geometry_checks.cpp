#include "cpu/geometry_checks.h"

#include <cmath>

#include "cnnstudio/error.h"

namespace cnnstudio::cpu {

namespace {

std::string str(std::int64_t value) { return std::to_string(value); }

void checkWindow(const char* axis, int in, int out, int kernel, int stride, int pad,
                 const char* op) {
    if (in <= 0 || out <= 0 || kernel <= 0 || stride <= 0)
        throw Error(std::string(axis) + ": input " + str(in) + ", output " + str(out) +
                        ", kernel " + str(kernel) + ", stride " + str(stride),
                    opWhere(op), "sizes, kernel and stride must all be >= 1");
    std::string a = axis;
    if (pad < 0)
        throw Error("padding " + a + " is " + str(pad), opWhere(op), "padding must be >= 0");
    std::int64_t span = std::int64_t(in) + 2 * std::int64_t(pad) - kernel;
    if (span < 0)
        throw Error("kernel " + a + " " + str(kernel) + " is larger than the padded input " + a +
                        " " + str(in + 2 * std::int64_t(pad)),
                    opWhere(op), "use a smaller kernel or more padding");
    std::int64_t expected = span / stride + 1;
    if (out != expected)
        throw Error("output " + a + " is " + str(out) + ", but input " + str(in) + ", kernel " +
                        str(kernel) + ", stride " + str(stride) + " and padding " + str(pad) +
                        " give " + str(expected),
                    opWhere(op), "take the output size from shape inference");
}

}  // namespace

std::string opWhere(const char* op) { return std::string("cpu backend, ") + op; }

void requirePointer(const void* pointer, const char* argument, const char* op) {
    if (!pointer)
        throw Error(std::string(argument) + " is a null pointer", opWhere(op),
                    "pass a buffer allocated on this backend");
}

void requirePositive(std::int64_t value, const char* what, const char* op) {
    if (value <= 0)
        throw Error(std::string(what) + " is " + str(value), opWhere(op), "it must be >= 1");
}

void checkConvGeometry(const ConvGeometry& g, const char* op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.inChannels, "input channels", op);
    requirePositive(g.outChannels, "output channels", op);
    requirePositive(g.groups, "groups", op);
    if (g.inChannels % g.groups != 0 || g.outChannels % g.groups != 0)
        throw Error("groups " + str(g.groups) + " do not divide input channels " +
                        str(g.inChannels) + " and output channels " + str(g.outChannels),
                    opWhere(op), "choose groups that divide both channel counts");
    checkWindow("height", g.inHeight, g.outHeight, g.kernelHeight, g.strideHeight, g.padHeight,
                op);
    checkWindow("width", g.inWidth, g.outWidth, g.kernelWidth, g.strideWidth, g.padWidth, op);
}

void checkPoolGeometry(const PoolGeometry& g, const char* op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.channels, "channels", op);
    checkWindow("height", g.inHeight, g.outHeight, g.kernelHeight, g.strideHeight, g.padHeight,
                op);
    checkWindow("width", g.inWidth, g.outWidth, g.kernelWidth, g.strideWidth, g.padWidth, op);
    // A window made only of padding has no maximum and no elements to average.
    if (g.padHeight >= g.kernelHeight || g.padWidth >= g.kernelWidth)
        throw Error("padding " + str(g.padHeight) + "x" + str(g.padWidth) +
                        " is not smaller than the kernel " + str(g.kernelHeight) + "x" +
                        str(g.kernelWidth),
                    opWhere(op), "pad by less than the kernel size");
}

void checkBatchNormGeometry(const BatchNormGeometry& g, const char* op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.channels, "channels", op);
    requirePositive(g.spatial, "spatial size", op);
    if (!(g.epsilon > 0.0f) || !std::isfinite(g.epsilon))
        throw Error("epsilon is " + std::to_string(g.epsilon), opWhere(op),
                    "use a small positive epsilon such as 1e-5");
    if (!(g.momentum >= 0.0f && g.momentum <= 1.0f))
        throw Error("momentum is " + std::to_string(g.momentum), opWhere(op),
                    "momentum must lie in [0, 1]");
}

void checkDenseGeometry(const DenseGeometry& g, const char* op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.inFeatures, "input features", op);
    requirePositive(g.outFeatures, "output features", op);
}

void checkLossGeometry(const LossGeometry& g, const char* op) {
    requirePositive(g.batch, "batch", op);
    requirePositive(g.classes, "classes", op);
    if (!(g.labelSmoothing >= 0.0f && g.labelSmoothing <= 1.0f))
        throw Error("label smoothing is " + std::to_string(g.labelSmoothing), opWhere(op),
                    "label smoothing must lie in [0, 1]");
}

}  // namespace cnnstudio::cpu
