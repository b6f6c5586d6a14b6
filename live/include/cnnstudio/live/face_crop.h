// A detected face as the model's input: the box grown by a margin (the Haar box is tight around
// eyes and mouth; FER2013's faces show the whole head), clipped to the frame, resized to the
// model's input and normalised as the FER2013 loader does (pixel / 255, then the model's
// per-channel mean and standard deviation).
#pragma once

#include <span>

#include <opencv2/core.hpp>

#include "cnnstudio/checkpoint.h"

namespace cnnstudio::live {

// `face` grown by `margin` of its size on every side, clipped to `frame`.
cv::Rect growBox(const cv::Rect& face, double margin, const cv::Size& frame);

// The pixels of `box` of an 8-bit grey (1 channel) or BGR (3 channels) frame as an 8-bit image
// of `input` size and `channels` (1: grey, 3: RGB, as the image-folder loader reads colour).
cv::Mat cropFace(const cv::Mat& frame, const cv::Rect& box, const cv::Size& input, int channels);

// An 8-bit crop as the network's input: CHW floats, normalised. `out` holds channels*h*w.
void cropToInput(const cv::Mat& crop, const InputNormalization& normalization, std::span<float> out);

}  // namespace cnnstudio::live
