// Activations over `count` elements, oneDNN eltwise primitives (JIT, vectorised exp for ELU and
// SiLU) on the stored activations: fp32, or bf16 in bf16 precision (computed in fp32).
//   relu(x) = max(x, 0); leaky(x) = x > 0 ? x : alpha x; elu(x) = x > 0 ? x : alpha (exp(x) - 1)
//   silu(x) = x sigmoid(x): oneDNN's swish x sigmoid(beta x) with beta = 1
//   backward: dx = dy * f'(x); f'(0) is taken from the x <= 0 side, as in PyTorch.
// SiLU takes oneDNN's swish rather than an OpenMP loop of ours because the other activations
// already run there: the same plan cache, threading and vectorised exp, and no second code
// path for one op.
// Backward reads x, as cpu-ref does: elu' = alpha exp(x) is exact where y + alpha loses digits
// (y near -alpha). ReLU and leaky ReLU with alpha >= 0 may still run in place (x == y): y > 0
// exactly when x > 0.
#include <bit>

#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

// The eltwise primitive's alpha: leaky ReLU is oneDNN's relu with a negative slope and relu the
// slope 0; ELU's alpha is ours; SiLU is swish with beta 1 (whatever alpha the layer passes).
float eltwiseAlpha(Activation kind, float alpha) {
    switch (kind) {
    case Activation::Relu: return 0.0f;
    case Activation::Silu: return 1.0f;
    case Activation::LeakyRelu:
    case Activation::Elu: return alpha;
    }
    return alpha;
}

ActivationKey activationKey(Activation kind, float alpha, std::size_t count) {
    return {kind, std::bit_cast<std::uint32_t>(eltwiseAlpha(kind, alpha)), count};
}

float keyAlpha(const ActivationKey& key) { return std::bit_cast<float>(key.alphaBits); }

dnnl::algorithm eltwiseAlgorithm(Activation kind) {
    switch (kind) {
    case Activation::Elu: return dnnl::algorithm::eltwise_elu;
    case Activation::Silu: return dnnl::algorithm::eltwise_swish;
    case Activation::Relu:
    case Activation::LeakyRelu: return dnnl::algorithm::eltwise_relu;
    }
    return dnnl::algorithm::eltwise_relu;
}

}  // namespace

ActivationPlan& CpuBackend::activationForwardPlan(const ActivationKey& key) {
    if (auto found = activationForwardPlans_.find(key); found != activationForwardPlans_.end())
        return found->second;
    const dnnl::memory::desc data = activationDesc({std::int64_t(key.count)}, storesBf16());
    ActivationPlan p;
    try {
        dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training,
                                         eltwiseAlgorithm(key.kind), data, keyAlpha(key));
        dnnl::eltwise_forward::primitive_desc pd(desc, attributes_, engine_);
        p.in = Operand::plain(engine_, data);
        p.out = Operand::plain(engine_, data);
        p.plan.primitive = dnnl::eltwise_forward(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.in.primitiveMemory()},
                       {DNNL_ARG_DST, p.out.primitiveMemory()}};
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu activationForward");
    }
    return activationForwardPlans_.emplace(key, std::move(p)).first->second;
}

ActivationPlan& CpuBackend::activationBackwardPlan(const ActivationKey& key) {
    if (auto found = activationBackwardPlans_.find(key); found != activationBackwardPlans_.end())
        return found->second;
    const dnnl::memory::desc data = activationDesc({std::int64_t(key.count)}, storesBf16());
    const float alpha = keyAlpha(key);
    ActivationPlan p;
    try {
        dnnl::eltwise_forward::desc hintDesc(dnnl::prop_kind::forward_training,
                                             eltwiseAlgorithm(key.kind), data, alpha);
        dnnl::eltwise_forward::primitive_desc hint(hintDesc, attributes_, engine_);
        dnnl::eltwise_backward::desc desc(eltwiseAlgorithm(key.kind), data, data, alpha);
        dnnl::eltwise_backward::primitive_desc pd(desc, attributes_, engine_, hint);
        p.in = Operand::plain(engine_, data);
        p.dy = Operand::plain(engine_, data);
        p.out = Operand::plain(engine_, data);
        p.plan.primitive = dnnl::eltwise_backward(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.in.primitiveMemory()},
                       {DNNL_ARG_DIFF_DST, p.dy.primitiveMemory()},
                       {DNNL_ARG_DIFF_SRC, p.out.primitiveMemory()}};
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu activationBackward");
    }
    return activationBackwardPlans_.emplace(key, std::move(p)).first->second;
}

void CpuBackend::doActivationForward(Activation kind, float alpha, const float* x, float* y,
                                     std::size_t count) {
    const ActivationKey key = activationKey(kind, alpha, count);
    OmpThreadScope threads(threads_);
    ActivationPlan& p = activationForwardPlan(key);
    p.in.bindInput(x, stream_, buffers_);
    p.out.bindOutput(y, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

void CpuBackend::doActivationBackward(Activation kind, float alpha, const float* x, const float* y,
                                      const float* dy, float* dx, std::size_t count) {
    const ActivationKey key = activationKey(kind, alpha, count);
    OmpThreadScope threads(threads_);
    ActivationPlan& p = activationBackwardPlan(key);
    p.in.bindInput(x, stream_, buffers_);
    p.dy.bindInput(dy, stream_, buffers_);
    p.out.bindOutput(dx, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

}  // namespace cnnstudio::cpu
