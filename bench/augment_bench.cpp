// augment_bench: what the training-time augmentation costs per batch on one backend.
//   draws    the host's share: one ImageAugmentation per image and the batch's mixing
//            (datasets::imageAugmentation, mixBatch), as the loader's workers do per batch
//   augment  Backend::augmentImages on the batch (one kernel on GPU backends), including its
//            copy of the batch and the upload of the per-image parameters
// Each figure is the median over --repeats runs of --steps back-to-back batches (the GPU is
// synchronised once per run), after one warm-up run.
//
//   augment_bench                                   # cpu backend, batch 256 of 1x48x48
//   augment_bench --backend cudnn --mode bf16 --batch 256
//   augment_bench --backend cpu --threads 2 --augment crop=4,flip
//
// The default --augment is every transform at once (the most expensive case).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_buffer.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/datasets/augmentation.h"
#include "cnnstudio/error.h"
#include "cnnstudio/tensor.h"

using namespace cnnstudio;

namespace {

using Clock = std::chrono::steady_clock;

// Median milliseconds per call of `run` over `repeats` runs of `steps` calls each.
template <typename Run, typename Finish>
double medianMillisecondsPerCall(int repeats, int steps, Run&& run, Finish&& finish) {
    for (int s = 0; s < steps; ++s) run(s);  // warm-up: plans, workspaces, caches
    finish();
    std::vector<double> perCall;
    for (int r = 0; r < repeats; ++r) {
        const auto start = Clock::now();
        for (int s = 0; s < steps; ++s) run(s);
        finish();
        perCall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() / steps);
    }
    std::sort(perCall.begin(), perCall.end());
    return perCall[perCall.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    std::string backendName = "cpu", mode = "fp32",
                augment = "crop=4,flip,rotate=10,scale=0.8-1.2,shift=0.1,erase=0.5,erase-fill=noise,mixup=0.2,cutmix=1";
    int batch = 256, channels = 1, height = 48, width = 48, threads = 0, repeats = 7, steps = 20;
    CLI::App app{"Times the augmentation of a batch: the host's draws and Backend::augmentImages"};
    app.add_option("--backend", backendName, "cpu-ref | cpu | cuda | cudnn")->capture_default_str();
    app.add_option("--mode", mode, "precision: fp32 | tf32 | bf16 (bf16 stores the images bf16 channels-last)")
        ->capture_default_str();
    app.add_option("--batch", batch, "images per batch")->check(CLI::Range(1, 1 << 20))->capture_default_str();
    app.add_option("--channels", channels)->check(CLI::Range(1, 64))->capture_default_str();
    app.add_option("--height", height)->check(CLI::Range(1, 4096))->capture_default_str();
    app.add_option("--width", width)->check(CLI::Range(1, 4096))->capture_default_str();
    app.add_option("--augment", augment, "the --augment text of cnnstudio-train")->capture_default_str();
    app.add_option("--threads", threads, "CPU threads (0: every core)")->check(CLI::Range(0, 4096));
    app.add_option("--repeats", repeats)->check(CLI::Range(1, 1000))->capture_default_str();
    app.add_option("--steps", steps, "batches per timed run")->check(CLI::Range(1, 100000))->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    try {
        const datasets::AugmentationConfig config = datasets::parseAugmentation(augment);
        BackendOptions options;
        options.threads = threads;
        options.precision = parsePrecision(mode);
        const std::unique_ptr<Backend> backend = createBackend(backendName, options);
        const AugmentGeometry g{batch, channels, height, width};
        const TensorShape shape{batch, channels, height, width};

        std::mt19937 rng(7);
        std::vector<float> host(std::size_t(g.count()));
        for (float& value : host) value = std::normal_distribution<float>(0.0f, 1.0f)(rng);
        Tensor images = Tensor::activations(*backend, shape);
        images.fromHost(host);
        std::vector<std::int32_t> labels(static_cast<std::size_t>(batch));
        for (auto& label : labels) label = std::int32_t(rng() % 7);

        // One batch's parameters per step, as the loader draws them.
        std::vector<ImageAugmentation> augmentations(static_cast<std::size_t>(batch));
        auto draw = [&](int step) {
            for (int i = 0; i < batch; ++i)
                augmentations[std::size_t(i)] = datasets::imageAugmentation(
                    config, datasets::augmentationSeed(1, std::uint64_t(step), std::uint64_t(i)), height, width);
            if (config.mixes())
                datasets::mixBatch(config, datasets::mixingSeed(1, std::uint64_t(step), 0), labels, augmentations,
                                   height, width);
        };
        const double drawMs = medianMillisecondsPerCall(repeats, steps, draw, [] {});

        BackendBuffer<ImageAugmentation> onBackend(*backend, std::size_t(batch));
        auto run = [&](int step) {
            backend->upload(onBackend.data(), augmentations.data(), augmentations.size() * sizeof(ImageAugmentation));
            backend->augmentImages(g, onBackend.data(), images.data());
        };
        draw(0);
        const double augmentMs = medianMillisecondsPerCall(repeats, steps, run, [&] { backend->synchronize(); });

        const double megabytes = double(backend->activationBytes(std::size_t(g.count()))) / 1e6;
        std::printf("augment_bench: %s (%s), batch %d x %d x %d x %d (%.2f MB), augment %s\n",
                    backend->name().c_str(), backend->description().c_str(), batch, channels, height, width,
                    megabytes, datasets::toString(config).c_str());
        std::printf("  draws on the host     %9.4f ms per batch\n", drawMs);
        std::printf("  augmentImages         %9.4f ms per batch (%.3g GB/s of batch read + written)\n", augmentMs,
                    2.0 * megabytes / augmentMs);  // MB per ms = GB/s
        return 0;
    } catch (const Error& error) {
        std::fprintf(stderr, "augment_bench: %s\n", error.what());
        return 1;
    }
}
