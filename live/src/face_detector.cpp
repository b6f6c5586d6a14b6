#include "cnnstudio/live/face_detector.h"

#include <algorithm>
#include <cstddef>

#include <opencv2/imgproc.hpp>

#include "cnnstudio/error.h"

namespace cnnstudio::live {

std::filesystem::path defaultFaceCascade() {
    return std::filesystem::path(CNNSTUDIO_HAAR_CASCADE_DIR) / "haarcascade_frontalface_default.xml";
}

FaceDetector::FaceDetector(const FaceDetectorOptions& options) : options_(options) {
    if (options.detectionWidth < 32 || options.scaleFactor <= 1.0 || options.minNeighbors < 0 || options.minFaceSize < 8)
        throw Error("face detector options out of range (detection width >= 32, scale factor > 1, "
                    "neighbours >= 0, smallest face >= 8)",
                    "face detector");
    if (!std::filesystem::is_regular_file(options.cascade))
        throw Error("the face detector's cascade file is missing", options.cascade.string(),
                    "install Debian's opencv-data package (apt-get install opencv-data)");
    if (!cascade_.load(options.cascade.string()))
        throw Error("OpenCV cannot read the face detector's cascade", options.cascade.string(),
                    "reinstall opencv-data");
}

std::vector<cv::Rect> FaceDetector::detect(const cv::Mat& grey) {
    const double scale = grey.cols > options_.detectionWidth ? double(options_.detectionWidth) / grey.cols : 1.0;
    const cv::Mat* searched = &grey;
    if (scale < 1.0) {
        cv::resize(grey, shrunk_, cv::Size(), scale, scale, cv::INTER_AREA);
        searched = &shrunk_;
    }
    std::vector<cv::Rect> candidates;
    std::vector<int> neighbours;  // how many overlapping hits each candidate gathered: its support
    cascade_.detectMultiScale(*searched, candidates, neighbours, options_.scaleFactor, options_.minNeighbors,
                              cv::CASCADE_SCALE_IMAGE, cv::Size(options_.minFaceSize, options_.minFaceSize));
    // Two faces do not overlap much; where candidates do (the cascade's usual false hit is a box
    // around a true face, at a larger scale), the better supported one is the face.
    std::vector<cv::Rect> found;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        bool beaten = false;
        for (std::size_t j = 0; j < candidates.size() && !beaten; ++j) {
            const double overlap = (candidates[i] & candidates[j]).area();
            const double smaller = std::min(candidates[i].area(), candidates[j].area());
            const bool stronger = neighbours[j] > neighbours[i] || (neighbours[j] == neighbours[i] && j < i);
            beaten = j != i && overlap > 0.3 * smaller && stronger;
        }
        if (!beaten) found.push_back(candidates[i]);
    }
    for (cv::Rect& box : found)
        box = cv::Rect(cvRound(box.x / scale), cvRound(box.y / scale), cvRound(box.width / scale),
                       cvRound(box.height / scale)) & cv::Rect(0, 0, grey.cols, grey.rows);
    std::stable_sort(found.begin(), found.end(), [](const cv::Rect& a, const cv::Rect& b) { return a.area() > b.area(); });
    return found;
}

}  // namespace cnnstudio::live
