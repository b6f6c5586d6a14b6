// Convolution (cross-correlation, zero padding, groups) through oneDNN.
//   forward:         x (N, C, H, W), w (K, C/groups, R, S), bias (K) -> y (N, K, P, Q)
//   backward data:   dy (N, K, P, Q), w -> dx (N, C, H, W)
//   backward filter: x, dy -> dw (K, C/groups, R, S), dbias (K) = sum of dy over N, P, Q
// fp32 precision: activations are plain NCHW; the primitives pick their own layouts
// (format_tag::any, which is nChw16c / OIhw16i16o on AVX-512) and the operands reorder through
// the shared staging buffers. On fer-cnn's 3x3 layers the blocked direct kernels beat oneDNN's plain-layout
// GEMM path by 1.3-2.6x, reorders included.
// The algorithm is convolution_auto: oneDNN picks Winograd F(4x4, 3x3) on AVX-512 where its
// heuristic expects a gain (3x3, stride 1, enough batch), direct elsewhere. On fer-cnn's
// layers at batch 64 Winograd runs forward, backward data and backward weights each 2.5x
// faster than direct, relative error ~7e-7 against direct (one core of a 2-core EPYC, 2026).
// Layers with fewer than 16 channels per group stay direct: Winograd pads channels to 16, and
// on fer-cnn's 1-channel stem it ran 2-3x slower than direct.
// bf16 precision: x, y, dx and dy are the backend's activations, bf16 channels-last (nhwc), and
// the primitives read and write them where they lie; the weights stay fp32 (master copies) and are
// staged as bf16 in the primitives' blocked layouts, dw is written fp32 and the bias stays fp32;
// the primitives accumulate in fp32. oneDNN runs them on AMX tiles or AVX512-BF16 (brgconv),
// always direct: it has no bf16 Winograd. Before activations were bf16 nhwc, staging between
// fp32 NCHW and the primitives' bf16 nhwc took 364 ms of a fer-cnn step against 345 ms of
// convolutions (one core of a Xeon with AMX, batch 64, docs/logs/2026-12-04-cpu-bf16); with
// only the weights staged, conv1_2 takes 8.6/26.6 ms forward/backward against 32.2/73.3 then,
// conv3_2 7.9/29.8 against 10.4/35.7 (docs/logs/2026-12-05-cpu-bf16-nhwc/report.json).
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

using dnnl::memory;
using Direction = Operand::Direction;

struct ConvDims {
    memory::dims x, w, bias, y, strides, padLeft, padRight;
    dnnl::algorithm algorithm;
    bool bf16;
    memory::data_type weights;  // the primitive's weights (dw and the bias are fp32)

    // x, y, dx or dy as the primitive is asked for it: fp32 in the layout it prefers, or the
    // stored bf16 nhwc.
    memory::desc activation(const memory::dims& dims) const {
        return bf16 ? activationDesc(dims, true) : anyDesc(dims);
    }
    // ... and as the backend stores it.
    memory::desc stored(const memory::dims& dims) const { return activationDesc(dims, bf16); }
};

ConvDims convDims(const ConvGeometry& g, Precision precision) {
    ConvDims d;
    d.x = {g.batch, g.inChannels, g.inHeight, g.inWidth};
    // Grouped weights (groups, K/groups, C/groups, R, S) are PyTorch's (K, C/groups, R, S).
    d.w = g.groups == 1 ? memory::dims{g.outChannels, g.inChannels, g.kernelHeight, g.kernelWidth}
                        : memory::dims{g.groups, g.outChannels / g.groups,
                                       g.inChannels / g.groups, g.kernelHeight, g.kernelWidth};
    d.bias = {g.outChannels};
    d.y = {g.batch, g.outChannels, g.outHeight, g.outWidth};
    d.strides = {g.strideHeight, g.strideWidth};
    d.padLeft = {g.padHeight, g.padWidth};
    // The far side pads only what the last window reaches (floor output size).
    d.padRight = {(g.outHeight - 1) * g.strideHeight + g.kernelHeight - g.inHeight - g.padHeight,
                  (g.outWidth - 1) * g.strideWidth + g.kernelWidth - g.inWidth - g.padWidth};
    constexpr int winogradMinimumChannels = 16;
    const bool wideEnough = g.inChannels / g.groups >= winogradMinimumChannels &&
                            g.outChannels / g.groups >= winogradMinimumChannels;
    d.bf16 = precision == Precision::Bf16;
    d.algorithm = wideEnough && !d.bf16 ? dnnl::algorithm::convolution_auto
                                        : dnnl::algorithm::convolution_direct;
    d.weights = d.bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    return d;
}

