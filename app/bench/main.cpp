// cnnstudio-bench: images per second of full training steps (forward, backward, SGD-momentum
// update) on random data, in the JSON-lines shape of bench/pytorch_reference.py, so
// both can be printed side by side from one command on one machine.
//
//   cnnstudio-bench --backend cpu --threads 16 --batch 64
//   cnnstudio-bench --backend cudnn --mode fp32 tf32 bf16 --batch 256
//   mpirun -np 2 cnnstudio-bench --backend cudnn --batch 256   # data parallel, per-rank batch
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/distributed.h"
#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/spec.h"

namespace {

using namespace cnnstudio;

struct BenchSettings {
    std::string backend = "cpu";
    std::vector<std::string> modes{"fp32"};
    std::vector<int> batches{64};
    std::string model = "fer-cnn";
    int threads = 0;
    int steps = 0;   // 0: 40 on GPUs, 4 on CPUs (as pytorch_reference.py)
    int warmup = 0;  // 0: 5 on GPUs, 1 on CPUs
    int device = 0;
    bool capture = true;
};

// Median over three timed runs of `steps` training steps, after `warmup` steps, in images per
// second over all ranks (each rank trains `batch` images a step, gradients all-reduced).
double measureImagesPerSecond(Backend& backend, Communicator& communicator, const NetworkSpec& spec,
                              int batch, const BenchSettings& settings) {
    Network network(spec, backend, batch, 0);
    std::mt19937 random(0);
    std::normal_distribution<float> normal;
    std::vector<float> images(static_cast<std::size_t>(network.input().count()));
    for (float& v : images) v = normal(random);
    network.input().fromHost(images);
    std::uniform_int_distribution<std::int32_t> label(0, network.classes() - 1);
    std::vector<std::int32_t> labels(static_cast<std::size_t>(batch));
    for (auto& l : labels) l = label(random);
    backend.upload(network.labels(), labels.data(), labels.size() * sizeof(std::int32_t));

    OptimizerConfig sgd;  // lr 0.01, momentum 0.9, as the PyTorch reference
    Optimizer optimizer(sgd, backend, network.parameterCount());
    GradientSync gradientSync(network, communicator);
    TrainingStep step(network, optimizer, settings.capture, &gradientSync);
    const bool gpu = backend.isDevice();
    const int steps = settings.steps > 0 ? settings.steps : gpu ? 40 : 4;
    const int warmup = settings.warmup > 0 ? settings.warmup : gpu ? 5 : 1;

    std::uint32_t stepNumber = 0;
    for (int i = 0; i < warmup; ++i) step.run(sgd.learningRate, stepNumber++);
    backend.synchronize();
    std::vector<double> seconds;
    for (int repeat = 0; repeat < 3; ++repeat) {
        communicator.barrier();
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < steps; ++i) step.run(sgd.learningRate, stepNumber++);
        backend.synchronize();
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    if (!std::isfinite(network.downloadLoss()))
        throw Error("the loss became non-finite while benchmarking", "backend '" + backend.name() + "'");
    return double(batch) * communicator.world().size * steps / seconds[1];
}

// More threads than cores only wait for one another: allowed (a shared machine may be measured
// on purpose), but said.
void warnAboutThreadsBeyondCores(int threads) {
    const unsigned cores = std::thread::hardware_concurrency();
    if (cores > 0 && unsigned(threads) > cores)
        std::fprintf(stderr, "cnnstudio-bench: warning: --threads %d is more than the %u cores of this machine; "
                             "the extra threads only wait for each other\n", threads, cores);
}

}  // namespace

int main(int argc, char** argv) {
    BenchSettings settings;
    CLI::App app{"CNN Studio throughput benchmark: training steps per second on random data"};
    app.add_option("--backend", settings.backend, "cpu-ref | cpu | cuda | cudnn")->capture_default_str();
    app.add_option("--mode", settings.modes, "precision(s): fp32 tf32 bf16")->capture_default_str();
    app.add_option("--batch", settings.batches, "batch size(s) per rank")->capture_default_str();
    app.add_option("--model", settings.model, "a preset name or a spec file")->capture_default_str();
    // libgomp crashed creating 100000 threads; cnnstudio-train takes the same range.
    app.add_option("--threads", settings.threads, "CPU threads (0: every core)")->check(CLI::Range(0, 4096));
    app.add_option("--steps", settings.steps, "timed steps per repeat (default 40 GPU, 4 CPU)");
    app.add_option("--warmup", settings.warmup, "warm-up steps (default 5 GPU, 1 CPU)");
    app.add_option("--device", settings.device, "CUDA device index");
    app.add_flag("!--no-graph", settings.capture, "do not capture the step as a CUDA graph");
    CLI11_PARSE(app, argc, argv);
    warnAboutThreadsBeyondCores(settings.threads);

    try {
        const WorldInfo world = initialiseWorld();
        const bool isPreset = std::ranges::count(presetNames(), settings.model) > 0;
        NetworkSpec spec = isPreset ? loadPreset(settings.model) : NetworkSpec::load(settings.model);
        for (const std::string& mode : settings.modes) {
            BackendOptions options;
            options.threads = settings.threads;
            options.precision = parsePrecision(mode);
            options.device = world.size > 1 ? world.localRank : settings.device;  // a GPU per rank
            auto backend = createBackend(settings.backend, options);
            auto communicator = createCommunicator(*backend, createDeviceTransport(*backend).get());
            for (int batch : settings.batches) {
                double imagesPerSecond = measureImagesPerSecond(*backend, *communicator, spec, batch, settings);
                if (world.rank != 0) continue;
                nlohmann::json line = {
                    {"impl", "cnnstudio"}, {"backend", backend->name()},
                    {"description", backend->description()}, {"model", spec.name},
                    {"device", backend->isDevice() ? "cuda" : "cpu"}, {"mode", mode},
                    {"batch_per_rank", batch}, {"ranks", world.size}, {"threads", settings.threads},
                    {"graph", settings.capture}, {"images_per_s", std::round(imagesPerSecond * 10) / 10}};
                std::cout << line.dump() << std::endl;
            }
        }
    } catch (const std::exception& error) {
        std::cerr << "cnnstudio-bench: " << error.what() << "\n";
        return 1;
    }
    finaliseWorld();
    return 0;
}
