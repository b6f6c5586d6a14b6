// One frame through the whole live pipeline: detect faces (on every k-th frame; the boxes of
// the last detection are reused between), crop them, infer every face as one batch, track and
// smooth, optionally explain with Grad-CAM, and draw. The same object serves the app's Live demo
// page (on its worker thread) and cnnstudio-live.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <opencv2/core.hpp>

#include "cnnstudio/live/annotator.h"
#include "cnnstudio/live/emotion_classifier.h"
#include "cnnstudio/live/face_detector.h"
#include "cnnstudio/live/face_tracker.h"

namespace cnnstudio::live {

struct PipelineOptions {
    FaceDetectorOptions detector;
    TrackerOptions tracker;
    int detectEveryFrames = 1;  // 1: detect on every frame
    double cropMargin = 0.15;   // of the face box, on each side
    bool gradCam = false;
    bool draw = true;           // false: timings and results only (nothing drawn)
};

struct FaceResult {
    int trackId = 0;
    cv::Rect box;      // the detected face
    cv::Rect cropBox;  // the region the model saw (box grown by the margin)
    cv::Mat crop;      // the model's 8-bit input image, before normalisation
    FacePrediction raw;
    std::vector<float> smoothedProbabilities;
    int smoothedClass = 0;
    cv::Mat gradCam;  // float [0, 1], of the explained layer's size; empty unless Grad-CAM is on
};

struct FrameResult {
    std::int64_t index = 0;  // 0-based frame number
    cv::Mat annotated;       // the frame with everything drawn (the frame itself when draw is off)
    std::vector<FaceResult> faces;  // largest first: faces[0] is the main face
    StageTimings timings;
    double framesPerSecond = 0;  // over the last frames' wall-clock intervals
    bool detected = false;       // whether this frame ran the detector
};

class LivePipeline {
public:
    // Error on a bad option or a missing face cascade. `classifier` must outlive the pipeline.
    LivePipeline(EmotionClassifier& classifier, const PipelineOptions& options = {});

    // `frame` is BGR 8-bit; captureMs is how long the caller waited for it.
    FrameResult process(const cv::Mat& frame, double captureMs = 0);

    void setGradCam(bool on) { options_.gradCam = on; }
    bool gradCam() const { return options_.gradCam; }
    void setSmoothingFrames(int frames) { tracker_.setSmoothingFrames(frames); }
    const PipelineOptions& options() const { return options_; }
    const EmotionClassifier& classifier() const { return classifier_; }

private:
    double measureFramesPerSecond();

    EmotionClassifier& classifier_;
    PipelineOptions options_;
    FaceDetector detector_;
    FaceTracker tracker_;
    std::vector<cv::Rect> lastFaces_;
    std::int64_t frameIndex_ = 0;
    cv::Mat grey_;
    std::deque<std::chrono::steady_clock::time_point> frameTimes_;
    double lastDrawMs_ = 0;  // a frame cannot show its own drawing time: the overlay shows this
};

// One JSON object for the detection log: frame, faces with box, track id, raw and smoothed
// probabilities (by class name) and the predicted class, and the stage timings.
nlohmann::json detectionRecord(const FrameResult& result, const std::vector<std::string>& classNames);

}  // namespace cnnstudio::live
