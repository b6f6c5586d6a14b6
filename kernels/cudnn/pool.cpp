// cuDNN pooling: x (N,C,H,W) -> y (N,C,P,Q), max or average, and the backward pass dx from x, y
// and dy. Max uses cuDNN's deterministic mode (overlapping windows give the same dx every run);
// average divides by the number of non-padding elements, as the Backend interface defines.
// fp32 and tf32 only: on bf16 channels-last activations cuDNN's deterministic max-pool backward
// took 1.7 ms of a 5.3 ms fer-cnn step on the H200 (Nsight Compute, batch 256), so bf16 pools
// with our kernels (kernels/cuda/pool.cu).
// The geometry rules (floor-rounded output, padding at most half the window) are Backend's,
// checked before the op is called (op_checks.h); they are cuDNN's too.

#include "cnnstudio/error.h"
#include "cuda/index_limits.h"
#include "cudnn/cudnn_backend.h"

namespace cnnstudio::kernels {

PoolPlan& CudnnBackend::poolPlan(const PoolGeometry& g, const OpLabel& op) {
    if (auto found = poolPlans_.find(g); found != poolPlans_.end()) return found->second;

    requireIndexable(g, op);
    PoolPlan plan;
    plan.input = makeTensorDescriptor(CUDNN_DATA_FLOAT, g.batch, g.channels, g.inHeight, g.inWidth);
    plan.output =
        makeTensorDescriptor(CUDNN_DATA_FLOAT, g.batch, g.channels, g.outHeight, g.outWidth);
    plan.pooling = makePoolingDescriptor();
    const cudnnPoolingMode_t mode = g.kind == PoolKind::Max
                                        ? CUDNN_POOLING_MAX_DETERMINISTIC
                                        : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    CNNSTUDIO_CUDNN_CHECK(cudnnSetPooling2dDescriptor(plan.pooling.get(), mode, CUDNN_PROPAGATE_NAN,
                                                      g.kernelHeight, g.kernelWidth, g.padHeight,
                                                      g.padWidth, g.strideHeight, g.strideWidth));
    return poolPlans_.emplace(g, std::move(plan)).first->second;
}

void CudnnBackend::doPoolForward(const PoolGeometry& g, const float* x, float* y) {
    if (storesBf16()) {
        CudaBackend::doPoolForward(g, x, y);
        return;
    }
    activateDevice();
    const PoolPlan& plan = poolPlan(g, opLabel("poolForward"));
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnPoolingForward(cudnn_, plan.pooling.get(), &one, plan.input.get(),
                                              x, &zero, plan.output.get(), y));
}

void CudnnBackend::doPoolBackward(const PoolGeometry& g, const float* x, const float* y,
                                  const float* dy, float* dx) {
    if (storesBf16()) {
        CudaBackend::doPoolBackward(g, x, y, dy, dx);
        return;
    }
    activateDevice();
    const PoolPlan& plan = poolPlan(g, opLabel("poolBackward"));
    // Max: dy goes to the window's maximum. On exact ties cuDNN may pick another element than
    // the reference's first maximum; random data has none, and after a ReLU the tied zeros get
    // no gradient through the ReLU either way.
    const float one = 1.0f, zero = 0.0f;
    CNNSTUDIO_CUDNN_CHECK(cudnnPoolingBackward(cudnn_, plan.pooling.get(), &one, plan.output.get(),
                                               y, plan.output.get(), dy, plan.input.get(), x,
                                               &zero, plan.input.get(), dx));
}

}  // namespace cnnstudio::kernels
