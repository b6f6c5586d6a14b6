// Image-folder loader: class folders, given and fractional splits, conversion to the requested
// channels and size, unreadable images, empty class folders.
#include "cnnstudio/datasets/image_folder.h"

#include "cnnstudio/error.h"
#include "test_files.h"

#include <gtest/gtest.h>
#include <opencv2/imgcodecs.hpp>

#include <cstdio>
#include <functional>

namespace cnnstudio::datasets {
namespace {

using testing::TempDir;
using testing::writeFile;

// A BGR image of one colour (OpenCV's channel order on disk).
void writeSolidImage(const std::filesystem::path& path, int rows, int cols, cv::Scalar bgr) {
    std::filesystem::create_directories(path.parent_path());
    ASSERT_TRUE(cv::imwrite(path.string(), cv::Mat(rows, cols, CV_8UC3, bgr))) << path;
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

LoadOptions rgb8x8() {
    LoadOptions options;
    options.imageChannels = 3;
    options.imageHeight = 8;
    options.imageWidth = 8;
    options.validationFraction = 0;
    options.testFraction = 0;
    return options;
}

TEST(ImageFolder, SortedFolderNamesAreClassesAndImagesAreConvertedToRgbPlanes) {
    TempDir dir;
    writeSolidImage(dir / "zebra/1.png", 16, 16, {255, 0, 0});  // blue
    writeSolidImage(dir / "apple/1.png", 8, 8, {0, 0, 255});     // red
    writeSolidImage(dir / "apple/2.bmp", 4, 4, {0, 255, 0});     // green, enlarged
    writeFile(dir / "apple/notes.txt", "not an image: ignored");
    const DatasetSplits splits = loadImageFolder(dir.path(), rgb8x8());
    EXPECT_EQ(splits.classNames, (std::vector<std::string>{"apple", "zebra"}));
    ASSERT_EQ(splits.train.size(), 3u);
    EXPECT_EQ(splits.train.labels, (std::vector<std::int32_t>{0, 0, 1}));
    EXPECT_EQ(splits.train.sampleBytes(), 3u * 8 * 8);
    auto plane = [&](std::size_t sample, int channel) { return splits.train.image(sample)[std::size_t(channel) * 64 + 27]; };
    EXPECT_EQ(plane(0, 0), 255);  // red image: R plane full
    EXPECT_EQ(plane(0, 2), 0);
    EXPECT_EQ(plane(1, 1), 255);  // green image
    EXPECT_EQ(plane(2, 2), 255);  // blue image: B plane full
    EXPECT_EQ(plane(2, 0), 0);
}

TEST(ImageFolder, GreyConversionAndResize) {
    TempDir dir;
    writeSolidImage(dir / "a/x.jpg", 30, 20, {100, 100, 100});
    writeSolidImage(dir / "b/y.png", 5, 5, {200, 200, 200});
    LoadOptions options = rgb8x8();
    options.imageChannels = 1;
    options.imageHeight = 6;
    options.imageWidth = 10;
    const DatasetSplits splits = loadImageFolder(dir.path(), options);
    ASSERT_EQ(splits.train.size(), 2u);
    EXPECT_EQ(splits.train.channels, 1);
    EXPECT_EQ(splits.train.sampleBytes(), 60u);
    EXPECT_NEAR(splits.train.image(0)[33], 100, 3);  // JPEG may shift a grey level or two
    EXPECT_EQ(splits.train.image(1)[33], 200);
}

TEST(ImageFolder, TrainValTestSubfoldersAreUsedAsGiven) {
    TempDir dir;
    for (const char* split : {"train", "val", "test"})
        for (const char* cls : {"cat", "dog"}) writeSolidImage(dir / split / cls / "1.png", 8, 8, {1, 2, 3});
    writeSolidImage(dir / "train/dog/2.png", 8, 8, {1, 2, 3});
    const DatasetSplits splits = loadImageFolder(dir.path(), rgb8x8());
    EXPECT_EQ(splits.train.size(), 3u);
    EXPECT_EQ(splits.validation.size(), 2u);
    EXPECT_EQ(splits.test.size(), 2u);
    EXPECT_EQ(splits.classNames, (std::vector<std::string>{"cat", "dog"}));
}

TEST(ImageFolder, WithoutSplitFoldersTestAndValidationAreHeldOutByFraction) {
    TempDir dir;
    for (int i = 0; i < 10; ++i) {
        writeSolidImage(dir / "a" / (std::to_string(i) + ".png"), 8, 8, {double(i), 0, 0});
        writeSolidImage(dir / "b" / (std::to_string(i) + ".png"), 8, 8, {0, double(i), 0});
    }
    LoadOptions options = rgb8x8();
    options.testFraction = 0.1;
    options.validationFraction = 0.2;
    const DatasetSplits splits = loadImageFolder(dir.path(), options);
    EXPECT_EQ(splits.test.size(), 2u);
    EXPECT_EQ(splits.validation.size(), 4u);
    EXPECT_EQ(splits.train.size(), 14u);
}

// Enough images for several decoding threads: each lands at its own index, in file order.
TEST(ImageFolder, ManyImagesDecodeInParallelIntoFileOrder) {
    TempDir dir;
    constexpr int kImages = 60;
    for (int i = 0; i < kImages; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "%03d.png", i);
        writeSolidImage(dir / "a" / name, 8, 8, {0, 0, double(i)});  // red = i
    }
    const DatasetSplits splits = loadImageFolder(dir.path(), rgb8x8());
    ASSERT_EQ(splits.train.size(), std::size_t(kImages));
    for (int i = 0; i < kImages; ++i) EXPECT_EQ(splits.train.image(std::size_t(i))[27], i) << "image " << i;
}

TEST(ImageFolder, UnreadableImageNamesTheFile) {
    TempDir dir;
    writeSolidImage(dir / "a/good.png", 8, 8, {1, 2, 3});
    writeFile(dir / "a/broken.png", "this is not a png");
    const Error error = errorOf([&] { loadImageFolder(dir.path(), rgb8x8()); });
    EXPECT_EQ(error.where(), (dir / "a/broken.png").string());
    EXPECT_NE(error.reason().find("cannot read the image"), std::string::npos) << error.what();
    EXPECT_NE(error.hint().find("--skip-bad"), std::string::npos) << "the hint names the flag: " << error.hint();
}

constexpr const char* kDamagedRadianceHeader = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X zz\n";

// Files OpenCV would hand to GDCM or GDAL by their content, or whose damaged header its HDR
// decoder leaves open, named .png: each refused with the file and its format named, before
// OpenCV sees it.
TEST(ImageFolder, RefusedFormatsAreNamedBeforeOpenCvDecodesThem) {
    // The image_file fuzz target's reproducers: "DICM" after a 128-byte preamble of a damaged
    // DICOM file (GDCM's assertion ended the process), a damaged HDF4 file with "DTED" at byte
    // 140 (GDAL's HDF4 driver leaked it), a damaged Radiance header (left open).
    std::string dicom(128, '\xff');
    dicom[0] = dicom[1] = '\0';
    dicom += "DICMP`";
    std::string dted("\x0e\x03\x13\x01" "2P2 r<!PDS_VERSION_ID_Capabilities", 38);
    dted.resize(140, '\0');
    dted += std::string("DTED\0\0\0", 7);
    const std::string nitf = "NITF02.10" + std::string(20, ' ');
    const std::string hdr("#?RGBE\xff\x4f\xff\x51\x00\x02\x06\x0f\x17\x00\x30\x60\x3f\x00\x00", 21);
    const std::pair<std::string, std::string> files[] = {{dicom, "a DICOM file"},
                                                         {dted, "a DTED file"},
                                                         {nitf, "a NITF file"},
                                                         {hdr, "a Radiance HDR file"},
                                                         {kDamagedRadianceHeader, "a Radiance HDR file"}};
    for (const auto& [content, format] : files) {
        TempDir dir;
        writeSolidImage(dir / "a/good.png", 8, 8, {1, 2, 3});
        writeFile(dir / "a/scan.png", content);
        const Error error = errorOf([&] { loadImageFolder(dir.path(), rgb8x8()); });
        EXPECT_EQ(error.where(), (dir / "a/scan.png").string());
        EXPECT_NE(error.reason().find(format + ", not an image format"), std::string::npos) << error.what();
    }
}

std::size_t openFileDescriptors() {
    return std::size_t(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                     std::filesystem::directory_iterator()));
}

TEST(ImageFolder, DamagedImagesLeaveNoFileOpen) {
    // OpenCV 4.6 left every damaged Radiance HDR file open; the fuzz target ran out of file
    // descriptors after 600,000 inputs. Skipped or refused, no file stays open.
    TempDir dir;
    writeSolidImage(dir / "a/good.png", 8, 8, {1, 2, 3});
    writeFile(dir / "b/good.pgm", std::string("P5\n1 1\n255\n\x80", 12));
    for (int i = 0; i < 40; ++i) {
        writeFile(dir / "a" / ("hdr" + std::to_string(i) + ".png"), kDamagedRadianceHeader);
        writeFile(dir / "b" / ("broken" + std::to_string(i) + ".jpg"), "garbage");
    }
    LoadOptions options = rgb8x8();
    options.skipBad = true;
    loadImageFolder(dir.path(), options);  // OpenCV's thread pool starts on the first load
    const std::size_t before = openFileDescriptors();
    EXPECT_EQ(loadImageFolder(dir.path(), options).skipped.count, 80u);
    EXPECT_EQ(openFileDescriptors(), before);
}

TEST(ImageFolder, FolderThatCannotBeReadIsNamed) {
    // A link to itself among the class folders: std::filesystem throws (too many levels of
    // links), which the loader names like its own errors instead of letting it escape.
    TempDir dir;
    writeSolidImage(dir / "a/good.png", 8, 8, {1, 2, 3});
    std::filesystem::create_directory_symlink(dir / "loop", dir / "loop");
    const Error error = errorOf([&] { loadImageFolder(dir.path(), rgb8x8()); });
    EXPECT_EQ(error.where(), (dir / "loop").string());
    EXPECT_NE(error.reason().find("cannot read it"), std::string::npos) << error.what();
}

TEST(ImageFolder, SkipBadSkipsAndCountsUnreadableImages) {
    TempDir dir;
    writeSolidImage(dir / "a/good.png", 8, 8, {1, 2, 3});
    writeSolidImage(dir / "b/good.png", 8, 8, {1, 2, 3});
    writeFile(dir / "a/broken.png", "garbage");
    writeFile(dir / "b/broken.jpg", "garbage");
    LoadOptions options = rgb8x8();
    options.skipBad = true;
    const DatasetSplits splits = loadImageFolder(dir.path(), options);
    EXPECT_EQ(splits.train.size(), 2u);
    EXPECT_EQ(splits.train.labels, (std::vector<std::int32_t>{0, 1}));
    ASSERT_EQ(splits.skipped.count, 2u);
    EXPECT_NE(splits.skipped.firstMessages[0].find("broken.png"), std::string::npos);
}

TEST(ImageFolder, EmptyClassFolderIsNamed) {
    TempDir dir;
    writeSolidImage(dir / "a/1.png", 8, 8, {1, 2, 3});
    std::filesystem::create_directories(dir / "b");
    const Error error = errorOf([&] { loadImageFolder(dir.path(), rgb8x8()); });
    EXPECT_EQ(error.where(), (dir / "b").string());
    EXPECT_NE(error.reason().find("empty class folder"), std::string::npos) << error.what();
}

// A class split into sub-folders is still one class (as torchvision's ImageFolder reads it);
// hidden folders are left out.
TEST(ImageFolder, ImagesInSubFoldersOfAClassBelongToIt) {
    TempDir dir;
    writeSolidImage(dir / "cat/1.png", 8, 8, {0, 0, 255});
    writeSolidImage(dir / "cat/2019/2.png", 8, 8, {0, 0, 255});
    writeSolidImage(dir / "cat/2019/march/3.png", 8, 8, {0, 0, 255});
    writeSolidImage(dir / "cat/.thumbnails/4.png", 8, 8, {0, 0, 255});
    writeSolidImage(dir / "dog/only-in-a-sub-folder/1.png", 8, 8, {0, 255, 0});
    const DatasetSplits splits = loadImageFolder(dir.path(), rgb8x8());
    EXPECT_EQ(splits.classNames, (std::vector<std::string>{"cat", "dog"}));
    EXPECT_EQ(splits.train.labels, (std::vector<std::int32_t>{0, 0, 0, 1}));
}

TEST(ImageFolder, ValidationClassMissingFromTrainIsNamed) {
    TempDir dir;
    writeSolidImage(dir / "train/a/1.png", 8, 8, {1, 2, 3});
    writeSolidImage(dir / "val/ghost/1.png", 8, 8, {1, 2, 3});
    const Error error = errorOf([&] { loadImageFolder(dir.path(), rgb8x8()); });
    EXPECT_NE(error.reason().find("'ghost' is not among the training classes"), std::string::npos) << error.what();
}

TEST(ImageFolder, BadChannelCountAndMissingFolderAreErrors) {
    TempDir dir;
    LoadOptions options = rgb8x8();
    options.imageChannels = 2;
    EXPECT_NE(errorOf([&] { loadImageFolder(dir.path(), options); }).reason().find("not 1 or 3"), std::string::npos);
    EXPECT_NE(errorOf([&] { loadImageFolder(dir / "absent", rgb8x8()); }).reason().find("not a directory"),
              std::string::npos);
}

}  // namespace
}  // namespace cnnstudio::datasets
