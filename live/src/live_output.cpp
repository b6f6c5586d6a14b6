#include "cnnstudio/live/live_output.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"

namespace cnnstudio::live {

namespace {

// "clip.mp4" -> "clip.partial.mp4": the extension stays last, as OpenCV picks the container by it.
std::filesystem::path partialName(const std::filesystem::path& file) {
    std::filesystem::path partial = file;
    partial.replace_filename(file.stem().string() + ".partial" + file.extension().string());
    return partial;
}

void renameIntoPlace(const std::filesystem::path& partial, const std::filesystem::path& file) {
    std::error_code error;
    std::filesystem::rename(partial, file, error);
    if (error) throw Error("cannot move the finished file into place: " + error.message(), file.string());
}

}  // namespace

VideoRecorder::VideoRecorder(const std::filesystem::path& file, double framesPerSecond, const cv::Size& frameSize)
    : file_(file), partial_(partialName(file)), size_(frameSize) {
    std::string extension = file.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    int fourcc;
    if (extension == ".mp4") fourcc = cv::VideoWriter::fourcc('m', 'p', '4', 'v');
    else if (extension == ".avi" || extension == ".mkv") fourcc = cv::VideoWriter::fourcc('M', 'J', 'P', 'G');
    else throw Error("cannot record a '" + extension + "' video", file.string(), "name the file .mp4, .avi or .mkv");
    if (framesPerSecond <= 0 || frameSize.empty())
        throw Error("a recording needs a frame rate and a frame size", file.string());
    if (!writer_.open(partial_.string(), fourcc, framesPerSecond, frameSize, true) || !writer_.isOpened())
        throw Error("OpenCV cannot write the video", file.string(), "check that the folder exists and is writable");
}

VideoRecorder::~VideoRecorder() {
    if (finished_) return;
    writer_.release();
    std::error_code ignored;  // discarding a partial file: nothing more to tell anyone
    std::filesystem::remove(partial_, ignored);
}

void VideoRecorder::write(const cv::Mat& frame) {
    if (frame.size() == size_) {
        writer_.write(frame);
    } else {
        cv::Mat resized;
        cv::resize(frame, resized, size_);
        writer_.write(resized);
    }
    ++frames_;
}

void VideoRecorder::finish() {
    if (finished_) return;
    writer_.release();
    finished_ = true;
    renameIntoPlace(partial_, file_);
}

DetectionLog::DetectionLog(const std::filesystem::path& file) : file_(file), partial_(partialName(file)) {
    stream_ = std::fopen(partial_.c_str(), "w");
    if (!stream_)
        throw Error(std::string("cannot write the detection log: ") + std::strerror(errno), file.string(),
                    "check that the folder exists and is writable");
}

DetectionLog::~DetectionLog() {
    if (!stream_) return;
    std::fclose(stream_);
    std::error_code ignored;  // discarding a partial file: nothing more to tell anyone
    std::filesystem::remove(partial_, ignored);
}

void DetectionLog::write(const std::string& line) {
    if (!stream_) throw Error("the detection log is already finished", file_.string());
    if (std::fputs(line.c_str(), stream_) < 0 || std::fputc('\n', stream_) < 0 || std::fflush(stream_) != 0)
        throw Error(std::string("cannot write the detection log: ") + std::strerror(errno), file_.string(),
                    "is the disk full?");
}

void DetectionLog::finish() {
    if (!stream_) return;
    const bool closed = std::fclose(stream_) == 0;
    stream_ = nullptr;
    if (!closed) throw Error("cannot close the detection log", file_.string(), "is the disk full?");
    renameIntoPlace(partial_, file_);
}

void saveSnapshot(const cv::Mat& frame, const std::filesystem::path& file) {
    std::vector<std::uint8_t> png;
    if (frame.empty() || !cv::imencode(".png", frame, png))
        throw Error("cannot encode the frame as PNG", file.string());
    writeFileAtomically(file, std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
}

}  // namespace cnnstudio::live
