// Where the cpu backend's activations cross to and from fp32 NCHW: uploads, downloads and
// Flatten. In bf16 precision activations are bf16 NHWC (cpu_backend.h), so each crossing is one
// oneDNN reorder, planned once per shape:
//   upload            f32 (N, C, H, W) abcd -> bf16 acdb (nhwc), rounded to nearest even
//   download          bf16 acdb -> f32 abcd (exact), then download() (which every backend's
//                     downloadActivations goes through: Backend::downloadCount counts it)
//   flatten forward   bf16 acdb -> bf16 abcd: y (N, C*H*W) in NCHW element order
//   flatten backward  bf16 abcd -> bf16 acdb
// Where both layouts hold the same element order (one channel, or one pixel per image) Flatten
// is a copy (the Backend default). fp32 stores fp32 NCHW and uses the Backend defaults.
#include "cpu/cpu_backend.h"

namespace cnnstudio::cpu {

namespace {

using dnnl::memory;

bool layoutsCoincide(const TensorShape& shape) {
    return shape.channels == 1 || shape.height * shape.width == 1;
}

memory::desc nchw(const memory::dims& dims, memory::data_type type) {
    return memory::desc(dims, type, memory::format_tag::abcd);
}

}  // namespace

ActivationFormat CpuBackend::activationFormat() const {
    return storesBf16() ? ActivationFormat{true, true} : ActivationFormat{};
}

std::size_t LayoutKeyHash::operator()(const LayoutKey& key) const {
    const TensorShape& s = key.shape;
    return hashFields({s.batch, s.channels, s.height, s.width, int(key.change)});
}

void CpuBackend::changeLayout(const LayoutKey& key, const void* from, void* to) {
    OmpThreadScope threads(threads_);
    auto found = layoutPlans_.find(key);
    if (found == layoutPlans_.end()) {
        const TensorShape& s = key.shape;
        const memory::dims dims{s.batch, s.channels, s.height, s.width};
        const memory::desc stored = activationDesc(dims, true);
        const memory::desc fp32 = nchw(dims, memory::data_type::f32);
        const memory::desc flat = nchw(dims, memory::data_type::bf16);
        memory::desc source, destination;
        switch (key.change) {
        case LayoutChange::Upload: source = fp32, destination = stored; break;
        case LayoutChange::Download: source = stored, destination = fp32; break;
        case LayoutChange::FlattenForward: source = stored, destination = flat; break;
        case LayoutChange::FlattenBackward: source = flat, destination = stored; break;
        }
        LayoutPlan p;
        try {
            dnnl::reorder::primitive_desc pd(engine_, source, engine_, destination, attributes_);
            p.from = Operand::plain(engine_, source);
            p.to = Operand::plain(engine_, destination);
            p.plan.primitive = dnnl::reorder(pd);
            p.plan.args = {{DNNL_ARG_FROM, p.from.primitiveMemory()},
                           {DNNL_ARG_TO, p.to.primitiveMemory()}};
            p.plan.attachScratchpad(pd.scratchpad_desc(), engine_, buffers_);
        } catch (const dnnl::error& error) {
            throwPlanError(error, "cpu activation layout");
        }
        found = layoutPlans_.emplace(key, std::move(p)).first;
    }
    LayoutPlan& p = found->second;
    p.from.bindInput(from, stream_, buffers_);
    p.to.bindOutput(to, buffers_);
    p.plan.execute(stream_, buffers_);
    stream_.wait();
}

void CpuBackend::doUploadActivations(const TensorShape& shape, const float* hostSource,
                                     float* destination) {
    if (!storesBf16()) {
        Backend::doUploadActivations(shape, hostSource, destination);
        return;
    }
    changeLayout({shape, LayoutChange::Upload}, hostSource, destination);
}

void CpuBackend::doDownloadActivations(const TensorShape& shape, const float* source,
                                       float* hostDestination) {
    if (!storesBf16()) {
        Backend::doDownloadActivations(shape, source, hostDestination);
        return;
    }
    const std::size_t bytes = std::size_t(shape.count()) * sizeof(float);
    downloadStaging_.reserve(bytes);
    changeLayout({shape, LayoutChange::Download}, source, downloadStaging_.data());
    download(hostDestination, downloadStaging_.data(), bytes);
}

void CpuBackend::doFlattenForward(const TensorShape& shape, const float* x, float* y) {
    if (!storesBf16() || layoutsCoincide(shape)) {
        Backend::doFlattenForward(shape, x, y);
        return;
    }
    changeLayout({shape, LayoutChange::FlattenForward}, x, y);
}

void CpuBackend::doFlattenBackward(const TensorShape& shape, const float* dy, float* dx) {
    if (!storesBf16() || layoutsCoincide(shape)) {
        Backend::doFlattenBackward(shape, dy, dx);
        return;
    }
    changeLayout({shape, LayoutChange::FlattenBackward}, dy, dx);
}

}  // namespace cnnstudio::cpu
