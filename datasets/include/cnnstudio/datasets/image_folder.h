// Image folders: one sub-folder per class, its name the class name (sorted), holding images in
// any format OpenCV reads (png, jpg, bmp, pgm/ppm, tiff, webp, ...; other files are ignored).
// Images in sub-folders of a class folder belong to that class (root/cat/2019/001.png is a cat),
// as in torchvision's ImageFolder; hidden folders are skipped and folder links not followed.
//
//   root/cat/001.png, root/dog/002.jpg, ...           split by options.testFraction and
//                                                     options.validationFraction (seeded)
//   root/train/cat/..., root/val/cat/..., root/test/... given splits; "validation/" is accepted
//                                                     for val/; without val/ it is held out of
//                                                     train, without test/ the test split is empty
//
// Every image becomes options.imageChannels (1: grey, 3: RGB) x imageHeight x imageWidth.
#pragma once

#include "cnnstudio/datasets/dataset.h"

#include <filesystem>

namespace cnnstudio::datasets {

// Throws cnnstudio::Error naming the file for an unreadable image (or skips and counts it with
// options.skipBad), naming the folder for an empty class folder, and naming a val/ or test/
// class folder that train/ lacks.
DatasetSplits loadImageFolder(const std::filesystem::path& root, const LoadOptions& options);

}  // namespace cnnstudio::datasets
