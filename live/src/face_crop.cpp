#include "cnnstudio/live/face_crop.h"

#include <opencv2/imgproc.hpp>

#include "cnnstudio/datasets/normalization.h"
#include "cnnstudio/error.h"

namespace cnnstudio::live {

cv::Rect growBox(const cv::Rect& face, double margin, const cv::Size& frame) {
    const int dx = cvRound(face.width * margin), dy = cvRound(face.height * margin);
    const cv::Rect grown(face.x - dx, face.y - dy, face.width + 2 * dx, face.height + 2 * dy);
    return grown & cv::Rect(0, 0, frame.width, frame.height);
}

cv::Mat cropFace(const cv::Mat& frame, const cv::Rect& box, const cv::Size& input, int channels) {
    if (frame.type() != CV_8UC1 && frame.type() != CV_8UC3)
        throw Error("frames must be 8-bit grey or BGR", "cropFace");
    if (channels != 1 && channels != 3)
        throw Error("the model takes " + std::to_string(channels) + "-channel images", "cropFace",
                    "the live demo runs grey (1) or colour (3) models");
    const cv::Rect inside = box & cv::Rect(0, 0, frame.cols, frame.rows);
    if (inside.empty()) throw Error("the face box lies outside the frame", "cropFace");
    cv::Mat region = frame(inside), converted;
    if (channels == 1)
        region.channels() == 1 ? region.copyTo(converted) : cv::cvtColor(region, converted, cv::COLOR_BGR2GRAY);
    else
        region.channels() == 3 ? cv::cvtColor(region, converted, cv::COLOR_BGR2RGB)
                               : cv::cvtColor(region, converted, cv::COLOR_GRAY2RGB);
    // As the image-folder loader resizes: area averaging when shrinking, bilinear when growing.
    const bool shrinking = converted.cols > input.width || converted.rows > input.height;
    cv::Mat resized;
    cv::resize(converted, resized, input, 0, 0, shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
    return resized;
}

void cropToInput(const cv::Mat& crop, const InputNormalization& normalization, std::span<float> out) {
    const int channels = crop.channels();
    const std::size_t plane = std::size_t(crop.rows) * std::size_t(crop.cols);
    if (out.size() != plane * std::size_t(channels))
        throw Error("the crop has " + std::to_string(plane * std::size_t(channels)) + " values, the input " +
                        std::to_string(out.size()),
                    "cropToInput");
    // HWC -> CHW, then the data set's normalisation.
    std::vector<std::uint8_t> chw(out.size());
    for (int y = 0; y < crop.rows; ++y) {
        const std::uint8_t* row = crop.ptr<std::uint8_t>(y);
        for (int x = 0; x < crop.cols; ++x)
            for (int c = 0; c < channels; ++c)
                chw[std::size_t(c) * plane + std::size_t(y * crop.cols + x)] = row[x * channels + c];
    }
    datasets::Normalization norm = datasets::Normalization::unit(channels);
    if (!normalization.mean.empty()) norm = {normalization.mean, normalization.stddev};
    datasets::normalizeImage(chw, channels, norm, out);
}

}  // namespace cnnstudio::live