dnnl::convolution_forward::desc forwardDesc(const ConvDims& d, bool withBias) {
    using dnnl::prop_kind;
    if (withBias)
        return {prop_kind::forward_training, d.algorithm, d.activation(d.x),
                anyDesc(d.w, d.weights), plainDesc(d.bias), d.activation(d.y), d.strides,
                d.padLeft, d.padRight};
    return {prop_kind::forward_training, d.algorithm, d.activation(d.x), anyDesc(d.w, d.weights),
            d.activation(d.y), d.strides, d.padLeft, d.padRight};
}

}  // namespace

ConvForwardPlan& CpuBackend::convForwardPlan(const ConvKey& key) {
    if (auto found = convForwardPlans_.find(key); found != convForwardPlans_.end())
        return found->second;
    ConvDims d = convDims(key.geometry, precision_);
    ConvForwardPlan p;
    try {
        dnnl::convolution_forward::primitive_desc pd(forwardDesc(d, key.withBias), attributes_,
                                                     engine_);
        p.x = Operand(engine_, d.stored(d.x), pd.src_desc(), Direction::Input,
                      StagingSlot::First, buffers_);
        p.w = Operand(engine_, plainDesc(d.w), pd.weights_desc(), Direction::Input,
                      StagingSlot::Second, buffers_);
        p.y = Operand(engine_, d.stored(d.y), pd.dst_desc(), Direction::Output,
                      StagingSlot::Third, buffers_);
        p.plan.primitive = dnnl::convolution_forward(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.x.primitiveMemory()},
                       {DNNL_ARG_WEIGHTS, p.w.primitiveMemory()},
                       {DNNL_ARG_DST, p.y.primitiveMemory()}};
        if (key.withBias) {
            p.bias = Operand(engine_, plainDesc(d.bias), pd.bias_desc(), Direction::Input,
                             StagingSlot::First, buffers_);
            p.plan.args[DNNL_ARG_BIAS] = p.bias.primitiveMemory();
        }
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu convForward");
    }
    return convForwardPlans_.emplace(key, std::move(p)).first->second;
}

ConvBackwardDataPlan& CpuBackend::convBackwardDataPlan(const ConvKey& key) {
    if (auto found = convBackwardDataPlans_.find(key); found != convBackwardDataPlans_.end())
        return found->second;
    ConvDims d = convDims(key.geometry, precision_);
    ConvBackwardDataPlan p;
    try {
        dnnl::convolution_forward::primitive_desc hint(forwardDesc(d, false), attributes_,
                                                       engine_);
        dnnl::convolution_backward_data::desc desc(d.algorithm, d.activation(d.x),
                                                   anyDesc(d.w, d.weights), d.activation(d.y),
                                                   d.strides, d.padLeft, d.padRight);
        dnnl::convolution_backward_data::primitive_desc pd(desc, attributes_, engine_, hint);
        p.dy = Operand(engine_, d.stored(d.y), pd.diff_dst_desc(), Direction::Input,
                       StagingSlot::First, buffers_);
        p.w = Operand(engine_, plainDesc(d.w), pd.weights_desc(), Direction::Input,
                      StagingSlot::Second, buffers_);
        p.dx = Operand(engine_, d.stored(d.x), pd.diff_src_desc(), Direction::Output,
                       StagingSlot::Third, buffers_);
        p.plan.primitive = dnnl::convolution_backward_data(pd);
        p.plan.args = {{DNNL_ARG_DIFF_DST, p.dy.primitiveMemory()},
                       {DNNL_ARG_WEIGHTS, p.w.primitiveMemory()},
                       {DNNL_ARG_DIFF_SRC, p.dx.primitiveMemory()}};
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu convBackwardData");
    }
    return convBackwardDataPlans_.emplace(key, std::move(p)).first->second;
}

