// FER2013 in Kaggle's CSV form: a header `emotion,pixels,Usage`, then one row per face:
// the label 0..6, 2304 space-separated pixels 0..255 (48x48 grey, row-major) and the Usage
// (Training -> train, PublicTest -> validation, PrivateTest -> test). Plain or gzip.
#pragma once

#include "cnnstudio/datasets/dataset.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cnnstudio::datasets {

inline constexpr int kFer2013Side = 48;
inline constexpr int kFer2013Pixels = kFer2013Side * kFer2013Side;

// Angry, Disgust, Fear, Happy, Sad, Surprise, Neutral: label 0..6.
const std::vector<std::string>& fer2013ClassNames();

// Loads the CSV at path (gzip detected from its magic bytes). The file is inflated on a
// background thread while rows are parsed. Columns may come in any order and extra columns
// are ignored; without a Usage column every row is a training row. If the file has no
// PublicTest rows, options.validationFraction of train is held out as validation; PrivateTest
// rows, if any, form the test split (otherwise it stays empty).
// Bad rows throw cnnstudio::Error "<path>:<line>: <what>", or with options.skipBad are
// skipped and counted in DatasetSplits::skipped.
DatasetSplits loadFer2013Csv(const std::filesystem::path& path, const LoadOptions& options = {});

// Parses CSV text already in memory; sourceName stands for the file in messages. Applies no
// hold-out or limit: the splits are exactly the file's Usage groups.
DatasetSplits parseFer2013Csv(std::string_view text, std::string_view sourceName, bool skipBad);

}  // namespace cnnstudio::datasets
