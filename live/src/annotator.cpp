#include "cnnstudio/live/annotator.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <opencv2/imgproc.hpp>

namespace cnnstudio::live {

namespace {

std::string lowerCase(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return text;
}

int largestIndex(const std::vector<float>& values) {
    return int(std::max_element(values.begin(), values.end()) - values.begin());
}

// Text with a dark band behind it, readable on any background.
void drawLabel(cv::Mat& frame, const std::string& text, cv::Point origin, const cv::Scalar& colour, double scale) {
    int baseline = 0;
    const cv::Size size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, scale, 1, &baseline);
    const cv::Rect band(origin.x, origin.y - size.height - 4, size.width + 6, size.height + baseline + 6);
    cv::rectangle(frame, band & cv::Rect(0, 0, frame.cols, frame.rows), colour, cv::FILLED);
    cv::putText(frame, text, {origin.x + 3, origin.y}, cv::FONT_HERSHEY_SIMPLEX, scale, cv::Scalar(20, 20, 20), 1,
                cv::LINE_AA);
}

void drawProbabilityBars(cv::Mat& frame, const FaceAnnotation& face, const std::vector<std::string>& classNames) {
    const int rowHeight = 18, barWidth = 120, left = 10;
    const int top = frame.rows - int(classNames.size()) * rowHeight - 10;
    cv::Mat region = frame(cv::Rect(0, std::max(0, top - 6), std::min(frame.cols, 230), frame.rows - std::max(0, top - 6)));
    region *= 0.45;  // darken behind the bars
    for (std::size_t c = 0; c < classNames.size() && c < face.probabilities.size(); ++c) {
        const int y = top + int(c) * rowHeight;
        const cv::Scalar colour = emotionColour(classNames[c], int(c));
        cv::putText(frame, classNames[c], {left, y + 13}, cv::FONT_HERSHEY_SIMPLEX, 0.42, cv::Scalar(235, 235, 235), 1,
                    cv::LINE_AA);
        const int width = std::max(1, int(barWidth * face.probabilities[c]));
        cv::rectangle(frame, cv::Rect(left + 80, y + 3, width, rowHeight - 6), colour, cv::FILLED);
        char percent[16];
        std::snprintf(percent, sizeof percent, "%.0f%%", 100.0 * face.probabilities[c]);
        cv::putText(frame, percent, {left + 84 + barWidth, y + 13}, cv::FONT_HERSHEY_SIMPLEX, 0.38,
                    cv::Scalar(235, 235, 235), 1, cv::LINE_AA);
    }
}

void drawTimings(cv::Mat& frame, double framesPerSecond, const StageTimings& t) {
    char text[160];
    // The rate needs two frames: the first shows none rather than 0.0 FPS.
    char rate[32] = "";
    if (framesPerSecond > 0) std::snprintf(rate, sizeof rate, "%.1f FPS  ", framesPerSecond);
    std::snprintf(text, sizeof text, "%scapture %.1f  detect %.1f  infer %.1f  draw %.1f ms", rate, t.captureMs,
                  t.detectMs, t.inferMs, t.drawMs);
    int baseline = 0;
    const cv::Size size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, 0.45, 1, &baseline);
    cv::Mat band = frame(cv::Rect(0, 0, std::min(frame.cols, size.width + 14), std::min(frame.rows, size.height + 14)));
    band *= 0.4;
    cv::putText(frame, text, {7, size.height + 6}, cv::FONT_HERSHEY_SIMPLEX, 0.45, cv::Scalar(240, 240, 240), 1,
                cv::LINE_AA);
}

}  // namespace

cv::Scalar emotionColour(const std::string& className, int classIndex) {
    const std::string name = lowerCase(className);
    if (name == "angry" || name == "anger") return {60, 60, 230};
    if (name == "disgust") return {80, 170, 60};
    if (name == "fear") return {190, 90, 160};
    if (name == "happy" || name == "happiness") return {40, 215, 245};
    if (name == "sad" || name == "sadness") return {210, 130, 50};
    if (name == "surprise") return {40, 150, 250};
    if (name == "neutral") return {190, 190, 190};
    static const cv::Scalar palette[] = {{180, 119, 31}, {14, 127, 255}, {44, 160, 44}, {40, 39, 214},
                                         {189, 103, 148}, {75, 86, 140}, {194, 119, 227}, {127, 127, 127}};
    return palette[std::size_t(classIndex) % std::size(palette)];
}

void overlayHeatMap(cv::Mat& frame, const cv::Rect& box, const cv::Mat& map, double opacity) {
    const cv::Rect inside = box & cv::Rect(0, 0, frame.cols, frame.rows);
    if (inside.empty() || map.empty()) return;
    cv::Mat resized, bytes, coloured;
    cv::resize(map, resized, box.size(), 0, 0, cv::INTER_CUBIC);
    resized.convertTo(bytes, CV_8U, 255.0);
    cv::applyColorMap(bytes, coloured, cv::COLORMAP_JET);
    const cv::Mat visible = coloured(cv::Rect(inside.x - box.x, inside.y - box.y, inside.width, inside.height));
    cv::Mat target = frame(inside);
    cv::addWeighted(target, 1.0 - opacity, visible, opacity, 0.0, target);
}

void drawAnnotations(cv::Mat& frame, const std::vector<FaceAnnotation>& faces,
                     const std::vector<std::string>& classNames, double framesPerSecond,
                     const StageTimings& timings) {
    for (const FaceAnnotation& face : faces)
        if (!face.gradCam.empty()) overlayHeatMap(frame, face.gradCamBox, face.gradCam);
    for (const FaceAnnotation& face : faces) {
        if (face.probabilities.empty()) continue;
        const int best = largestIndex(face.probabilities);
        const std::string name = best < int(classNames.size()) ? classNames[std::size_t(best)] : std::to_string(best);
        const cv::Scalar colour = emotionColour(name, best);
        cv::rectangle(frame, face.box, colour, 2, cv::LINE_AA);
        char label[96];
        std::snprintf(label, sizeof label, "#%d %s %.0f%%", face.trackId, name.c_str(),
                      100.0 * face.probabilities[std::size_t(best)]);
        drawLabel(frame, label, {face.box.x, std::max(18, face.box.y - 2)}, colour, 0.55);
    }
    if (!faces.empty() && !faces.front().probabilities.empty()) drawProbabilityBars(frame, faces.front(), classNames);
    drawTimings(frame, framesPerSecond, timings);
}

}  // namespace cnnstudio::live
