// conv_bench: times the convolutions of fer-cnn (forward, backward data, backward filter) on
// one backend and prints milliseconds and achieved TFLOP/s per op, the figures to tune the GPU
// convolution kernels against (fp32 FFMA peak of an H200: about 67 TFLOP/s).
//
//   conv_bench                              # cuda backend, batch 256
//   conv_bench --backend cudnn --precision bf16 --repeats 50
//   conv_bench --backend cpu --batch 16 --repeats 3
//
// Each figure is the median of --repeats timed runs after two warm-up runs; the backend is
// synchronised around every run. One line of JSON per op. The input layer (conv1_1, one grey
// channel) has almost no arithmetic: its figure is mostly memory traffic and launch overhead.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/tensor.h"

using namespace cnnstudio;

namespace {

ConvGeometry sameConv3x3(int batch, int inChannels, int outChannels, int size) {
    ConvGeometry g;
    g.batch = batch;
    g.inChannels = inChannels;
    g.outChannels = outChannels;
    g.inHeight = g.inWidth = g.outHeight = g.outWidth = size;
    g.kernelHeight = g.kernelWidth = 3;
    g.padHeight = g.padWidth = 1;
    return g;
}

std::vector<float> normalValues(std::int64_t count, std::mt19937& random) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(static_cast<std::size_t>(count));
    for (float& value : values) value = normal(random);
    return values;
}

// fp32 values (weights).
Tensor randomTensor(Backend& backend, std::int64_t count, std::mt19937& random) {
    Tensor tensor(backend, {int(count), 1, 1, 1});
    tensor.fromHost(normalValues(count, random));
    return tensor;
}

// Activations, in the backend's format (bf16 channels-last for cudnn bf16).
Tensor randomActivations(Backend& backend, std::int64_t count, std::mt19937& random) {
    const TensorShape shape{int(count), 1, 1, 1};
    Tensor tensor = Tensor::activations(backend, shape);
    backend.uploadActivations(shape, normalValues(count, random).data(), tensor.data());
    return tensor;
}

double medianMilliseconds(Backend& backend, int repeats, const std::function<void()>& op) {
    for (int warmUp = 0; warmUp < 2; ++warmUp) op();
    backend.synchronize();
    std::vector<double> times;
    for (int run = 0; run < repeats; ++run) {
        const auto start = std::chrono::steady_clock::now();
        op();
        backend.synchronize();
        times.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Times fer-cnn's convolutions on one backend"};
    std::string backendName = "cuda", precision = "fp32";
    int batch = 256, repeats = 20;
    app.add_option("--backend", backendName, "cpu-ref, cpu, cuda or cudnn");
    app.add_option("--precision", precision, "fp32, tf32 or bf16 (cudnn runs all three)")
        ->check(CLI::IsMember({"fp32", "tf32", "bf16"}));
    app.add_option("--batch", batch, "images per batch")->check(CLI::PositiveNumber);
    app.add_option("--repeats", repeats, "timed runs per op (the median is printed)")
        ->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    try {
        BackendOptions options;
        options.precision = parsePrecision(precision);
        std::unique_ptr<Backend> backend = createBackend(backendName, options);
        std::mt19937 random(2024);
        const struct {
            const char* name;
            ConvGeometry geometry;
        } layers[] = {
            {"conv1_1", sameConv3x3(batch, 1, 64, 48)},
            {"conv1_2", sameConv3x3(batch, 64, 64, 48)},   {"conv2_1", sameConv3x3(batch, 64, 128, 24)},
            {"conv2_2", sameConv3x3(batch, 128, 128, 24)}, {"conv3_1", sameConv3x3(batch, 128, 256, 12)},
            {"conv3_2", sameConv3x3(batch, 256, 256, 12)},
        };
        for (const auto& layer : layers) {
            const ConvGeometry& g = layer.geometry;
            Tensor x = randomActivations(*backend, g.inputCount(), random);
            Tensor w = randomTensor(*backend, g.weightCount(), random);
            Tensor y = randomActivations(*backend, g.outputCount(), random);
            Tensor dx = Tensor::activations(*backend, {int(g.inputCount()), 1, 1, 1});
            Tensor dw(*backend, {int(g.weightCount()), 1, 1, 1});
            const double flop = 2.0 * double(g.outputCount()) * double(g.inChannels) *
                                g.kernelHeight * g.kernelWidth;
            const struct {
                const char* op;
                std::function<void()> run;
            } ops[] = {
                {"forward", [&] { backend->convForward(g, x.data(), w.data(), nullptr, y.data()); }},
                {"backward_data", [&] { backend->convBackwardData(g, y.data(), w.data(), dx.data()); }},
                {"backward_filter",
                 [&] { backend->convBackwardFilter(g, x.data(), y.data(), dw.data(), nullptr); }},
            };
            for (const auto& op : ops) {
                const double ms = medianMilliseconds(*backend, repeats, op.run);
                std::printf("{\"backend\": \"%s\", \"precision\": \"%s\", \"layer\": \"%s\", "
                            "\"op\": \"%s\", \"batch\": %d, \"ms\": %.4f, \"tflops\": %.2f}\n",
                            backend->name().c_str(), precision.c_str(), layer.name, op.op, batch, ms,
                            flop / (ms * 1e-3) / 1e12);
            }
        }
    } catch (const Error& error) {
        std::fprintf(stderr, "conv_bench: %s\n", error.what());
        return 1;
    }
    return 0;
}
