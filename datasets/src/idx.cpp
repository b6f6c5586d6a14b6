// IDX reader: whole-file reads (the largest, Fashion-MNIST's train images, is 47 MB), header
// checks against the real byte count, then one copy into the Dataset.
#include "cnnstudio/datasets/idx.h"

#include "cnnstudio/datasets/compressed_file.h"
#include "cnnstudio/error.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cnnstudio::datasets {

namespace {

constexpr unsigned char kUnsignedByteType = 0x08;
// Larger than any image an IDX file holds (MNIST's are 28) and small enough for the int sizes
// of a Dataset.
constexpr std::uint32_t kMaxImageSide = 65535;

std::uint32_t readBigEndian32(const unsigned char* bytes) {
    return std::uint32_t(bytes[0]) << 24 | std::uint32_t(bytes[1]) << 16 |
           std::uint32_t(bytes[2]) << 8 | std::uint32_t(bytes[3]);
}

std::string hex32(std::uint32_t value) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08X", value);
    return text;
}

struct IdxContent {
    std::string bytes;
    std::vector<std::uint32_t> dims;
    std::size_t dataOffset = 0;
};

// Reads an IDX file of unsigned bytes with `expectedDims` dimensions; `what` says what the
// file should hold ("images", "labels") for the messages.
IdxContent readIdx(const std::filesystem::path& path, std::size_t expectedDims, const char* what) {
    IdxContent idx;
    idx.bytes = readDecompressedFile(path);
    const std::string where = path.string();
    const std::uint32_t expectedMagic = 0x00000800u | std::uint32_t(expectedDims);
    const std::string hint = std::string("expected an IDX ") + what + " file (magic " +
                             hex32(expectedMagic) + "), such as " +
                             (expectedDims == 3 ? "train-images-idx3-ubyte" : "train-labels-idx1-ubyte");
    if (idx.bytes.size() < 4)
        throw Error("too short for an IDX file (" + std::to_string(idx.bytes.size()) + " bytes)",
                    where, hint);
    const auto* bytes = reinterpret_cast<const unsigned char*>(idx.bytes.data());
    const std::uint32_t magic = readBigEndian32(bytes);
    if (bytes[0] != 0 || bytes[1] != 0) throw Error("bad magic " + hex32(magic), where, hint);
    if (bytes[2] != kUnsignedByteType)
        throw Error("IDX data type " + hex32(bytes[2]) + " is not supported, only unsigned bytes (0x08)",
                    where, hint);
    if (bytes[3] != expectedDims)
        throw Error("has " + std::to_string(bytes[3]) + " dimensions, expected " +
                        std::to_string(expectedDims) + " for " + what,
                    where, hint);
    idx.dataOffset = 4 + 4 * expectedDims;
    if (idx.bytes.size() < idx.dataOffset)
        throw Error("truncated inside the header", where, "download or copy the file again");
    for (std::size_t d = 0; d < expectedDims; ++d) idx.dims.push_back(readBigEndian32(bytes + 4 + 4 * d));
    const std::uint64_t actual = idx.bytes.size() - idx.dataOffset;
    std::uint64_t dataBytes = 1;
    const bool anyZero = std::find(idx.dims.begin(), idx.dims.end(), 0u) != idx.dims.end();
    for (std::uint32_t dimension : idx.dims)
        if (!anyZero && __builtin_mul_overflow(dataBytes, std::uint64_t(dimension), &dataBytes))
            throw Error("truncated: the header promises more than 2^64 bytes of data, the file holds " +
                            std::to_string(actual),
                        where, "download or copy the file again");
    if (anyZero) dataBytes = 0;
    if (actual < dataBytes)
        throw Error("truncated: the header promises " + std::to_string(dataBytes) +
                        " bytes of data, the file holds " + std::to_string(actual),
                    where, "download or copy the file again");
    if (actual > dataBytes)
        throw Error("holds " + std::to_string(actual - dataBytes) +
                        " bytes more than its header describes",
                    where, "the file may be damaged or not an IDX file");
    return idx;
}

std::filesystem::path findIdxFile(const std::filesystem::path& directory, const char* prefix,
                                  const char* kind) {
    // prefix "train-images", kind "idx3-ubyte": accept -, . spellings, plain or .gz.
    for (const char* separator : {"-", "."})
        for (const char* suffix : {"", ".gz"}) {
            std::filesystem::path candidate =
                directory / (std::string(prefix) + separator + kind + suffix);
            if (std::filesystem::is_regular_file(candidate)) return candidate;
        }
    throw Error(std::string("no ") + prefix + "-" + kind + " file (plain or .gz)",
                directory.string(),
                "an IDX directory holds train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                "t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, optionally gzipped");
}

}  // namespace

Dataset readIdxImages(const std::filesystem::path& path) {
    IdxContent idx = readIdx(path, 3, "images");
    Dataset images;
    images.channels = 1;
    images.height = int(idx.dims[1]);
    images.width = int(idx.dims[2]);
    if (idx.dims[1] == 0 || idx.dims[2] == 0 || idx.dims[1] > kMaxImageSide || idx.dims[2] > kMaxImageSide)
        throw Error("images of size " + std::to_string(idx.dims[1]) + "x" + std::to_string(idx.dims[2]),
                    path.string(), "the file is not usable as images (each side must be 1 to " +
                                       std::to_string(kMaxImageSide) + ")");
    images.images.assign(idx.bytes.begin() + std::ptrdiff_t(idx.dataOffset), idx.bytes.end());
    images.labels.assign(idx.dims[0], 0);
    return images;
}

