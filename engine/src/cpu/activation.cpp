// Activations over `count` floats, oneDNN eltwise primitives (JIT, vectorised exp for ELU).
//   relu(x) = max(x, 0); leaky(x) = x > 0 ? x : alpha x; elu(x) = x > 0 ? x : alpha (exp(x) - 1)
//   backward: dx = dy * f'(x); f'(0) is taken from the x <= 0 side, as in PyTorch.
// Backward reads y when alpha >= 0 (then y > 0 exactly when x > 0, and elu' = y + alpha for
// x <= 0), which keeps it right when a layer ran the forward in place (x == y); with a negative
// alpha it reads x.
#include "cpu/cpu_backend.h"
#include "cpu/geometry_checks.h"

namespace cnnstudio::cpu {

namespace {

// Leaky ReLU is oneDNN's relu with a negative slope; relu is the slope 0.
float slope(Activation kind, float alpha) { return kind == Activation::Relu ? 0.0f : alpha; }

bool backwardReadsY(const ActivationKey& key) { return slope(key.kind, key.alpha) >= 0.0f; }

dnnl::algorithm forwardAlgorithm(Activation kind) {
    return kind == Activation::Elu ? dnnl::algorithm::eltwise_elu : dnnl::algorithm::eltwise_relu;
}

dnnl::algorithm backwardAlgorithm(const ActivationKey& key) {
    if (!backwardReadsY(key)) return forwardAlgorithm(key.kind);
    return key.kind == Activation::Elu ? dnnl::algorithm::eltwise_elu_use_dst_for_bwd
                                       : dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
}

}  // namespace

ActivationPlan& CpuBackend::activationForwardPlan(const ActivationKey& key) {
    if (auto found = activationForwardPlans_.find(key); found != activationForwardPlans_.end())
        return found->second;
    const dnnl::memory::desc data = plainDesc({std::int64_t(key.count)});
    ActivationPlan p;
    try {
        dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training,
                                         forwardAlgorithm(key.kind), data,
                                         slope(key.kind, key.alpha));
        dnnl::eltwise_forward::primitive_desc pd(desc, attributes_, engine_);
        p.in = Operand::plain(engine_, data);
        p.out = Operand::plain(engine_, data);
        p.plan.primitive = dnnl::eltwise_forward(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.in.primitiveMemory()},
                       {DNNL_ARG_DST, p.out.primitiveMemory()}};
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "activationForward");
    }
    return activationForwardPlans_.emplace(key, std::move(p)).first->second;
}

ActivationPlan& CpuBackend::activationBackwardPlan(const ActivationKey& key) {
    if (auto found = activationBackwardPlans_.find(key); found != activationBackwardPlans_.end())
        return found->second;
    const dnnl::memory::desc data = plainDesc({std::int64_t(key.count)});
    const float alpha = slope(key.kind, key.alpha);
    ActivationPlan p;
    try {
        dnnl::eltwise_forward::desc hintDesc(dnnl::prop_kind::forward_training,
                                             backwardAlgorithm(key), data, alpha);
        dnnl::eltwise_forward::primitive_desc hint(hintDesc, attributes_, engine_);
        dnnl::eltwise_backward::desc desc(backwardAlgorithm(key), data, data, alpha);
        dnnl::eltwise_backward::primitive_desc pd(desc, attributes_, engine_, hint);
        p.in = Operand::plain(engine_, data);
        p.dy = Operand::plain(engine_, data);
        p.out = Operand::plain(engine_, data);
        p.plan.primitive = dnnl::eltwise_backward(pd);
        p.plan.args = {{backwardReadsY(key) ? DNNL_ARG_DST : DNNL_ARG_SRC, p.in.primitiveMemory()},
                       {DNNL_ARG_DIFF_DST, p.dy.primitiveMemory()},
                       {DNNL_ARG_DIFF_SRC, p.out.primitiveMemory()}};
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "activationBackward");
    }
    return activationBackwardPlans_.emplace(key, std::move(p)).first->second;
}

void CpuBackend::activationForward(Activation kind, float alpha, const float* x, float* y,
                                   std::size_t count) {
    if (count == 0) return;
    requirePointer(x, "x", "activationForward");
    requirePointer(y, "y", "activationForward");
    OmpThreadScope threads(threads_);
    ActivationPlan& p = activationForwardPlan({kind, slope(kind, alpha), count});
    p.in.bindInput(x, stream_, buffers_);
    p.out.bindOutput(y, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

void CpuBackend::activationBackward(Activation kind, float alpha, const float* x, const float* y,
                                    const float* dy, float* dx, std::size_t count) {
    if (count == 0) return;
    const ActivationKey key{kind, slope(kind, alpha), count};
    const char* op = "activationBackward";
    requirePointer(backwardReadsY(key) ? y : x, backwardReadsY(key) ? "y" : "x", op);
    requirePointer(dy, "dy", op);
    requirePointer(dx, "dx", op);
    OmpThreadScope threads(threads_);
    ActivationPlan& p = activationBackwardPlan(key);
    p.in.bindInput(backwardReadsY(key) ? y : x, stream_, buffers_);
    p.dy.bindInput(dy, stream_, buffers_);
    p.out.bindOutput(dx, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

}  // namespace cnnstudio::cpu