ConvBackwardFilterPlan& CpuBackend::convBackwardFilterPlan(const ConvKey& key) {
    if (auto found = convBackwardFilterPlans_.find(key); found != convBackwardFilterPlans_.end())
        return found->second;
    ConvDims d = convDims(key.geometry, precision_);
    ConvBackwardFilterPlan p;
    try {
        dnnl::convolution_forward::primitive_desc hint(forwardDesc(d, key.withBias), attributes_,
                                                       engine_);
        using Desc = dnnl::convolution_backward_weights::desc;
        Desc desc = key.withBias
                        ? Desc(d.algorithm, d.activation(d.x), anyDesc(d.w), plainDesc(d.bias),
                               d.activation(d.y), d.strides, d.padLeft, d.padRight)
                        : Desc(d.algorithm, d.activation(d.x), anyDesc(d.w), d.activation(d.y),
                               d.strides, d.padLeft, d.padRight);
        dnnl::convolution_backward_weights::primitive_desc pd(desc, attributes_, engine_, hint);
        p.x = Operand(engine_, d.stored(d.x), pd.src_desc(), Direction::Input,
                      StagingSlot::First, buffers_);
        p.dy = Operand(engine_, d.stored(d.y), pd.diff_dst_desc(), Direction::Input,
                       StagingSlot::Second, buffers_);
        p.dw = Operand(engine_, plainDesc(d.w), pd.diff_weights_desc(), Direction::Output,
                       StagingSlot::Third, buffers_);
        p.plan.primitive = dnnl::convolution_backward_weights(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.x.primitiveMemory()},
                       {DNNL_ARG_DIFF_DST, p.dy.primitiveMemory()},
                       {DNNL_ARG_DIFF_WEIGHTS, p.dw.primitiveMemory()}};
        if (key.withBias) {
            p.dbias = Operand(engine_, plainDesc(d.bias), pd.diff_bias_desc(), Direction::Output,
                              StagingSlot::First, buffers_);
            p.plan.args[DNNL_ARG_DIFF_BIAS] = p.dbias.primitiveMemory();
        }
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu convBackwardFilter");
    }
    return convBackwardFilterPlans_.emplace(key, std::move(p)).first->second;
}

void CpuBackend::doConvForward(const ConvGeometry& g, const float* x, const float* w,
                               const float* bias, float* y) {
    OmpThreadScope threads(threads_);
    ConvForwardPlan& p = convForwardPlan({g, bias != nullptr});
    p.x.bindInput(x, stream_, buffers_);
    p.w.bindInput(w, stream_, buffers_);
    if (bias) p.bias.bindInput(bias, stream_, buffers_);
    p.y.bindOutput(y, buffers_);
    p.plan.execute(stream_, buffers_);
    p.y.finishOutput(stream_);
    stream_.wait();
}

void CpuBackend::doConvBackwardData(const ConvGeometry& g, const float* dy, const float* w,
                                    float* dx) {
    OmpThreadScope threads(threads_);
    ConvBackwardDataPlan& p = convBackwardDataPlan({g, false});
    p.dy.bindInput(dy, stream_, buffers_);
    p.w.bindInput(w, stream_, buffers_);
    p.dx.bindOutput(dx, buffers_);
    p.plan.execute(stream_, buffers_);
    p.dx.finishOutput(stream_);
    stream_.wait();
}

void CpuBackend::doConvBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                                      float* dw, float* dbias) {
    OmpThreadScope threads(threads_);
    ConvBackwardFilterPlan& p = convBackwardFilterPlan({g, dbias != nullptr});
    p.x.bindInput(x, stream_, buffers_);
    p.dy.bindInput(dy, stream_, buffers_);
    p.dw.bindOutput(dw, buffers_);
    if (dbias) p.dbias.bindOutput(dbias, buffers_);
    p.plan.execute(stream_, buffers_);
    p.dw.finishOutput(stream_);
    if (dbias) p.dbias.finishOutput(stream_);
    stream_.wait();
}

}  // namespace cnnstudio::cpu
