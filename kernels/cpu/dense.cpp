// Dense (fully connected) layers, oneDNN inner product (plain layouts; bf16 weights as it chooses).
//   forward:          x (N, in), w (out, in) as PyTorch's Linear, bias (out) -> y = x w^T + bias
//   backward data:    dy (N, out), w -> dx = dy w
//   backward weights: x, dy -> dw = dy^T x, dbias = sum of dy over N
// bf16 precision: x, y, dx and dy are bf16 activations (rows: a dense layer's input is flat);
// the primitives read bf16 copies of w staged in the layout they choose, write dw (staged back
// to plain) and dbias in fp32, and accumulate in fp32.
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

using dnnl::memory;

// x, w, bias and y as stored, and w and dw as the primitives are asked for them (plain fp32,
// or in bf16 precision a bf16 w and an fp32 dw in the layouts they choose).
struct DenseDescs {
    memory::desc x, w, bias, y, primitiveW, primitiveDw;
};

DenseDescs denseDescs(const DenseGeometry& g, bool bf16) {
    const memory::dims w{g.outFeatures, g.inFeatures};
    return {activationDesc({g.batch, g.inFeatures}, bf16),
            plainDesc(w),
            plainDesc({g.outFeatures}),
            activationDesc({g.batch, g.outFeatures}, bf16),
            bf16 ? anyDesc(w, memory::data_type::bf16) : plainDesc(w),
            bf16 ? anyDesc(w) : plainDesc(w)};
}

dnnl::inner_product_forward::desc forwardDesc(const DenseDescs& d, bool withBias) {
    if (withBias) return {dnnl::prop_kind::forward_training, d.x, d.primitiveW, d.bias, d.y};
    return {dnnl::prop_kind::forward_training, d.x, d.primitiveW, d.y};
}

}  // namespace

DenseForwardPlan& CpuBackend::denseForwardPlan(const DenseKey& key) {
    if (auto found = denseForwardPlans_.find(key); found != denseForwardPlans_.end())
        return found->second;
    DenseDescs d = denseDescs(key.geometry, storesBf16());
    DenseForwardPlan p;
    try {
        dnnl::inner_product_forward::primitive_desc pd(forwardDesc(d, key.withBias), attributes_,
                                                       engine_);
        p.x = Operand::plain(engine_, d.x);
        p.w = Operand(engine_, d.w, pd.weights_desc(), Operand::Direction::Input,
                      StagingSlot::First, buffers_);
        p.y = Operand::plain(engine_, d.y);
        p.plan.primitive = dnnl::inner_product_forward(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.x.primitiveMemory()},
                       {DNNL_ARG_WEIGHTS, p.w.primitiveMemory()},
                       {DNNL_ARG_DST, p.y.primitiveMemory()}};
        if (key.withBias) {
            p.bias = Operand::plain(engine_, d.bias);
            p.plan.args[DNNL_ARG_BIAS] = p.bias.primitiveMemory();
        }
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu denseForward");
    }
    return denseForwardPlans_.emplace(key, std::move(p)).first->second;
}

DenseBackwardDataPlan& CpuBackend::denseBackwardDataPlan(const DenseKey& key) {
    if (auto found = denseBackwardDataPlans_.find(key); found != denseBackwardDataPlans_.end())
        return found->second;
    DenseDescs d = denseDescs(key.geometry, storesBf16());
    DenseBackwardDataPlan p;
    try {
        dnnl::inner_product_forward::primitive_desc hint(forwardDesc(d, false), attributes_,
                                                         engine_);
        dnnl::inner_product_backward_data::desc desc(d.x, d.primitiveW, d.y);
        dnnl::inner_product_backward_data::primitive_desc pd(desc, attributes_, engine_, hint);
        p.dy = Operand::plain(engine_, d.y);
        p.w = Operand(engine_, d.w, pd.weights_desc(), Operand::Direction::Input,
                      StagingSlot::First, buffers_);
        p.dx = Operand::plain(engine_, d.x);
        p.plan.primitive = dnnl::inner_product_backward_data(pd);
        p.plan.args = {{DNNL_ARG_DIFF_DST, p.dy.primitiveMemory()},
                       {DNNL_ARG_WEIGHTS, p.w.primitiveMemory()},
                       {DNNL_ARG_DIFF_SRC, p.dx.primitiveMemory()}};
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu denseBackwardData");
    }
    return denseBackwardDataPlans_.emplace(key, std::move(p)).first->second;
}

