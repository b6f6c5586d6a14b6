// Batch normalisation over x (N, C, S): per channel c, over the N*S values of that channel.
//   training:  mean, var (biased) of the batch; y = gamma (x - mean) / sqrt(var + eps) + beta;
//              savedMean = mean, savedInvStd = 1 / sqrt(var + eps);
//              running = (1 - momentum) running + momentum batch, with the UNBIASED variance
//              (PyTorch's rule; oneDNN does not keep running statistics, so we do it here)
//   inference: the same y with the running statistics
//   backward:  dbeta = sum dy, dgamma = sum dy xhat,
//              dx = gamma invStd / n (n dy - dbeta - xhat dgamma)
// All three are oneDNN primitives on plain NCHW (viewed as N, C, S, 1).
#include <cmath>

#include "cpu/cpu_backend.h"
#include "ops/op_checks.h"

namespace cnnstudio::cpu {

namespace {

using dnnl::memory;
using Flags = dnnl::normalization_flags;

memory::dims dataDims(const BatchNormGeometry& g) { return {g.batch, g.channels, g.spatial, 1}; }

dnnl::batch_normalization_forward::desc forwardDesc(const BatchNormGeometry& g, bool training) {
    Flags flags = Flags::use_scale | Flags::use_shift;
    if (!training) flags = flags | Flags::use_global_stats;
    return {training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
            plainDesc(dataDims(g)), g.epsilon, flags};
}

}  // namespace

BatchNormForwardPlan& CpuBackend::batchNormForwardPlan(const BatchNormGeometry& g,
                                                       bool training) {
    auto& plans = training ? batchNormTrainingPlans_ : batchNormInferencePlans_;
    if (auto found = plans.find(g); found != plans.end()) return found->second;
    const memory::dims data = dataDims(g), channels = {g.channels};
    BatchNormForwardPlan p;
    try {
        dnnl::batch_normalization_forward::primitive_desc pd(forwardDesc(g, training),
                                                             attributes_, engine_);
        p.x = Operand::plain(engine_, plainDesc(data));
        p.y = Operand::plain(engine_, plainDesc(data));
        p.gamma = Operand::plain(engine_, plainDesc(channels));
        p.beta = Operand::plain(engine_, plainDesc(channels));
        p.mean = Operand::plain(engine_, plainDesc(channels));
        p.variance = Operand::plain(engine_, plainDesc(channels));
        p.plan.primitive = dnnl::batch_normalization_forward(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.x.primitiveMemory()},
                       {DNNL_ARG_DST, p.y.primitiveMemory()},
                       {DNNL_ARG_SCALE, p.gamma.primitiveMemory()},
                       {DNNL_ARG_SHIFT, p.beta.primitiveMemory()},
                       {DNNL_ARG_MEAN, p.mean.primitiveMemory()},
                       {DNNL_ARG_VARIANCE, p.variance.primitiveMemory()}};
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, training ? "batchNormForwardTraining" : "cpu batchNormForwardInference");
    }
    if (training) p.batchVariance.resize(std::size_t(g.channels));
    return plans.emplace(g, std::move(p)).first->second;
}

BatchNormBackwardPlan& CpuBackend::batchNormBackwardPlan(const BatchNormGeometry& g) {
    if (auto found = batchNormBackwardPlans_.find(g); found != batchNormBackwardPlans_.end())
        return found->second;
    const memory::dims data = dataDims(g), channels = {g.channels};
    BatchNormBackwardPlan p;
    try {
        dnnl::batch_normalization_forward::primitive_desc hint(forwardDesc(g, true), attributes_,
                                                               engine_);
        dnnl::batch_normalization_backward::desc desc(dnnl::prop_kind::backward,
                                                      plainDesc(data), plainDesc(data),
                                                      g.epsilon,
                                                      Flags::use_scale | Flags::use_shift);
        dnnl::batch_normalization_backward::primitive_desc pd(desc, attributes_, engine_, hint);
        p.x = Operand::plain(engine_, plainDesc(data));
        p.dy = Operand::plain(engine_, plainDesc(data));
        p.gamma = Operand::plain(engine_, plainDesc(channels));
        p.beta = Operand::plain(engine_, plainDesc(channels));
        p.mean = Operand::plain(engine_, plainDesc(channels));
        p.variance = Operand::plain(engine_, plainDesc(channels));
        p.dx = Operand::plain(engine_, plainDesc(data));
        p.dgamma = Operand::plain(engine_, plainDesc(channels));
        p.dbeta = Operand::plain(engine_, plainDesc(channels));
        p.plan.primitive = dnnl::batch_normalization_backward(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.x.primitiveMemory()},
                       {DNNL_ARG_DIFF_DST, p.dy.primitiveMemory()},
                       {DNNL_ARG_SCALE, p.gamma.primitiveMemory()},
                       {DNNL_ARG_SHIFT, p.beta.primitiveMemory()},
                       {DNNL_ARG_MEAN, p.mean.primitiveMemory()},
                       {DNNL_ARG_VARIANCE, p.variance.primitiveMemory()},
                       {DNNL_ARG_DIFF_SRC, p.dx.primitiveMemory()},
                       {DNNL_ARG_DIFF_SCALE, p.dgamma.primitiveMemory()},
                       {DNNL_ARG_DIFF_SHIFT, p.dbeta.primitiveMemory()}};
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu batchNormBackward");
    }
    p.recoveredVariance.resize(std::size_t(g.channels));
    p.zeroBeta.assign(std::size_t(g.channels), 0.0f);
    return batchNormBackwardPlans_.emplace(g, std::move(p)).first->second;
}

