#include "cnnstudio/run_time_prediction.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>

namespace cnnstudio {
namespace {

// Lower is closer: the same rank count first, then (CPU backends) the same threads, then the
// nearest batch, then the faster one.
std::tuple<int, int, double> distance(const BenchConfiguration& c, const RunTimeQuery& query) {
    const bool cpu = c.devices == "cpu";
    return {c.ranks == query.ranks ? 0 : 1, cpu && c.threads != query.threads ? 1 : 0,
            std::abs(std::log(double(c.batch) / double(std::max(1, query.batch))))};
}

const BenchConfiguration* closestConfiguration(const RunTimeQuery& query, const BenchReport& report) {
    const BenchConfiguration* best = nullptr;
    for (const BenchConfiguration& c : report.configurations) {
        if (!c.ok() || c.backend != query.backend || c.precision != query.precision) continue;
        if (c.trainImagesPerSecond.median <= 0) continue;
        if (!best || distance(c, query) < distance(*best, query)) best = &c;
    }
    return best;
}

}  // namespace

std::optional<RunTimePrediction> predictRunTime(const RunTimeQuery& query, const BenchReport& report,
                                                const std::string& reportName) {
    const BenchConfiguration* match = closestConfiguration(query, report);
    if (!match) return std::nullopt;
    RunTimePrediction prediction;
    prediction.configurationLabel = match->label;
    double scale = 1.0;
    const bool sameNetwork = report.network.name == query.networkName &&
                             std::abs(report.network.trainGflopPerImage - query.trainGflopPerImage) <=
                                 1e-9 * std::max(1.0, query.trainGflopPerImage);
    if (!sameNetwork && query.trainGflopPerImage > 0 && report.network.trainGflopPerImage > 0) {
        scale = report.network.trainGflopPerImage / query.trainGflopPerImage;
        prediction.scaledByFlops = true;
    }
    prediction.trainImagesPerSecond = match->trainImagesPerSecond.median * scale;
    // A report without inference figures: evaluation costs about a third of a training pass.
    prediction.inferenceImagesPerSecond = (match->inferenceImagesPerSecond > 0 ? match->inferenceImagesPerSecond
                                                                              : 3 * match->trainImagesPerSecond.median) *
                                          scale;
    prediction.epochSeconds = double(query.trainImages) / prediction.trainImagesPerSecond +
                              double(query.validationImages) / prediction.inferenceImagesPerSecond;
    prediction.totalSeconds = prediction.epochSeconds * std::max(1, query.epochs);
    prediction.basis = "'" + match->label + "' in " + reportName;
    if (prediction.scaledByFlops) prediction.basis += ", scaled by FLOPs from " + report.network.name;
    return prediction;
}

std::string formatApproximateDuration(double seconds) {
    char text[32];
    if (seconds < 1) std::snprintf(text, sizeof text, "<1 s");
    else if (seconds < 90) std::snprintf(text, sizeof text, "~%.0f s", seconds);
    else if (seconds < 90 * 60) std::snprintf(text, sizeof text, "~%.0f min", seconds / 60);
    else std::snprintf(text, sizeof text, "~%.1f h", seconds / 3600);
    return text;
}

}  // namespace cnnstudio