std::vector<std::int32_t> readIdxLabels(const std::filesystem::path& path) {
    IdxContent idx = readIdx(path, 1, "labels");
    return std::vector<std::int32_t>(reinterpret_cast<const unsigned char*>(idx.bytes.data()) + idx.dataOffset,
                                     reinterpret_cast<const unsigned char*>(idx.bytes.data()) + idx.bytes.size());
}

Dataset readIdxPair(const std::filesystem::path& imagesPath, const std::filesystem::path& labelsPath) {
    Dataset data = readIdxImages(imagesPath);
    std::vector<std::int32_t> labels = readIdxLabels(labelsPath);
    if (labels.size() != data.size())
        throw Error(std::to_string(data.size()) + " images but " + std::to_string(labels.size()) +
                        " labels in " + labelsPath.string(),
                    imagesPath.string(), "the images and labels files must come from the same set");
    data.labels = std::move(labels);
    return data;
}

namespace {

// Without class names the classes are 0..K-1 for the first K that the training labels use
// without a gap: a stray label (a 200 among 0-9) then stands out instead of making 201 classes.
std::vector<std::string> classNamesFromLabels(const std::vector<std::int32_t>& trainLabels) {
    std::vector<bool> used;
    for (std::int32_t label : trainLabels) {
        if (std::size_t(label) >= used.size()) used.resize(std::size_t(label) + 1, false);
        used[std::size_t(label)] = true;
    }
    std::vector<std::string> names;
    while (names.size() < used.size() && used[names.size()]) names.push_back(std::to_string(names.size()));
    return names;
}

void rejectLabelsOutsideClasses(const std::vector<std::int32_t>& labels, std::size_t classes,
                                const std::filesystem::path& labelsFile) {
    for (std::size_t i = 0; i < labels.size(); ++i)
        if (std::size_t(labels[i]) >= classes)
            throw Error("label " + std::to_string(labels[i]) + " of image " + std::to_string(i) +
                            " is outside the data set's classes 0 to " + std::to_string(classes - 1),
                        labelsFile.string() + ", label " + std::to_string(i),
                        "fix that label; every class needs training images, numbered from 0 without gaps");
}

}  // namespace

DatasetSplits loadIdxDirectory(const std::filesystem::path& directory, const LoadOptions& options,
                               std::vector<std::string> classNames) {
    if (!std::filesystem::is_directory(directory))
        throw Error("not a directory", directory.string(),
                    "give the folder holding the IDX files (train-images-idx3-ubyte, ...)");
    const std::filesystem::path trainLabels = findIdxFile(directory, "train-labels", "idx1-ubyte");
    const std::filesystem::path testLabels = findIdxFile(directory, "t10k-labels", "idx1-ubyte");
    DatasetSplits splits;
    splits.train = readIdxPair(findIdxFile(directory, "train-images", "idx3-ubyte"), trainLabels);
    splits.test = readIdxPair(findIdxFile(directory, "t10k-images", "idx3-ubyte"), testLabels);
    if (splits.train.height != splits.test.height || splits.train.width != splits.test.width)
        throw Error("train images are " + std::to_string(splits.train.height) + "x" +
                        std::to_string(splits.train.width) + " but test images are " +
                        std::to_string(splits.test.height) + "x" + std::to_string(splits.test.width),
                    directory.string(), "both sets must come from the same data set");

    if (classNames.empty()) classNames = classNamesFromLabels(splits.train.labels);
    if (classNames.empty())
        throw Error("no training image has label 0", trainLabels.string(), "classes are numbered from 0");
    rejectLabelsOutsideClasses(splits.train.labels, classNames.size(), trainLabels);
    rejectLabelsOutsideClasses(splits.test.labels, classNames.size(), testLabels);
    splits.classNames = std::move(classNames);
    splits.validation = holdOut(splits.train, options.validationFraction, options.seed);
    applyLimit(splits, options.limit);
    splits.description = "IDX " + directory.string();
    return splits;
}

const std::vector<std::string>& fashionMnistClassNames() {
    static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress",
                                                   "Coat",        "Sandal",  "Shirt",    "Sneaker",
                                                   "Bag",         "Ankle boot"};
    return names;
}

std::filesystem::path findFashionMnist() {
    const char* override = std::getenv("CNNSTUDIO_FASHION_MNIST_DIR");
    const std::filesystem::path directory =
        override && *override ? std::filesystem::path(override) : std::filesystem::path(kFashionMnistSystemDirectory);
    const bool present = std::filesystem::exists(directory / "t10k-images-idx3-ubyte.gz") ||
                         std::filesystem::exists(directory / "t10k-images-idx3-ubyte");
    if (!present)
        throw Error("Fashion-MNIST is not installed", directory.string(),
                    override && *override
                        ? "CNNSTUDIO_FASHION_MNIST_DIR must name a folder with the IDX files"
                        : "install it with `sudo apt-get install dataset-fashion-mnist`, or give a "
                          "data set such as idx:DIR or fer2013:FILE");
    return directory;
}

DatasetSplits loadFashionMnist(const LoadOptions& options) {
    DatasetSplits splits = loadIdxDirectory(findFashionMnist(), options, fashionMnistClassNames());
    splits.description = "Fashion-MNIST " + splits.description.substr(4);
    return splits;
}

}  // namespace cnnstudio::datasets
