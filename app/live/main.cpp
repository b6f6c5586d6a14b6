// cnnstudio-live: the live emotion-recognition pipeline from the command line, on a camera, a
// video file or a folder of images. Writes the annotated video and a JSON-lines log of every
// frame's faces and predictions; --benchmark prints the frame rate and the latency of each
// stage. Exit codes: 0 done, 1 an error (no camera, unreadable model or source), 2 bad usage.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <numeric>
#include <optional>

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/live/emotion_classifier.h"
#include "cnnstudio/live/frame_source.h"
#include "cnnstudio/live/live_output.h"
#include "cnnstudio/live/live_pipeline.h"
#include "common/command_line.h"
#include "common/output_paths.h"
#include "common/stop_signals.h"

namespace {

using namespace cnnstudio;
using namespace cnnstudio::live;
using Clock = std::chrono::steady_clock;

std::atomic<bool> stopRequested{false};  // set by the stop-signal thread (common/stop_signals.h)

struct Options {
    std::string source, model, output, log, backend = "cpu", cascade = cnnstudio::live::defaultFaceCascade().string();
    int threads = 1, smoothing = 10, detectEvery = 1, detectionWidth = 320, maxFrames = 0;
    bool gradCam = false, benchmark = false;
};

// Per-stage sums over the timed frames, printed by --benchmark.
struct BenchmarkTotals {
    long long frames = 0, faces = 0;
    StageTimings sum;
    std::vector<double> frameMs;

