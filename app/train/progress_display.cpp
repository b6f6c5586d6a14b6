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

// A field of an event, null when absent (readers tolerate events of other versions).
const nlohmann::json& member(const nlohmann::json& event, const char* name) {
    static const nlohmann::json absent;
    auto it = event.find(name);
    return it == event.end() ? absent : *it;
}

std::string percent(const nlohmann::json& fraction) {
    return fraction.is_number() ? format("%.2f%%", 100.0 * fraction.get<double>()) : std::string("n/a");
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

void ProgressDisplay::onEvent(const nlohmann::json& event) {
    const std::string name = event.value("event", "");
    if (name == "run_started") runStarted(event);
    else if (name == "step") step(event);
    else if (name == "epoch") epoch(event);
    else if (name == "finished") finished(event);
    std::fflush(out_);
}

void ProgressDisplay::endProgressLine() {
    if (progressLineOpen_) std::fputc('\n', out_);
    progressLineOpen_ = false;
}

void ProgressDisplay::runStarted(const nlohmann::json& event) {
    epochs_ = event.value("epochs", 0);
    stepsPerEpoch_ = event.value("steps_per_epoch", 0LL);
    const nlohmann::json& dataset = member(event, "dataset");
    const nlohmann::json& model = member(event, "model");
    std::fprintf(out_, "model %s: %s parameters, %s MFLOPs per image forward\n",
                 model.value("name", "").c_str(), withThousands(model.value("parameters", 0LL)).c_str(),
                 format("%.1f", double(model.value("forward_flops", 0LL)) / 1e6).c_str());
    std::fprintf(out_, "data %s: %lld train, %lld validation, %lld test images, %zu classes\n",
                 dataset.value("name", "").c_str(), dataset.value("train_size", 0LL),
                 dataset.value("validation_size", 0LL), dataset.value("test_size", 0LL),
                 member(dataset, "classes").size());
    std::fprintf(out_, "training on %s for %d epochs of %lld steps", event.value("backend", "").c_str(), epochs_,
                 stepsPerEpoch_);
    const long long resumed = event.value("resumed_from_step", 0LL);
    if (resumed > 0) std::fprintf(out_, ", resuming after step %lld", resumed);
    std::fprintf(out_, "\nrun folder %s\n", event.value("run_dir", "").c_str());
}

void ProgressDisplay::step(const nlohmann::json& event) {
    const int epoch = event.value("epoch", 0);
    const long long done = event.value("epoch_step", 0LL);
    const double rate = event.value("images_per_s", 0.0);
    const double loss = event.value("loss", 0.0);
    if (!terminal_) {
        std::fprintf(out_, "epoch %d/%d step %lld/%lld  loss %.4f  lr %.3g  %.0f img/s\n", epoch, epochs_, done,
                     stepsPerEpoch_, loss, event.value("learning_rate", 0.0), rate);
        return;
    }
    constexpr int kBarWidth = 30;
    const double fraction = stepsPerEpoch_ > 0 ? std::min(1.0, double(done) / double(stepsPerEpoch_)) : 0.0;
    const int filled = int(fraction * kBarWidth);
    std::string bar(std::size_t(filled), '#');
    bar.append(std::size_t(kBarWidth - filled), '.');
    // The run's ETA from the pace since the previous step event (validation time not counted).
    const long long globalStep = event.value("step", 0LL);
    const double elapsed = event.value("elapsed_s", 0.0);
    std::string eta = "?";
    if (globalStep > lastStep_ && lastStep_ > 0) {
        const double secondsPerStep = (elapsed - lastElapsed_) / double(globalStep - lastStep_);
        const long long stepsLeft = static_cast<long long>(epochs_ - epoch) * stepsPerEpoch_ + (stepsPerEpoch_ - done);
        eta = formatDuration(secondsPerStep * double(stepsLeft));
    }
    lastStep_ = globalStep;
    lastElapsed_ = elapsed;
    std::fprintf(out_, "\r\033[Kepoch %d/%d [%s] %lld/%lld  loss %.4f  %.0f img/s  ETA %s", epoch, epochs_,
                 bar.c_str(), done, stepsPerEpoch_, loss, rate, eta.c_str());
    progressLineOpen_ = true;
}

void ProgressDisplay::epoch(const nlohmann::json& event) {
    endProgressLine();
    std::string line = "epoch " + std::to_string(event.value("epoch", 0)) + "/" + std::to_string(epochs_) +
                       "  train loss " + format("%.4f", event.value("train_loss", 0.0)) + " accuracy " +
                       percent(member(event, "train_accuracy"));
    if (member(event, "validation_accuracy").is_number())
        line += "  validation loss " + format("%.4f", event.value("validation_loss", 0.0)) + " accuracy " +
                percent(member(event, "validation_accuracy"));
    line += "  " + format("%.1f s", event.value("epoch_time_s", 0.0)) + ", " +
            format("%.0f img/s", event.value("images_per_s", 0.0));
    if (event.value("epoch", 0) < epochs_) line += ", ETA " + formatDuration(event.value("eta_s", 0.0));
    if (event.value("best", false)) line += "  (best so far)";
    std::fprintf(out_, "%s\n", line.c_str());
}

void ProgressDisplay::finished(const nlohmann::json& event) {
    endProgressLine();
    const std::string reason = event.value("reason", "");
    const int epochsRun = event.value("epochs_run", 0);
    if (reason == "stopped") {
        std::fprintf(out_, "stopped after %d complete epochs; the latest checkpoint is saved: continue with --resume\n",
                     epochsRun);
        return;
    }
    std::fprintf(out_, "%s after %d epochs in %s\n", reason == "early_stopped" ? "stopped early" : "finished",
                 epochsRun, formatDuration(event.value("wall_time_s", 0.0)).c_str());
    if (member(event, "best_validation_accuracy").is_number())
        std::fprintf(out_, "best validation accuracy %s (epoch %d)\n", percent(member(event, "best_validation_accuracy")).c_str(),
                     event.value("best_epoch", 0));
    if (member(event, "test_accuracy").is_number())
        std::fprintf(out_, "TEST ACCURACY %s (loss %.4f)\n", percent(member(event, "test_accuracy")).c_str(),
                     event.value("test_loss", 0.0));
    else
        std::fprintf(out_, "no test split: no test accuracy\n");
    if (member(event, "model_path").is_string())
        std::fprintf(out_, "model saved to %s\n", member(event, "model_path").get<std::string>().c_str());
}

}  // namespace cnnstudio::app
