#include "cnnstudio/live/frame_source.h"

#include <algorithm>

#include <opencv2/imgcodecs.hpp>

#include "cnnstudio/datasets/image_file.h"
#include "cnnstudio/error.h"

namespace cnnstudio::live {

namespace {

constexpr const char* kSourceHint = "use camera:N (N = 0, 1, ...), video:FILE or folder:DIR";

}  // namespace

std::string SourceSpec::toString() const {
    switch (kind) {
    case Kind::Camera: return "camera:" + std::to_string(cameraIndex);
    case Kind::VideoFile: return "video:" + path.string();
    case Kind::ImageFolder: return "folder:" + path.string();
    }
    return {};
}

SourceSpec parseSourceSpec(const std::string& text) {
    const std::size_t colon = text.find(':');
    const std::string kind = text.substr(0, colon);
    const std::string value = colon == std::string::npos ? "" : text.substr(colon + 1);
    if (colon == std::string::npos || value.empty())
        throw Error("a source is KIND:VALUE", text, kSourceHint);
    SourceSpec spec;
    if (kind == "camera") {
        spec.kind = SourceSpec::Kind::Camera;
        std::size_t used = 0;
        try {
            spec.cameraIndex = std::stoi(value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != value.size() || spec.cameraIndex < 0)
            throw Error("a camera is named by its index (0, 1, ...)", text, kSourceHint);
    } else if (kind == "video") {
        spec.kind = SourceSpec::Kind::VideoFile;
        spec.path = value;
    } else if (kind == "folder") {
        spec.kind = SourceSpec::Kind::ImageFolder;
        spec.path = value;
    } else {
        throw Error("unknown source kind '" + kind + "'", text, kSourceHint);
    }
    return spec;
}

CameraSource::CameraSource(cv::VideoCapture capture, std::string name)
    : capture_(std::move(capture)), name_(std::move(name)) {}

std::optional<cv::Mat> CameraSource::nextFrame() {
    cv::Mat frame;
    bool read = false;
    try {
        read = capture_.read(frame);
    } catch (const cv::Exception& error) {
        throw Error(std::string("the camera failed: ") + error.what(), name_, "reconnect it and start again");
    }
    if (!read || frame.empty())
        throw Error(framesRead_ == 0 ? "the camera delivers no frames" : "the camera was lost after " +
                                                                            std::to_string(framesRead_) + " frames",
                    name_, "check that it is connected and not used by another program, then start again");
    ++framesRead_;
    return frame;
}

double CameraSource::nominalFramesPerSecond() const { return capture_.get(cv::CAP_PROP_FPS); }

VideoFileSource::VideoFileSource(const std::filesystem::path& file) : file_(file) {
    if (!std::filesystem::is_regular_file(file))
        throw Error("no such video file", file.string(), "check the path");
    if (!capture_.open(file.string()) || !capture_.isOpened())
        throw Error("OpenCV cannot open the video", file.string(), "convert it to mp4 or avi");
}

std::optional<cv::Mat> VideoFileSource::nextFrame() {
    cv::Mat frame;
    if (!capture_.read(frame) || frame.empty()) return std::nullopt;
    return frame;
}

double VideoFileSource::nominalFramesPerSecond() const { return capture_.get(cv::CAP_PROP_FPS); }

ImageFolderSource::ImageFolderSource(const std::filesystem::path& folder) : folder_(folder) {
    if (!std::filesystem::is_directory(folder)) throw Error("no such folder", folder.string(), "check the path");
    for (const auto& entry : std::filesystem::directory_iterator(folder))
        if (entry.is_regular_file() && datasets::isImageFile(entry.path())) images_.push_back(entry.path());
    std::sort(images_.begin(), images_.end());
    if (images_.empty())
        throw Error("the folder holds no images", folder.string(), "put image files (png, jpg, ...) in it");
}

std::optional<cv::Mat> ImageFolderSource::nextFrame() {
    if (next_ >= images_.size()) return std::nullopt;
    const std::filesystem::path& file = images_[next_++];
    // Refused before OpenCV sees them, as everywhere images are read (datasets/image_file.h).
    if (const std::optional<std::string> format = datasets::refusedFormatOf(file))
        throw Error(*format + ", not an image format CNN Studio reads", file.string(), "convert it to png or jpg");
    cv::Mat image = cv::imread(file.string(), cv::IMREAD_COLOR);
    if (image.empty()) throw Error("OpenCV cannot read the image", file.string(), "convert it to png or jpg");
    return image;
}

std::unique_ptr<FrameSource> openFrameSource(const SourceSpec& spec) {
    switch (spec.kind) {
    case SourceSpec::Kind::VideoFile: return std::make_unique<VideoFileSource>(spec.path);
    case SourceSpec::Kind::ImageFolder: return std::make_unique<ImageFolderSource>(spec.path);
    case SourceSpec::Kind::Camera: break;
    }
    // A missing device node is not opened at all: OpenCV's every backend would warn about it.
    cv::VideoCapture capture;
    const bool nodeExists = std::filesystem::exists("/dev/video" + std::to_string(spec.cameraIndex));
    if (!nodeExists || !capture.open(spec.cameraIndex) || !capture.isOpened())
        throw Error(listCameras().empty() ? "there is no camera on this machine"
                                          : "there is no camera at index " + std::to_string(spec.cameraIndex),
                    spec.toString(), "the file sources still work: video:FILE or folder:DIR");
    capture.set(cv::CAP_PROP_FRAME_WIDTH, 640);
    capture.set(cv::CAP_PROP_FRAME_HEIGHT, 480);
    return std::make_unique<CameraSource>(std::move(capture), spec.toString());
}

std::vector<int> listCameras(int probeCount) {
    std::vector<int> found;
    for (int index = 0; index < probeCount; ++index) {
        // Only device nodes that exist are opened: asking OpenCV for a missing one makes every
        // one of its backends print a warning.
        if (!std::filesystem::exists("/dev/video" + std::to_string(index))) continue;
        cv::VideoCapture capture;
        if (capture.open(index) && capture.isOpened()) found.push_back(index);
    }
    return found;
}

}  // namespace cnnstudio::live
