// Videos made from a real photograph of a face, Debian's opencv-doc messi5.jpg (548x342, one
// face), for the live tests and the live benchmark (bench/face_video.cpp): the photograph
// pasted on a grey 640x480 frame and moved a little every frame, as a face before a webcam.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

namespace cnnstudio::live_testing {

inline const std::filesystem::path kFacePhoto = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg";

// The photograph scaled by `scale`, pasted at each offset on a grey 640x480 frame.
inline cv::Mat frameWithFaces(const std::vector<cv::Point>& offsets, double scale = 1.0) {
    static const cv::Mat photo = cv::imread(kFacePhoto.string(), cv::IMREAD_COLOR);
    if (photo.empty()) throw std::runtime_error(kFacePhoto.string() + " is missing: install Debian's opencv-doc");
    cv::Mat scaled;
    cv::resize(photo, scaled, cv::Size(), scale, scale, scale < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
    cv::Mat frame(480, 640, CV_8UC3, cv::Scalar(90, 90, 90));
    for (const cv::Point& at : offsets) {
        const cv::Rect target = cv::Rect(at, scaled.size()) & cv::Rect(0, 0, frame.cols, frame.rows);
        scaled(cv::Rect(target.x - at.x, target.y - at.y, target.width, target.height)).copyTo(frame(target));
    }
    return frame;
}

// `frames` frames (MJPG .avi, 30 per second): one face drifting right and down and back, two
// pixels a frame; with faces == 2, two copies at 0.55 size drifting apart.
inline std::filesystem::path makeFaceVideo(const std::filesystem::path& file, int frames, int faces = 1) {
    cv::VideoWriter writer(file.string(), cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 30.0, cv::Size(640, 480));
    if (!writer.isOpened()) throw std::runtime_error("OpenCV cannot write " + file.string());
    for (int i = 0; i < frames; ++i) {
        const int step = i % 80 < 40 ? i % 80 : 80 - i % 80;  // 0..40..0: stays inside the frame
        if (faces == 2)
            writer.write(frameWithFaces({{10 - step / 4, 60 + step}, {320 + step / 4, 200 - step}}, 0.55));
        else
            writer.write(frameWithFaces({{10 + 2 * step, 40 + step}}));
    }
    return file;
}

}  // namespace cnnstudio::live_testing