    void add(const FrameResult& result) {
        ++frames;
        faces += static_cast<long long>(result.faces.size());
        sum.captureMs += result.timings.captureMs;
        sum.detectMs += result.timings.detectMs;
        sum.inferMs += result.timings.inferMs;
        sum.drawMs += result.timings.drawMs;
        frameMs.push_back(result.timings.totalMs());
    }
};

// Frames are timed after this many, once caches and the per-batch networks are warm.
constexpr long long kWarmUpFrames = 5;

// CPU time (user + system, every thread) of this process so far. Beside the wall-clock rate it
// says what the pipeline costs on a machine that other work is also using: the frame rate of
// one free core is at least 1000 / (CPU ms per frame).
double processCpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

void printBenchmark(const Options& options, const BenchmarkTotals& totals, double wallSeconds, double cpuSeconds,
                    const cv::Size& frameSize) {
    if (totals.frames == 0) {
        std::printf("benchmark: no frame was timed (the source has at most %lld frames)\n", kWarmUpFrames);
        return;
    }
    std::vector<double> sorted = totals.frameMs;
    std::sort(sorted.begin(), sorted.end());
    const double n = double(totals.frames);
    const nlohmann::json line = {
        {"source", options.source},
        {"model", options.model},
        {"backend", options.backend},
        {"threads", options.threads},
        {"frame", {frameSize.width, frameSize.height}},
        {"frames", totals.frames},
        {"faces_per_frame", double(totals.faces) / n},
        {"detect_every", options.detectEvery},
        {"gradcam", options.gradCam},
        {"fps", n / wallSeconds},
        {"cpu_ms_per_frame", 1000.0 * cpuSeconds / n},
        {"ms_per_frame", {{"capture", totals.sum.captureMs / n}, {"detect", totals.sum.detectMs / n},
                          {"infer", totals.sum.inferMs / n}, {"draw", totals.sum.drawMs / n},
                          {"total_median", sorted[sorted.size() / 2]},
                          {"total_p95", sorted[std::min(sorted.size() - 1, std::size_t(0.95 * double(sorted.size())))]}}}};
    std::printf("%s\n", line.dump().c_str());
    std::fprintf(stderr, "%.1f FPS over %lld frames (%.2f faces each, %.2f CPU ms each): capture %.2f  detect %.2f  infer %.2f  draw %.2f ms\n",
                 n / wallSeconds, totals.frames, double(totals.faces) / n, 1000.0 * cpuSeconds / n, totals.sum.captureMs / n,
                 totals.sum.detectMs / n, totals.sum.inferMs / n, totals.sum.drawMs / n);
}

int run(const Options& options) {
    const SourceSpec sourceSpec = parseSourceSpec(options.source);
    requireOutputIsNotInput(options.output, "--output", sourceSpec.path, "--source");
    requireOutputIsNotInput(options.log, "--log", sourceSpec.path, "--source");
    requireWritableOutput(options.output, "--output");
    requireWritableOutput(options.log, "--log");
    std::unique_ptr<FrameSource> source = openFrameSource(sourceSpec);
    BackendOptions backendOptions;
    backendOptions.threads = options.threads;
    std::unique_ptr<Backend> backend = createBackend(options.backend, backendOptions);
    EmotionClassifier classifier(resolveModel(options.model), *backend);

    PipelineOptions pipelineOptions;
    pipelineOptions.tracker.smoothingFrames = options.smoothing;
    pipelineOptions.detectEveryFrames = options.detectEvery;
    pipelineOptions.detector.detectionWidth = options.detectionWidth;
    pipelineOptions.detector.cascade = options.cascade;
    pipelineOptions.gradCam = options.gradCam;
    LivePipeline pipeline(classifier, pipelineOptions);

    std::optional<VideoRecorder> recorder;
    std::optional<DetectionLog> log;
    if (!options.log.empty()) log.emplace(options.log);
    BenchmarkTotals totals;
    Clock::time_point timedStart;
    double cpuAtStart = 0;
    cv::Size frameSize;
    long long frames = 0;
    while (!stopRequested && (options.maxFrames == 0 || frames < options.maxFrames)) {
        const Clock::time_point before = Clock::now();
        std::optional<cv::Mat> frame = source->nextFrame();
        if (!frame) break;
        const double captureMs = std::chrono::duration<double, std::milli>(Clock::now() - before).count();
        if (frames == kWarmUpFrames) {
            timedStart = before;
            cpuAtStart = processCpuSeconds();
        }
        const FrameResult result = pipeline.process(*frame, captureMs);
        frameSize = frame->size();
        if (frames >= kWarmUpFrames) totals.add(result);
        if (!options.output.empty()) {
            if (!recorder) {
                const double rate = source->nominalFramesPerSecond();
                recorder.emplace(options.output, rate > 0 && rate < 240 ? rate : 25.0, result.annotated.size());
            }
            recorder->write(result.annotated);
        }
        if (log) log->write(detectionRecord(result, classifier.classNames()).dump());
        ++frames;
    }
    const double wallSeconds = std::chrono::duration<double>(Clock::now() - timedStart).count();
    const double cpuSeconds = processCpuSeconds() - cpuAtStart;
    if (recorder) recorder->finish();
    if (log) log->finish();
    std::fprintf(stderr, "%lld frames from %s%s\n", frames, source->description().c_str(),
                 stopRequested ? " (stopped)" : "");
    if (options.benchmark) printBenchmark(options, totals, wallSeconds, cpuSeconds, frameSize);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    cnnstudio::ignoreClosedOutput();
    CLI::App app{"cnnstudio-live: live emotion recognition on a camera, a video or a folder of images.\n"
                 "Exit codes: 0 done, 1 an error (no camera, unreadable model or source), 2 bad usage.\n"
                 "A closed standard output (| head) does not stop the stream: --output and --log are still written."};
    Options options;
    app.add_option("--source", options.source, "camera:N | video:FILE | folder:DIR")->required();
    app.add_option("--model", options.model,
                   "a shipped model's name, a model folder, or a finished run folder (RUN_DIR or RUN_DIR/model)")
        ->required();
    app.add_option("--output", options.output, "write the annotated video here (.mp4, .avi or .mkv)");
    app.add_option("--log", options.log, "write one JSON line per frame here: faces, track ids, raw and smoothed probabilities");
    app.add_option("--backend", options.backend, "cpu-ref | cpu | cuda | cudnn")->capture_default_str();
    // One thread by default: a frame's faces are a batch of a few 48x48 images, too little work
    // for a team of threads to share, and each layer's thread barrier costs more than it saves
    // (docs/logs/2026-12-01-live/threads.txt: on this 2-core machine under load, inference took
    // 3.3 ms per frame on one thread and 820 ms on two).
    app.add_option("--threads", options.threads, "CPU threads of the cpu backend (0: every core)")
        ->check(CLI::Range(0, cnnstudio::kMaxCpuThreads))
        ->capture_default_str();
    app.add_option("--smoothing", options.smoothing, "frames each face's prediction is averaged over")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--detect-every", options.detectEvery, "run the face detector every N frames, reuse its boxes between")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--detection-width", options.detectionWidth, "frames are shrunk to this width for face detection")
        ->check(CLI::Range(32, 4096))
        ->capture_default_str();
    app.add_option("--cascade", options.cascade, "the Haar cascade of the face detector")->capture_default_str();
    app.add_option("--frames", options.maxFrames, "stop after N frames (0: at the end of the source)")
        ->check(atLeast(0));
    app.add_flag("--gradcam", options.gradCam, "overlay Grad-CAM: the face regions that drive each prediction");
    app.add_flag("--benchmark", options.benchmark, "print frames per second and the latency of each stage (JSON line)");
    if (const std::optional<int> exitCode = parseCommandLine(app, argc, argv)) return *exitCode;

    cnnstudio::watchStopSignals({SIGINT, SIGTERM}, stopRequested);
    try {
        return run(options);
    } catch (const cnnstudio::Error& error) {
        std::fprintf(stderr, "cnnstudio-live: %s\n", error.what());
        return 1;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "cnnstudio-live: %s\n", error.what());
        return 1;
    }
}
