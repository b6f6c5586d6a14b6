// Where the live pipeline's frames come from: a camera OpenCV can open, a video file or a folder
// of images, named on the command line as camera:N, video:FILE or folder:DIR.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/videoio.hpp>

namespace cnnstudio::live {

struct SourceSpec {
    enum class Kind { Camera, VideoFile, ImageFolder };
    Kind kind = Kind::Camera;
    int cameraIndex = 0;          // Camera
    std::filesystem::path path;   // VideoFile, ImageFolder

    std::string toString() const;  // "camera:0", "video:clip.mp4", "folder:faces"
};

// Throws Error naming `text` when it is none of camera:N, video:FILE, folder:DIR.
SourceSpec parseSourceSpec(const std::string& text);

class FrameSource {
public:
    virtual ~FrameSource() = default;
    // The next frame (BGR, 8-bit), or none at the end of a file or folder. A camera has no end:
    // a camera that stops delivering throws Error saying it was lost.
    virtual std::optional<cv::Mat> nextFrame() = 0;
    virtual std::string description() const = 0;
    // The rate the source was made for (a video's own rate; 0 where it has none).
    virtual double nominalFramesPerSecond() const { return 0; }
    virtual bool isCamera() const { return false; }
};

// A camera already opened through OpenCV (cv::VideoCapture).
class CameraSource : public FrameSource {
public:
    CameraSource(cv::VideoCapture capture, std::string name);
    std::optional<cv::Mat> nextFrame() override;
    std::string description() const override { return name_; }
    double nominalFramesPerSecond() const override;
    bool isCamera() const override { return true; }

private:
    cv::VideoCapture capture_;
    std::string name_;
    long long framesRead_ = 0;
};

class VideoFileSource : public FrameSource {
public:
    explicit VideoFileSource(const std::filesystem::path& file);  // Error when OpenCV cannot open it
    std::optional<cv::Mat> nextFrame() override;
    std::string description() const override { return file_.string(); }
    double nominalFramesPerSecond() const override;

private:
    std::filesystem::path file_;
    cv::VideoCapture capture_;
};

// The images of a folder (the files an image folder holds: png, jpg, bmp, ...), in name order;
// one frame each.
class ImageFolderSource : public FrameSource {
public:
    explicit ImageFolderSource(const std::filesystem::path& folder);  // Error when it holds none
    std::optional<cv::Mat> nextFrame() override;  // Error naming an image it cannot read
    std::string description() const override { return folder_.string(); }

private:
    std::filesystem::path folder_;
    std::vector<std::filesystem::path> images_;
    std::size_t next_ = 0;
};

// Opens the source; a camera that cannot be opened throws Error saying there is none at that
// index and pointing at the file sources.
std::unique_ptr<FrameSource> openFrameSource(const SourceSpec& spec);

// The camera indices OpenCV can open, probing 0..probeCount-1 (an empty list on a machine
// without cameras: servers, CI, containers).
std::vector<int> listCameras(int probeCount = 4);

}  // namespace cnnstudio::live
