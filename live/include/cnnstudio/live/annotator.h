// Drawing the pipeline's results onto the frame: each face's box in its emotion's colour with
// its label and confidence, the Grad-CAM heat map inside the box when on, probability bars for
// the main (largest) face, and the FPS with the latency of each stage.
#pragma once

#include <string>
#include <vector>

#include <opencv2/core.hpp>

namespace cnnstudio::live {

// The colour (BGR) of an emotion: FER2013's seven by name (angry red, disgust green, fear
// purple, happy yellow, sad blue, surprise orange, neutral grey), others from a palette by index.
cv::Scalar emotionColour(const std::string& className, int classIndex);

struct FaceAnnotation {
    int trackId = 0;
    cv::Rect box;
    std::vector<float> probabilities;  // what is shown: the smoothed ones
    cv::Mat gradCam;                   // float map in [0, 1] over the face's crop box; empty: none
    cv::Rect gradCamBox;               // where the map lies in the frame (the crop box)
};

struct StageTimings {
    double captureMs = 0, detectMs = 0, inferMs = 0, drawMs = 0;
    double totalMs() const { return captureMs + detectMs + inferMs + drawMs; }
};

// Draws onto `frame` (BGR, 8-bit). faces[0] is the main face when there is one. The timings are
// those of the frame being drawn except drawMs, which can only be the previous frame's.
void drawAnnotations(cv::Mat& frame, const std::vector<FaceAnnotation>& faces,
                     const std::vector<std::string>& classNames, double framesPerSecond,
                     const StageTimings& timings);

// Blends a [0, 1] heat map (jet colours) into `box` of the frame.
void overlayHeatMap(cv::Mat& frame, const cv::Rect& box, const cv::Mat& map, double opacity = 0.45);

}  // namespace cnnstudio::live