DenseBackwardWeightsPlan& CpuBackend::denseBackwardWeightsPlan(const DenseKey& key) {
    if (auto found = denseBackwardWeightsPlans_.find(key);
        found != denseBackwardWeightsPlans_.end())
        return found->second;
    DenseDescs d = denseDescs(key.geometry, storesBf16());
    DenseBackwardWeightsPlan p;
    try {
        dnnl::inner_product_forward::primitive_desc hint(forwardDesc(d, key.withBias),
                                                         attributes_, engine_);
        using Desc = dnnl::inner_product_backward_weights::desc;
        Desc desc = key.withBias ? Desc(d.x, d.primitiveDw, d.bias, d.y)
                                 : Desc(d.x, d.primitiveDw, d.y);
        dnnl::inner_product_backward_weights::primitive_desc pd(desc, attributes_, engine_, hint);
        p.x = Operand::plain(engine_, d.x);
        p.dy = Operand::plain(engine_, d.y);
        p.dw = Operand(engine_, d.w, pd.diff_weights_desc(), Operand::Direction::Output,
                       StagingSlot::First, buffers_);
        p.plan.primitive = dnnl::inner_product_backward_weights(pd);
        p.plan.args = {{DNNL_ARG_SRC, p.x.primitiveMemory()},
                       {DNNL_ARG_DIFF_DST, p.dy.primitiveMemory()},
                       {DNNL_ARG_DIFF_WEIGHTS, p.dw.primitiveMemory()}};
        if (key.withBias) {
            p.dbias = Operand::plain(engine_, d.bias);
            p.plan.args[DNNL_ARG_DIFF_BIAS] = p.dbias.primitiveMemory();
        }
        p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
    } catch (const dnnl::error& error) {
        throwPlanError(error, "cpu denseBackwardWeights");
    }
    return denseBackwardWeightsPlans_.emplace(key, std::move(p)).first->second;
}

void CpuBackend::doDenseForward(const DenseGeometry& g, const float* x, const float* w,
                                const float* bias, float* y) {
    OmpThreadScope threads(threads_);
    DenseForwardPlan& p = denseForwardPlan({g, bias != nullptr});
    p.x.bindInput(x, stream_, buffers_);
    p.w.bindInput(w, stream_, buffers_);
    if (bias) p.bias.bindInput(bias, stream_, buffers_);
    p.y.bindOutput(y, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

void CpuBackend::doDenseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                                     float* dx) {
    OmpThreadScope threads(threads_);
    DenseBackwardDataPlan& p = denseBackwardDataPlan({g, false});
    p.dy.bindInput(dy, stream_, buffers_);
    p.w.bindInput(w, stream_, buffers_);
    p.dx.bindOutput(dx, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

void CpuBackend::doDenseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy,
                                        float* dw, float* dbias) {
    OmpThreadScope threads(threads_);
    DenseBackwardWeightsPlan& p = denseBackwardWeightsPlan({g, dbias != nullptr});
    p.x.bindInput(x, stream_, buffers_);
    p.dy.bindInput(dy, stream_, buffers_);
    p.dw.bindOutput(dw, buffers_);
    if (dbias) p.dbias.bindOutput(dbias, buffers_);
    p.plan.execute(stream_, buffers_);
    p.dw.finishOutput(stream_);
    stream_.wait();
}

}  // namespace cnnstudio::cpu
