// oneDNN 2.6 batch norm (+ fused ReLU) forward training and backward, bf16 nhwc, one thread.
// g++ -O2 -std=c++20 onednn_bnorm.cpp -o onednn_bnorm -ldnnl; OMP_NUM_THREADS=1 ./onednn_bnorm N C H W (min of 10 runs)
#include <oneapi/dnnl/dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <algorithm>
#include <vector>
using namespace dnnl;
int main(int argc, char** argv) {
    int N = atoi(argv[1]), C = atoi(argv[2]), H = atoi(argv[3]), W = atoi(argv[4]);
    engine eng(engine::kind::cpu, 0); stream s(eng);
    memory::desc data({N, C, H, W}, memory::data_type::bf16, memory::format_tag::nhwc);
    auto flags = normalization_flags::use_scale_shift | normalization_flags::fuse_norm_relu;
    batch_normalization_forward::primitive_desc fpd({prop_kind::forward_training, data, 1e-5f, flags}, eng);
    batch_normalization_backward::primitive_desc bpd({prop_kind::backward, data, data, 1e-5f, flags}, eng, fpd);
    memory x(data, eng), y(data, eng), dy(data, eng), dx(data, eng);
    memory ss(fpd.weights_desc(), eng), dss(bpd.diff_weights_desc(), eng);
    memory mean(fpd.mean_desc(), eng), var(fpd.variance_desc(), eng), ws(fpd.workspace_desc(), eng);
    std::vector<uint16_t> init((size_t)N*C*H*W, 0x3f80);
    memcpy(x.get_data_handle(), init.data(), init.size()*2); memcpy(dy.get_data_handle(), init.data(), init.size()*2);
    float* sp = (float*)ss.get_data_handle(); for (int c = 0; c < 2*C; ++c) sp[c] = c < C ? 1.f : 0.f;
    auto f = batch_normalization_forward(fpd); auto b = batch_normalization_backward(bpd);
    auto run = [&](bool fwd) {
        if (fwd) f.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}, {DNNL_ARG_SCALE_SHIFT, ss}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}, {DNNL_ARG_WORKSPACE, ws}});
        else b.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_SCALE_SHIFT, ss}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}, {DNNL_ARG_WORKSPACE, ws}, {DNNL_ARG_DIFF_SRC, dx}, {DNNL_ARG_DIFF_SCALE_SHIFT, dss}});
        s.wait();
    };
    for (int fwd = 1; fwd >= 0; --fwd) {
        run(fwd); double best = 1e9;
        for (int r = 0; r < 10; ++r) { auto t = std::chrono::steady_clock::now(); run(fwd); best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count()); }
        printf("%s %dx%dx%dx%d: %.2f ms (%s)\n", fwd ? "forward" : "backward", N, C, H, W, best, fwd ? fpd.impl_info_str() : bpd.impl_info_str());
    }
}
