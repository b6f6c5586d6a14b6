// Face detection with OpenCV's Haar cascade (Viola-Jones, the detector of Arriaga et al.'s
// real-time demo), from Debian's opencv-data. Detection runs on a downscaled grey copy of the
// frame: at 640x480 the full-size search costs several times the model's inference, and faces
// near the camera are large enough to be found at half size.
#pragma once

#include <filesystem>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/objdetect.hpp>

namespace cnnstudio::live {

// /usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml (package opencv-data).
std::filesystem::path defaultFaceCascade();

struct FaceDetectorOptions {
    std::filesystem::path cascade = defaultFaceCascade();
    int detectionWidth = 320;   // frames wider than this are shrunk to it before the search
    double scaleFactor = 1.15;  // between the search's scales
    int minNeighbors = 5;       // overlapping hits a face needs (fewer: more false faces)
    // Pixels of the shrunk frame: 40 at 320 wide is an 80-pixel face in a 640x480 frame, a face
    // at arm's length from a webcam. The smallest size sets the largest image the search
    // scans, so it governs the detector's cost.
    int minFaceSize = 40;
};

class FaceDetector {
public:
    // Throws Error naming the cascade file when it is missing or unreadable (install opencv-data).
    explicit FaceDetector(const FaceDetectorOptions& options = {});
    // Faces in a grey frame, in the frame's own coordinates, largest first.
    std::vector<cv::Rect> detect(const cv::Mat& grey);

private:
    FaceDetectorOptions options_;
    cv::CascadeClassifier cascade_;
    cv::Mat shrunk_;
};

}  // namespace cnnstudio::live
