// IDX files (MNIST, Fashion-MNIST): a big-endian header (magic 00 00 08 <dims>, then one
// uint32 per dimension) followed by uint8 data. Plain or gzip, detected from the magic bytes.
#pragma once

#include "cnnstudio/datasets/dataset.h"

#include <filesystem>
#include <string>
#include <vector>

namespace cnnstudio::datasets {

// An images file (3 dims: count, rows, columns) as a 1-channel Dataset whose labels are all 0.
// Bad magic, a wrong dimension count or a truncated / over-long file throw cnnstudio::Error
// naming the file.
Dataset readIdxImages(const std::filesystem::path& path);

// A labels file (1 dim: count).
std::vector<std::int32_t> readIdxLabels(const std::filesystem::path& path);

// An images file and its labels file as one Dataset; their counts must agree.
Dataset readIdxPair(const std::filesystem::path& imagesPath, const std::filesystem::path& labelsPath);

// A directory holding train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte
// and t10k-labels-idx1-ubyte (each optionally .gz; MNIST's "train-images.idx3-ubyte"
// spelling is accepted too). t10k is the test split; options.validationFraction of train is
// held out (chosen by options.seed) as validation. Class names are the given ones, or "0".."K-1"
// when classNames is empty, K being the first label the training set does not use. A label past
// the classes throws, naming its file and index.
DatasetSplits loadIdxDirectory(const std::filesystem::path& directory, const LoadOptions& options = {},
                               std::vector<std::string> classNames = {});

// T-shirt/top, Trouser, Pullover, Dress, Coat, Sandal, Shirt, Sneaker, Bag, Ankle boot.
const std::vector<std::string>& fashionMnistClassNames();

// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr const char* kFashionMnistSystemDirectory = "/usr/share/datasets/fashion-mnist";

// The directory holding Fashion-MNIST: $CNNSTUDIO_FASHION_MNIST_DIR if set, else the Debian
// package's. Throws cnnstudio::Error telling how to install it when the files are missing.
std::filesystem::path findFashionMnist();

// Fashion-MNIST from findFashionMnist(): 60000 train (less the validation hold-out, 6000 at
// the default 0.1) and 10000 test.
DatasetSplits loadFashionMnist(const LoadOptions& options = {});

}  // namespace cnnstudio::datasets