void CpuBackend::batchNormForwardTraining(const BatchNormGeometry& g, const float* x,
                                          const float* gamma, const float* beta, float* y,
                                          float* runningMean, float* runningVar,
                                          float* savedMean, float* savedInvStd) {
    const char* op = "cpu batchNormForwardTraining";
    ops::checkBatchNormGeometry(g, true, op);
    for (auto [pointer, name] : {std::pair<const void*, const char*>{x, "x"}, {gamma, "gamma"},
                                 {beta, "beta"}, {y, "y"}, {runningMean, "runningMean"},
                                 {runningVar, "runningVar"}, {savedMean, "savedMean"},
                                 {savedInvStd, "savedInvStd"}})
        ops::requirePointer(pointer, name, op);
    const std::int64_t perChannel = std::int64_t(g.batch) * g.spatial;
    OmpThreadScope threads(threads_);
    BatchNormForwardPlan& p = batchNormForwardPlan(g, true);
    p.x.bindInput(x, stream_, buffers_);
    p.gamma.bindInput(gamma, stream_, buffers_);
    p.beta.bindInput(beta, stream_, buffers_);
    p.mean.bindOutput(savedMean, buffers_);
    p.variance.bindOutput(p.batchVariance.data(), buffers_);
    p.y.bindOutput(y, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();

    const float momentum = g.momentum;
    const float unbiasing = float(double(perChannel) / double(perChannel - 1));
    for (int c = 0; c < g.channels; ++c) {
        const float variance = p.batchVariance[std::size_t(c)];
        savedInvStd[c] = 1.0f / std::sqrt(variance + g.epsilon);
        runningMean[c] = (1.0f - momentum) * runningMean[c] + momentum * savedMean[c];
        runningVar[c] = (1.0f - momentum) * runningVar[c] + momentum * variance * unbiasing;
    }
}

void CpuBackend::batchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                           const float* gamma, const float* beta,
                                           const float* runningMean, const float* runningVar,
                                           float* y) {
    const char* op = "cpu batchNormForwardInference";
    ops::checkBatchNormGeometry(g, false, op);
    for (auto [pointer, name] : {std::pair<const void*, const char*>{x, "x"}, {gamma, "gamma"},
                                 {beta, "beta"}, {runningMean, "runningMean"},
                                 {runningVar, "runningVar"}, {y, "y"}})
        ops::requirePointer(pointer, name, op);
    OmpThreadScope threads(threads_);
    BatchNormForwardPlan& p = batchNormForwardPlan(g, false);
    p.x.bindInput(x, stream_, buffers_);
    p.gamma.bindInput(gamma, stream_, buffers_);
    p.beta.bindInput(beta, stream_, buffers_);
    p.mean.bindInput(runningMean, stream_, buffers_);
    p.variance.bindInput(runningVar, stream_, buffers_);
    p.y.bindOutput(y, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

void CpuBackend::batchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                                   const float* gamma, const float* savedMean,
                                   const float* savedInvStd, float* dx, float* dgamma,
                                   float* dbeta) {
    const char* op = "cpu batchNormBackward";
    ops::checkBatchNormGeometry(g, false, op);
    for (auto [pointer, name] : {std::pair<const void*, const char*>{x, "x"}, {dy, "dy"},
                                 {gamma, "gamma"}, {savedMean, "savedMean"},
                                 {savedInvStd, "savedInvStd"}, {dx, "dx"}, {dgamma, "dgamma"},
                                 {dbeta, "dbeta"}})
        ops::requirePointer(pointer, name, op);
    OmpThreadScope threads(threads_);
    BatchNormBackwardPlan& p = batchNormBackwardPlan(g);
    // oneDNN takes the variance; the interface keeps 1 / sqrt(var + eps). Inverting loses
    // nothing that matters: oneDNN adds eps back before it takes the root.
    for (int c = 0; c < g.channels; ++c)
        p.recoveredVariance[std::size_t(c)] = 1.0f / (savedInvStd[c] * savedInvStd[c]) - g.epsilon;
    p.x.bindInput(x, stream_, buffers_);
    p.dy.bindInput(dy, stream_, buffers_);
    p.gamma.bindInput(gamma, stream_, buffers_);
    p.beta.bindInput(p.zeroBeta.data(), stream_, buffers_);
    p.mean.bindInput(savedMean, stream_, buffers_);
    p.variance.bindInput(p.recoveredVariance.data(), stream_, buffers_);
    p.dx.bindOutput(dx, buffers_);
    p.dgamma.bindOutput(dgamma, buffers_);
    p.dbeta.bindOutput(dbeta, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

}  // namespace cnnstudio::cpu
