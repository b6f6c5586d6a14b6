#include "train/progress_display.h"

#include <algorithm>
#include <cmath>

namespace cnnstudio::app {

namespace {

std::string format(const char* pattern, double value) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, value);
    return text;
}

std::string withThousands(long long value) {
    const std::string digits = std::to_string(value);
    std::string text;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) text += ',';
        text += digits[i];
    }
    return text;
}

// "1 epoch", "3 epochs"
std::string count(long long value, const std::string& noun) {
    return std::to_string(value) + " " + noun + (value == 1 ? "" : "s");
}

std::string percent(double fraction) { return format("%.2f%%", 100.0 * fraction); }

std::string percent(const std::optional<double>& fraction) {
    return fraction ? percent(*fraction) : std::string("n/a");
}

}  // namespace

std::string formatDuration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const long long total = std::llround(seconds);
    char text[48];
    if (total >= 3600)
        std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
    else
        std::snprintf(text, sizeof text, "%lld:%02lld", total / 60, total % 60);
    return text;
}

ProgressDisplay::ProgressDisplay(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

void ProgressDisplay::onEvent(const nlohmann::json& object) {
    const std::optional<Event> event = parseEvent(object);
    if (!event) return;
    if (const auto* started = event->as<RunStartedEvent>()) runStarted(*started);
    else if (const auto* stepEvent = event->as<StepEvent>()) step(*stepEvent);
    else if (const auto* epochEvent = event->as<EpochEvent>()) epoch(*epochEvent);
    else if (const auto* finishedEvent = event->as<FinishedEvent>()) finished(*finishedEvent);
    std::fflush(out_);
}

void ProgressDisplay::endProgressLine() {
    if (progressLineOpen_) std::fputc('\n', out_);
    progressLineOpen_ = false;
}

void ProgressDisplay::runStarted(const RunStartedEvent& event) {
    epochs_ = event.epochs;
    stepsPerEpoch_ = event.stepsPerEpoch;
    std::fprintf(out_, "model %s: %s parameters, %s MFLOPs per image forward\n", event.model.name.c_str(),
                 withThousands(event.model.parameters).c_str(),
                 format("%.1f", double(event.model.forwardFlops) / 1e6).c_str());
    std::fprintf(out_, "data %s: %lld train, %lld validation, %lld test images, %zu classes\n",
                 event.dataset.name.c_str(), event.dataset.trainSize, event.dataset.validationSize,
                 event.dataset.testSize, event.dataset.classes.size());
    std::fprintf(out_, "training on %s for %s of %s", event.backend.c_str(), count(epochs_, "epoch").c_str(),
                 count(stepsPerEpoch_, "step").c_str());
    if (event.resumedFromStep > 0) std::fprintf(out_, ", resuming after step %lld", event.resumedFromStep);
    std::fprintf(out_, "\nrun folder %s\n", event.runDir.c_str());
}

void ProgressDisplay::step(const StepEvent& event) {
    const long long done = event.epochStep;
    if (!terminal_) {
        std::fprintf(out_, "epoch %d/%d step %lld/%lld  loss %.4f  lr %.3g  %.0f img/s\n", event.epoch, epochs_, done,
                     stepsPerEpoch_, event.loss, event.learningRate, event.imagesPerSecond);
        return;
    }
    constexpr int kBarWidth = 30;
    const double fraction = stepsPerEpoch_ > 0 ? std::min(1.0, double(done) / double(stepsPerEpoch_)) : 0.0;
    const int filled = int(fraction * kBarWidth);
    std::string bar(std::size_t(filled), '#');
    bar.append(std::size_t(kBarWidth - filled), '.');
    // The run's ETA from the pace since the previous step event (validation time not counted).
    std::string eta = "?";
    if (event.step > lastStep_ && lastStep_ > 0) {
        const double secondsPerStep = (event.elapsedSeconds - lastElapsed_) / double(event.step - lastStep_);
        const long long stepsLeft =
            static_cast<long long>(epochs_ - event.epoch) * stepsPerEpoch_ + (stepsPerEpoch_ - done);
        eta = formatDuration(secondsPerStep * double(stepsLeft));
    }
    lastStep_ = event.step;
    lastElapsed_ = event.elapsedSeconds;
    std::fprintf(out_, "\r\033[Kepoch %d/%d [%s] %lld/%lld  loss %.4f  %.0f img/s  ETA %s", event.epoch, epochs_,
                 bar.c_str(), done, stepsPerEpoch_, event.loss, event.imagesPerSecond, eta.c_str());
    progressLineOpen_ = true;
}

void ProgressDisplay::epoch(const EpochEvent& event) {
    endProgressLine();
    std::string line = "epoch " + std::to_string(event.epoch) + "/" + std::to_string(epochs_) + "  train loss " +
                       format("%.4f", event.trainLoss) + " accuracy " + percent(event.trainAccuracy);
    if (event.validationAccuracy)
        line += "  validation loss " + format("%.4f", event.validationLoss.value_or(0.0)) + " accuracy " +
                percent(event.validationAccuracy);
    line += "  " + format("%.1f s", event.epochSeconds) + ", " + format("%.0f img/s", event.imagesPerSecond);
    if (event.epoch < epochs_) line += ", ETA " + formatDuration(event.etaSeconds);
    if (event.best) line += "  (best so far)";
    std::fprintf(out_, "%s\n", line.c_str());
}

void ProgressDisplay::finished(const FinishedEvent& event) {
    endProgressLine();
    if (event.reason == "stopped") {
        std::fprintf(out_, "stopped after %s; the latest checkpoint is saved: continue with --resume\n",
                     count(event.epochsRun, "complete epoch").c_str());
        return;
    }
    std::fprintf(out_, "%s after %s in %s\n", event.reason == "early_stopped" ? "stopped early" : "finished",
                 count(event.epochsRun, "epoch").c_str(), formatDuration(event.wallSeconds).c_str());
    if (event.bestValidationAccuracy)
        std::fprintf(out_, "best validation accuracy %s (epoch %d)\n", percent(event.bestValidationAccuracy).c_str(),
                     event.bestEpoch);
    if (event.targetAccuracy && event.bestValidationAccuracy)
        std::fprintf(out_, "%s validation accuracy %s\n", percent(event.targetAccuracy).c_str(),
                     event.secondsToTarget ? ("first reached after " + formatDuration(*event.secondsToTarget) +
                                              " of training").c_str()
                                           : "never reached");
    if (event.testAccuracy)
        std::fprintf(out_, "TEST ACCURACY %s (loss %.4f)\n", percent(event.testAccuracy).c_str(),
                     event.testLoss.value_or(0.0));
    else
        std::fprintf(out_, "no test split: no test accuracy\n");
    if (event.modelPath) std::fprintf(out_, "model saved to %s\n", event.modelPath->c_str());
}

}  // namespace cnnstudio::app
