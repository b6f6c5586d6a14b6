// One image file read as every reader reads it: planes of the asked channels and size, errors
// naming the file.
#include "cnnstudio/datasets/image_file.h"

#include "cnnstudio/error.h"
#include "test_files.h"

#include <gtest/gtest.h>
#include <opencv2/imgcodecs.hpp>

namespace cnnstudio::datasets {
namespace {

using testing::TempDir;
using testing::writeFile;

TEST(ImageFile, ColourImageBecomesRgbPlanesOfTheAskedSize) {
    TempDir dir;
    // 2 x 1 BGR on disk: a blue pixel, then a red one; enlarged to 4 x 2, each column doubled.
    cv::Mat image(1, 2, CV_8UC3);
    image.at<cv::Vec3b>(0, 0) = {255, 0, 0};
    image.at<cv::Vec3b>(0, 1) = {0, 0, 255};
    ASSERT_TRUE(cv::imwrite((dir / "pair.png").string(), image));
    const std::vector<std::uint8_t> pixels = readImageFile(dir / "pair.png", {3, 2, 4});
    ASSERT_EQ(pixels.size(), 3u * 2 * 4);
    EXPECT_EQ(pixels[0], 0) << "red plane, left: the blue pixel";
    EXPECT_EQ(pixels[3], 255) << "red plane, right: the red pixel";
    EXPECT_EQ(pixels[2 * 8 + 0], 255) << "blue plane, left";
    EXPECT_EQ(pixels[2 * 8 + 7], 0) << "blue plane, bottom right";
}

TEST(ImageFile, GreyImageShrinksByAveraging) {
    TempDir dir;
    writeFile(dir / "two.pgm", std::string("P5\n2 1\n255\n\x10\x30", 13));
    EXPECT_EQ(readImageFile(dir / "two.pgm", {1, 1, 1}), std::vector<std::uint8_t>{0x20});
}

TEST(ImageFile, UnreadableAndRefusedFilesAreErrorsNamingTheFile) {
    TempDir dir;
    writeFile(dir / "broken.png", "garbage");
    writeFile(dir / "scan.png", std::string(128, '\xff') + "DICMP`");
    for (const auto& [name, reason] : {std::pair{"broken.png", "cannot read the image"},
                                       std::pair{"scan.png", "a DICOM file, not an image format"},
                                       std::pair{"missing.png", "cannot read the image"}}) {
        try {
            readImageFile(dir / name, {1, 8, 8});
            ADD_FAILURE() << name << " was read";
        } catch (const Error& error) {
            EXPECT_EQ(error.where(), (dir / name).string());
            EXPECT_NE(error.reason().find(reason), std::string::npos) << error.what();
        }
    }
    EXPECT_EQ(refusedFormatOf(dir / "broken.png"), std::nullopt);
    EXPECT_THROW(readImageFile(dir / "broken.png", {2, 8, 8}), Error) << "two channels";
}

}  // namespace
}  // namespace cnnstudio::datasets
