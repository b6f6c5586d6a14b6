// What the live demo writes for the user: the annotated video, the detection log and snapshots.
// Each goes to a temporary name beside its target and is renamed into place when complete, so
// an interrupted recording never leaves a truncated file under the name the user chose.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include <opencv2/core.hpp>
#include <opencv2/videoio.hpp>

namespace cnnstudio::live {

// The annotated frames as a video: .mp4 (MPEG-4 part 2), .avi (Motion JPEG) or .mkv.
class VideoRecorder {
public:
    // Error naming `file` when its extension is none of those or OpenCV cannot write it.
    VideoRecorder(const std::filesystem::path& file, double framesPerSecond, const cv::Size& frameSize);
    ~VideoRecorder();  // an unfinished recording is discarded
    void write(const cv::Mat& frame);  // frames of another size are resized to the first's
    void finish();  // closes and renames into place; Error when the rename fails
    long long frameCount() const { return frames_; }
    const std::filesystem::path& file() const { return file_; }

private:
    std::filesystem::path file_, partial_;
    cv::VideoWriter writer_;
    cv::Size size_;
    long long frames_ = 0;
    bool finished_ = false;
};

// JSON lines, one per frame, flushed as written.
class DetectionLog {
public:
    explicit DetectionLog(const std::filesystem::path& file);  // Error naming the file
    ~DetectionLog();  // an unfinished log is discarded
    void write(const std::string& line);
    void finish();

private:
    std::filesystem::path file_, partial_;
    std::FILE* stream_ = nullptr;
};

// The frame as a PNG, written atomically. Error naming the file.
void saveSnapshot(const cv::Mat& frame, const std::filesystem::path& file);

}  // namespace cnnstudio::live
