// Our bf16 channels-last batch norm chains through the Backend interface, one thread (min of 10 runs).
// g++ -O2 -std=c++20 ours.cpp -o ours -I main/kernels/include -I main/core/include -L build/kernels -L build/core -lcnncpu -lcnncore
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "cnnstudio/kernels/cpu_backends.h"
#include "cnnstudio/backend.h"
using namespace cnnstudio;
int main(int argc, char** argv) {
    int N = atoi(argv[1]), C = atoi(argv[2]), H = atoi(argv[3]), W = atoi(argv[4]);
    BackendOptions o; o.threads = 1; o.precision = Precision::Bf16;
    auto b = createCpuBackend(o);
    BatchNormGeometry g{N, C, H * W};
    std::size_t n = std::size_t(g.count());
    std::vector<float> host(n); for (std::size_t i = 0; i < n; ++i) host[i] = float(i % 97) / 50.0f - 1.0f;
    std::vector<float> x(n), y(n), dy(n), dx(n), z(n), yp(n / 4), dyp(n / 4);
    TensorShape shape{N, C, H, W};
    b->uploadActivations(shape, host.data(), x.data()); b->uploadActivations(shape, host.data(), dy.data());
    TensorShape pshape{N, C, H / 2, W / 2};
    std::vector<float> hp(n / 4, 0.5f); b->uploadActivations(pshape, hp.data(), dyp.data());
    std::vector<float> gamma(C, 1.f), beta(C, 0.f), rm(C, 0.f), rv(C, 1.f), sm(C), si(C), dg(C), db(C);
    PoolGeometry pool{PoolKind::Max, N, C, H, W, H / 2, W / 2, 2, 2, 2, 2, 0, 0};
    auto time = [&](auto f) { f(); double best = 1e9; for (int r = 0; r < 10; ++r) { auto t = std::chrono::steady_clock::now(); f(); best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count()); } return best; };
    double f1 = time([&] { b->batchNormReluForwardTraining(g, x.data(), gamma.data(), beta.data(), z.data(), y.data(), rm.data(), rv.data(), sm.data(), si.data()); });
    double b1 = time([&] { b->batchNormReluBackward(g, x.data(), y.data(), dy.data(), gamma.data(), beta.data(), sm.data(), si.data(), z.data(), dx.data(), dg.data(), db.data()); });
    double f2 = time([&] { b->batchNormReluMaxPoolForwardTraining(g, pool, x.data(), gamma.data(), beta.data(), z.data(), z.data(), yp.data(), rm.data(), rv.data(), sm.data(), si.data()); });
    double b2 = time([&] { b->batchNormReluMaxPoolBackward(g, pool, x.data(), z.data(), yp.data(), dyp.data(), gamma.data(), beta.data(), sm.data(), si.data(), z.data(), z.data(), dx.data(), dg.data(), db.data()); });
    printf("ours %dx%dx%dx%d: bn+relu %.2f / %.2f ms, bn+relu+pool %.2f / %.2f ms\n", N, C, H, W, f1, b1, f2, b2);
}
