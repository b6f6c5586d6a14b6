// One image file: the format check, OpenCV's decode, the conversion to planes of the asked size.
#include "cnnstudio/datasets/image_file.h"

#include "cnnstudio/error.h"

#ifdef CNNSTUDIO_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <string_view>

namespace cnnstudio::datasets {

namespace {

// Formats Debian's OpenCV recognises by content, whatever the file's name, and hands to a
// library made for another field: DICOM ("DICM" after a 128-byte preamble) to GDCM, whose
// assertion aborts the whole process on a damaged file, and NITF ("NITF" at the start) and DTED
// ("DTED" at byte 140) to GDAL, which then tries its many drivers on the file (HDF4's leaked
// memory on a damaged one). Both found by the image_file fuzz target. None is a format an image
// folder holds (isImageFile), so such a file is refused before OpenCV sees it.
struct ForeignFormat {
    std::size_t offset;
    std::string_view marker;
    std::string_view name;
};
constexpr ForeignFormat kForeignFormats[] = {
    {128, "DICM", "a DICOM file"}, {0, "NITF", "a NITF file"}, {140, "DTED", "a DTED file"}};
constexpr std::size_t kForeignMarkersEnd = 144;  // past the furthest marker

}  // namespace

bool isImageFile(const std::filesystem::path& path) {
    static const std::set<std::string> extensions = {
        ".png", ".jpg", ".jpeg", ".jpe", ".bmp", ".dib", ".pgm", ".ppm", ".pbm", ".pnm",
        ".pxm", ".pfm", ".tif", ".tiff", ".webp", ".jp2", ".sr",  ".ras", ".exr", ".hdr", ".pic"};
    const std::string name = path.filename().string();
    if (name.empty() || name.front() == '.') return false;
    std::string extension = path.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return extensions.count(extension) > 0;
}

std::optional<std::string> foreignFormatOf(const std::filesystem::path& path) {
    char head[kForeignMarkersEnd] = {};
    std::ifstream file(path, std::ios::binary);
    file.read(head, sizeof head);
    const std::string_view read(head, std::size_t(file.gcount()));
    for (const ForeignFormat& format : kForeignFormats)
        if (read.size() >= format.offset + format.marker.size() &&
            read.substr(format.offset, format.marker.size()) == format.marker)
            return std::string(format.name);
    return std::nullopt;
}

std::optional<std::string> decodeImageFile(const std::filesystem::path& path, ImageSize size,
                                           std::uint8_t* destination) {
#ifdef CNNSTUDIO_HAVE_OPENCV
    if (const std::optional<std::string> format = foreignFormatOf(path))
        return *format + ", not an image format CNN Studio reads (convert it to PNG)";
    cv::Mat image;
    try {
        image = cv::imread(path.string(), size.channels == 1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
        if (image.empty()) return "cannot read the image (unknown format or damaged file)";
        if (size.channels == 3) cv::cvtColor(image, image, cv::COLOR_BGR2RGB);
        const cv::Size target(size.width, size.height);
        if (image.size() != target) {
            const bool shrinking = image.cols > target.width || image.rows > target.height;
            cv::resize(image, image, target, 0, 0, shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
        }
        std::vector<cv::Mat> planes;
        const std::size_t planeBytes = std::size_t(size.height) * std::size_t(size.width);
        for (int c = 0; c < size.channels; ++c)
            planes.emplace_back(size.height, size.width, CV_8UC1, destination + std::size_t(c) * planeBytes);
        cv::split(image, planes);
    } catch (const cv::Exception& e) {
        return "cannot decode the image: " + e.msg;
    }
    return std::nullopt;
#else
    return "this build of CNN Studio cannot decode images (it was built without OpenCV)";
#endif
}

std::vector<std::uint8_t> readImageFile(const std::filesystem::path& path, ImageSize size) {
    if (size.channels != 1 && size.channels != 3)
        throw Error(std::to_string(size.channels) + "-channel images asked for", path.string(),
                    "images are read grey (1 channel) or colour (3)");
    std::vector<std::uint8_t> pixels(std::size_t(size.channels) * std::size_t(size.height) * std::size_t(size.width));
    if (const std::optional<std::string> problem = decodeImageFile(path, size, pixels.data()))
        throw Error(*problem, path.string(), "check that the file exists and is an image (png, jpg, ...)");
    return pixels;
}

}  // namespace cnnstudio::datasets
