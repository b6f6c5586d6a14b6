// IDX reader: plain and gzip files, directories with a held-out validation split, each kind of
// bad file, and the installed Fashion-MNIST.
#include "cnnstudio/datasets/idx.h"

#include "cnnstudio/error.h"
#include "test_files.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <random>

namespace cnnstudio::datasets {
namespace {

using testing::TempDir;
using testing::gzipBytes;
using testing::idxBytes;
using testing::writeFile;

struct TinySet {
    std::vector<std::uint8_t> pixels;  // count x 4 x 3
    std::vector<std::uint8_t> labels;
};

TinySet makeTinySet(std::mt19937& rng, std::uint32_t count) {
    std::uniform_int_distribution<int> value(0, 255), label(0, 9);
    TinySet set;
    for (std::uint32_t i = 0; i < count * 12; ++i) set.pixels.push_back(std::uint8_t(value(rng)));
    for (std::uint32_t i = 0; i < count; ++i) set.labels.push_back(std::uint8_t(label(rng)));
    return set;
}

// Writes an MNIST-style directory; gzip decides whether the files are .gz.
void writeIdxDirectory(const std::filesystem::path& dir, const TinySet& train, const TinySet& test, bool gzip) {
    auto put = [&](const std::string& name, const std::string& bytes) {
        writeFile(dir / (gzip ? name + ".gz" : name), gzip ? gzipBytes(bytes) : bytes);
    };
    put("train-images-idx3-ubyte", idxBytes({std::uint32_t(train.labels.size()), 4, 3}, train.pixels));
    put("train-labels-idx1-ubyte", idxBytes({std::uint32_t(train.labels.size())}, train.labels));
    put("t10k-images-idx3-ubyte", idxBytes({std::uint32_t(test.labels.size()), 4, 3}, test.pixels));
    put("t10k-labels-idx1-ubyte", idxBytes({std::uint32_t(test.labels.size())}, test.labels));
}

Error errorOf(const std::function<void()>& load) {
    try {
        load();
    } catch (const Error& error) {
        return error;
    }
    ADD_FAILURE() << "no error thrown";
    return Error("none");
}

TEST(Idx, ReadsImagesAndLabelsPlainAndGzip) {
    std::mt19937 rng(31);
    const TinySet set = makeTinySet(rng, 5);
    TempDir dir;
    const std::string images = idxBytes({5, 4, 3}, set.pixels), labels = idxBytes({5}, set.labels);
    writeFile(dir / "images", images);
    writeFile(dir / "labels", labels);
    writeFile(dir / "images.gz", gzipBytes(images));
    writeFile(dir / "labels.gz", gzipBytes(labels));
    for (const auto& [imagesName, labelsName] : {std::pair{"images", "labels"}, std::pair{"images.gz", "labels.gz"}}) {
        const Dataset data = readIdxPair(dir / imagesName, dir / labelsName);
        EXPECT_EQ(data.size(), 5u);
        EXPECT_EQ(data.channels, 1);
        EXPECT_EQ(data.height, 4);
        EXPECT_EQ(data.width, 3);
        EXPECT_EQ(data.images, set.pixels);
        EXPECT_EQ(data.labels, std::vector<std::int32_t>(set.labels.begin(), set.labels.end()));
    }
}

TEST(Idx, DirectoryGivesTrainValidationAndTestSplits) {
    const unsigned seed = 32;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const TinySet train = makeTinySet(rng, 40), test = makeTinySet(rng, 10);
    for (bool gzip : {false, true}) {
        SCOPED_TRACE(gzip ? "gzip" : "plain");
        TempDir dir;
        writeIdxDirectory(dir.path(), train, test, gzip);
        LoadOptions options;
        options.validationFraction = 0.25;
        options.seed = 3;
        const DatasetSplits splits = loadIdxDirectory(dir.path(), options);
        EXPECT_EQ(splits.train.size(), 30u);
        EXPECT_EQ(splits.validation.size(), 10u);
        EXPECT_EQ(splits.test.size(), 10u);
        EXPECT_EQ(splits.test.images, test.pixels);
        // Train and validation together are the original train set, each sample once.
        std::vector<std::string> seen, original;  // each sample's bytes
        for (const Dataset* split : {&splits.train, &splits.validation})
            for (std::size_t i = 0; i < split->size(); ++i)
                seen.emplace_back(split->image(i).begin(), split->image(i).end());
        for (std::size_t i = 0; i < 40; ++i)
            original.emplace_back(train.pixels.begin() + std::ptrdiff_t(i * 12), train.pixels.begin() + std::ptrdiff_t(i * 12 + 12));
        std::sort(seen.begin(), seen.end());
        std::sort(original.begin(), original.end());
        EXPECT_EQ(seen, original);
        EXPECT_EQ(splits.classNames.size(), std::size_t(1 + std::max(*std::max_element(train.labels.begin(), train.labels.end()),
                                                                      *std::max_element(test.labels.begin(), test.labels.end()))));
    }
}

TEST(Idx, HoldOutIsDeterministicBySeed) {
    std::mt19937 rng(33);
    TempDir dir;
    writeIdxDirectory(dir.path(), makeTinySet(rng, 50), makeTinySet(rng, 5), false);
    LoadOptions options;
    options.seed = 9;
    const DatasetSplits a = loadIdxDirectory(dir.path(), options), b = loadIdxDirectory(dir.path(), options);
    EXPECT_EQ(a.validation.images, b.validation.images);
    options.seed = 10;
    const DatasetSplits c = loadIdxDirectory(dir.path(), options);
    EXPECT_NE(a.validation.images, c.validation.images);
}

TEST(Idx, BadMagicNamesTheFile) {
    TempDir dir;
    std::string bytes = idxBytes({2, 4, 3}, std::vector<std::uint8_t>(24, 7));
    bytes[0] = 'P';
    writeFile(dir / "bad-images", bytes);
    const Error error = errorOf([&] { readIdxImages(dir / "bad-images"); });
    EXPECT_EQ(error.where(), (dir / "bad-images").string());
    EXPECT_NE(error.reason().find("bad magic"), std::string::npos) << error.what();
}

TEST(Idx, LabelsFileGivenAsImagesIsRejectedByItsDimensions) {
    TempDir dir;
    writeFile(dir / "labels", idxBytes({3}, {1, 2, 3}));
    const Error error = errorOf([&] { readIdxImages(dir / "labels"); });
    EXPECT_NE(error.reason().find("has 1 dimensions, expected 3"), std::string::npos) << error.what();
}

// Found by tests/fuzz/idx_fuzz: an empty images file of 4294967295 x 197376 images read as a
// data set of height -1, and sizes whose product passed 64 bits wrapped around.
TEST(Idx, ImpossibleImageSizesAreRefused) {
    TempDir dir;
    writeFile(dir / "side", idxBytes({0, 0xFFFFFFFFu, 0x00030300u}, {}));
    const Error side = errorOf([&] { readIdxImages(dir / "side"); });
    EXPECT_NE(side.reason().find("images of size 4294967295x197376"), std::string::npos) << side.what();
    EXPECT_NE(side.hint().find("1 to 65535"), std::string::npos) << side.what();
    writeFile(dir / "wrap", idxBytes({0x80000000u, 0x80000000u, 4}, {1, 2}));
    const Error wrap = errorOf([&] { readIdxImages(dir / "wrap"); });
    EXPECT_NE(wrap.reason().find("more than 2^64 bytes"), std::string::npos) << wrap.what();
}

TEST(Idx, TruncatedFileNamesTheFile) {
    TempDir dir;
    const std::string bytes = idxBytes({10, 4, 3}, std::vector<std::uint8_t>(120, 1));
    writeFile(dir / "cut-images", bytes.substr(0, bytes.size() - 5));
    writeFile(dir / "cut-images.gz", gzipBytes(bytes.substr(0, bytes.size() - 5)));
    for (const char* name : {"cut-images", "cut-images.gz"}) {
        const Error error = errorOf([&] { readIdxImages(dir / name); });
        EXPECT_EQ(error.where(), (dir / name).string());
        EXPECT_NE(error.reason().find("truncated: the header promises 120 bytes of data, the file holds 115"),
                  std::string::npos)
            << error.what();
    }
}

TEST(Idx, ExtraBytesAfterTheDataAreAnError) {
    TempDir dir;
    writeFile(dir / "long-labels", idxBytes({3}, {1, 2, 3, 4}));
    const Error error = errorOf([&] { readIdxLabels(dir / "long-labels"); });
    EXPECT_NE(error.reason().find("1 bytes more than its header describes"), std::string::npos) << error.what();
}

TEST(Idx, CountMismatchBetweenImagesAndLabelsNamesBothFiles) {
    TempDir dir;
    writeFile(dir / "images", idxBytes({3, 4, 3}, std::vector<std::uint8_t>(36, 0)));
    writeFile(dir / "labels", idxBytes({2}, {0, 1}));
    const Error error = errorOf([&] { readIdxPair(dir / "images", dir / "labels"); });
    EXPECT_EQ(error.where(), (dir / "images").string());
    EXPECT_NE(error.reason().find("3 images but 2 labels in " + (dir / "labels").string()), std::string::npos)
        << error.what();
}

TEST(Idx, MissingFileInDirectoryIsNamed) {
    std::mt19937 rng(34);
    TempDir dir;
    writeIdxDirectory(dir.path(), makeTinySet(rng, 4), makeTinySet(rng, 2), false);
    std::filesystem::remove(dir / "t10k-labels-idx1-ubyte");
    const Error error = errorOf([&] { loadIdxDirectory(dir.path()); });
    EXPECT_NE(error.reason().find("no t10k-labels-idx1-ubyte file"), std::string::npos) << error.what();
}

TEST(Idx, LabelBeyondTheClassNamesIsAnError) {
    TempDir dir;
    TinySet train{std::vector<std::uint8_t>(24, 0), {0, 12}}, test{std::vector<std::uint8_t>(12, 0), {1}};
    writeIdxDirectory(dir.path(), train, test, false);
    const Error error = errorOf([&] { loadIdxDirectory(dir.path(), {}, fashionMnistClassNames()); });
    EXPECT_NE(error.reason().find("label 12 of image 1 is outside the data set's classes 0 to 9"), std::string::npos)
        << error.what();
    EXPECT_NE(error.where().find("train-labels-idx1-ubyte, label 1"), std::string::npos) << error.what();
}

// A stray 200 among labels 0-2 once made 201 classes and refitted the output layer silently.
TEST(Idx, StrayLabelIsRejectedNotMadeAClass) {
    TempDir dir;
    TinySet train{std::vector<std::uint8_t>(72, 0), {0, 1, 2, 0, 1, 2}}, test{std::vector<std::uint8_t>(36, 0), {1, 200, 0}};
    writeIdxDirectory(dir.path(), train, test, false);
    const Error error = errorOf([&] { loadIdxDirectory(dir.path()); });
    EXPECT_NE(error.reason().find("label 200 of image 1 is outside the data set's classes 0 to 2"), std::string::npos)
        << error.what();
    EXPECT_NE(error.where().find("t10k-labels-idx1-ubyte, label 1"), std::string::npos) << error.what();
}

TEST(FashionMnist, MissingInstallationTellsHowToInstall) {
    TempDir dir;
    ::setenv("CNNSTUDIO_FASHION_MNIST_DIR", dir.path().c_str(), 1);
    const Error error = errorOf([] { findFashionMnist(); });
    ::unsetenv("CNNSTUDIO_FASHION_MNIST_DIR");
    EXPECT_NE(error.reason().find("not installed"), std::string::npos) << error.what();
    EXPECT_EQ(error.where(), dir.path().string());
}

TEST(FashionMnist, InstalledPackageHasTheExpectedSplitsAndClasses) {
    if (!std::filesystem::exists(std::filesystem::path(kFashionMnistSystemDirectory) / "t10k-images-idx3-ubyte.gz"))
        GTEST_SKIP() << "Fashion-MNIST is not installed in " << kFashionMnistSystemDirectory
                     << " (apt-get install dataset-fashion-mnist)";
    const DatasetSplits splits = loadFashionMnist();
    EXPECT_EQ(splits.train.size(), 54000u);
    EXPECT_EQ(splits.validation.size(), 6000u);
    EXPECT_EQ(splits.test.size(), 10000u);
    EXPECT_EQ(splits.train.height, 28);
    EXPECT_EQ(splits.train.width, 28);
    EXPECT_EQ(splits.classNames, fashionMnistClassNames());
    EXPECT_EQ(splits.test.classCounts(10), std::vector<std::size_t>(10, 1000));
    const auto train = splits.train.classCounts(10), validation = splits.validation.classCounts(10);
    for (std::size_t k = 0; k < 10; ++k) EXPECT_EQ(train[k] + validation[k], 6000u) << "class " << k;
}

}  // namespace
}  // namespace cnnstudio::datasets
