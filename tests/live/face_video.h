// Videos made from a real photograph of a face, Debian's opencv-doc messi5.jpg (548x342, one
// face of 40x40 pixels at (225, 91)), for the live tests and the live benchmark
// (bench/face_video.cpp): the part of the photograph around the face, enlarged so that the face
// is as large as one before a webcam (about 100 pixels), pasted on a grey 640x480 frame and
// moved a little every frame.
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

// The photograph's 200x170 region around the face, scaled by `scale` (2.5: a 100-pixel face),
// pasted at each offset on a grey 640x480 frame.
inline cv::Mat frameWithFaces(const std::vector<cv::Point>& offsets, double scale = 2.5) {
    static const cv::Mat photo = cv::imread(kFacePhoto.string(), cv::IMREAD_COLOR);
    if (photo.empty()) throw std::runtime_error(kFacePhoto.string() + " is missing: install Debian's opencv-doc");
    cv::Mat scaled;
    cv::resize(photo(cv::Rect(150, 30, 200, 170)), scaled, cv::Size(), scale, scale, cv::INTER_LINEAR);
    cv::Mat frame(480, 640, CV_8UC3, cv::Scalar(90, 90, 90));
    for (const cv::Point& at : offsets) {
        const cv::Rect target = cv::Rect(at, scaled.size()) & cv::Rect(0, 0, frame.cols, frame.rows);
        scaled(cv::Rect(target.x - at.x, target.y - at.y, target.width, target.height)).copyTo(frame(target));
    }
    return frame;
}

// `frames` frames (MJPG .avi, 30 per second): one 100-pixel face drifting right and down and
// back, two pixels a frame; with faces == 2, two 56-pixel faces drifting apart.
inline std::filesystem::path makeFaceVideo(const std::filesystem::path& file, int frames, int faces = 1) {
    cv::VideoWriter writer(file.string(), cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 30.0, cv::Size(640, 480));
    if (!writer.isOpened()) throw std::runtime_error("OpenCV cannot write " + file.string());
    for (int i = 0; i < frames; ++i) {
        const int step = i % 80 < 40 ? i % 80 : 80 - i % 80;  // 0..40..0: stays inside the frame
        if (faces == 2)
            writer.write(frameWithFaces({{10 - step / 4, 60 + step}, {320 + step / 4, 200 - step}}, 1.4));
        else
            writer.write(frameWithFaces({{10 + 2 * step, 20 + step / 2}}));
    }
    return file;
}

}  // namespace cnnstudio::live_testing
