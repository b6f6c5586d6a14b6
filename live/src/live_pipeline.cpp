#include "cnnstudio/live/live_pipeline.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>

#include "cnnstudio/error.h"
#include "cnnstudio/live/face_crop.h"

namespace cnnstudio::live {

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The frames-per-second figure averages the intervals of this many frames.
constexpr std::size_t kRateWindow = 30;

}  // namespace

LivePipeline::LivePipeline(EmotionClassifier& classifier, const PipelineOptions& options)
    : classifier_(classifier), options_(options), detector_(options.detector), tracker_(options.tracker) {
    if (options.detectEveryFrames < 1)
        throw Error("faces must be detected every 1 or more frames, got " + std::to_string(options.detectEveryFrames),
                    "live pipeline");
    if (options.cropMargin < 0 || options.cropMargin > 1)
        throw Error("the crop margin must be in [0, 1] of the face size", "live pipeline");
}

double LivePipeline::measureFramesPerSecond() {
    frameTimes_.push_back(Clock::now());
    while (frameTimes_.size() > kRateWindow + 1) frameTimes_.pop_front();
    if (frameTimes_.size() < 2) return 0;
    const double seconds = std::chrono::duration<double>(frameTimes_.back() - frameTimes_.front()).count();
    return seconds > 0 ? double(frameTimes_.size() - 1) / seconds : 0;
}

FrameResult LivePipeline::process(const cv::Mat& frame, double captureMs) {
    if (frame.empty() || (frame.type() != CV_8UC3 && frame.type() != CV_8UC1))
        throw Error("frames must be 8-bit BGR or grey images", "live pipeline");
    FrameResult result;
    result.index = frameIndex_++;
    result.timings.captureMs = captureMs;

    Clock::time_point start = Clock::now();
    if (frame.channels() == 3) cv::cvtColor(frame, grey_, cv::COLOR_BGR2GRAY);
    else frame.copyTo(grey_);
    if (result.index % options_.detectEveryFrames == 0) {
        lastFaces_ = detector_.detect(grey_);
        result.detected = true;
    }
    result.timings.detectMs = millisecondsSince(start);

    start = Clock::now();
    const cv::Size input = classifier_.inputSize();
    const int channels = classifier_.inputChannels();
    const std::size_t perImage = std::size_t(input.area()) * std::size_t(channels);
    std::vector<std::vector<float>> inputs;
    for (const cv::Rect& box : lastFaces_) {
        FaceResult face;
        face.box = box;
        face.cropBox = growBox(box, options_.cropMargin, frame.size());
        face.crop = cropFace(channels == 1 ? grey_ : frame, face.cropBox, input, channels);
        inputs.emplace_back(perImage);
        cropToInput(face.crop, classifier_.normalization(), inputs.back());
        result.faces.push_back(std::move(face));
    }
    if (!inputs.empty()) {
        std::vector<FacePrediction> predictions = classifier_.classify(inputs);
        std::vector<std::vector<float>> probabilities;
        for (std::size_t i = 0; i < predictions.size(); ++i) {
            probabilities.push_back(predictions[i].probabilities);
            result.faces[i].raw = std::move(predictions[i]);
        }
        const std::vector<TrackedFace> tracked = tracker_.update(lastFaces_, probabilities);
        std::vector<int> explainedClasses;
        for (std::size_t i = 0; i < tracked.size(); ++i) {
            FaceResult& face = result.faces[i];
            face.trackId = tracked[i].id;
            face.smoothedProbabilities = tracked[i].smoothedProbabilities;
            face.smoothedClass = int(std::max_element(face.smoothedProbabilities.begin(), face.smoothedProbabilities.end()) -
                                     face.smoothedProbabilities.begin());
            explainedClasses.push_back(face.smoothedClass);
        }
        if (options_.gradCam) {
            std::vector<cv::Mat> maps = classifier_.gradCam(inputs, explainedClasses);
            for (std::size_t i = 0; i < maps.size(); ++i) result.faces[i].gradCam = std::move(maps[i]);
        }
    } else {
        tracker_.update({}, {});
    }
    result.timings.inferMs = millisecondsSince(start);

    start = Clock::now();
    result.framesPerSecond = measureFramesPerSecond();
    if (options_.draw) {
        result.annotated = frame.channels() == 3 ? frame.clone() : cv::Mat();
        if (frame.channels() == 1) cv::cvtColor(frame, result.annotated, cv::COLOR_GRAY2BGR);
        std::vector<FaceAnnotation> annotations;
        for (const FaceResult& face : result.faces)
            annotations.push_back({face.trackId, face.box, face.smoothedProbabilities, face.gradCam, face.cropBox});
        StageTimings shown = result.timings;
        shown.drawMs = lastDrawMs_;
        drawAnnotations(result.annotated, annotations, classifier_.classNames(), result.framesPerSecond, shown);
    } else {
        result.annotated = frame;
    }
    result.timings.drawMs = lastDrawMs_ = millisecondsSince(start);
    return result;
}

nlohmann::json detectionRecord(const FrameResult& result, const std::vector<std::string>& classNames) {
    auto byClass = [&](const std::vector<float>& values) {
        nlohmann::json object = nlohmann::json::object();
        for (std::size_t c = 0; c < values.size() && c < classNames.size(); ++c) object[classNames[c]] = values[c];
        return object;
    };
    nlohmann::json faces = nlohmann::json::array();
    for (const FaceResult& face : result.faces)
        faces.push_back({{"track", face.trackId},
                         {"box", {face.box.x, face.box.y, face.box.width, face.box.height}},
                         {"raw", byClass(face.raw.probabilities)},
                         {"smoothed", byClass(face.smoothedProbabilities)},
                         {"emotion", classNames.at(std::size_t(face.smoothedClass))}});
    const StageTimings& t = result.timings;
    return {{"frame", result.index},
            {"detected", result.detected},
            {"faces", faces},
            {"ms", {{"capture", t.captureMs}, {"detect", t.detectMs}, {"infer", t.inferMs}, {"draw", t.drawMs}}}};
}

}  // namespace cnnstudio::live
