// One image file: the refused formats, OpenCV's decode, the conversion to planes of the asked size.
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

// Files OpenCV must not be handed, recognised as OpenCV recognises them: by content, whatever
// the file's name. Debian's OpenCV passes DICOM ("DICM" after a 128-byte preamble) to GDCM,
// whose assertion aborts the whole process on a damaged file, and NITF ("NITF" at the start)
// and DTED ("DTED" at byte 140) to GDAL, which then tries its many drivers on the file (HDF4's
// leaked memory on a damaged one). OpenCV 4.6's own Radiance HDR decoder ("#?RGBE" or
// "#?RADIANCE" at the start) leaves the file open when the header is damaged: one file
// descriptor lost per file, until the process can open none. All found by the image_file fuzz
// target. None is an 8-bit image format of the kind a network trains on, so each is refused
// before OpenCV sees it.
struct RefusedFormat {
    std::size_t offset;
    std::string_view marker;
    std::string_view name;
};
constexpr RefusedFormat kRefusedFormats[] = {
    {128, "DICM", "a DICOM file"},        {0, "NITF", "a NITF file"},
    {140, "DTED", "a DTED file"},         {0, "#?RGBE", "a Radiance HDR file"},
    {0, "#?RADIANCE", "a Radiance HDR file"}};
constexpr std::size_t kRefusedMarkersEnd = 144;  // past the furthest marker

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

std::optional<std::string> refusedFormatOf(const std::filesystem::path& path) {
    char head[kRefusedMarkersEnd] = {};
    std::ifstream file(path, std::ios::binary);
    file.read(head, sizeof head);
    const std::string_view read(head, std::size_t(file.gcount()));
    for (const RefusedFormat& format : kRefusedFormats)
        if (read.size() >= format.offset + format.marker.size() &&
            read.substr(format.offset, format.marker.size()) == format.marker)
            return std::string(format.name);
    return std::nullopt;
}

std::optional<std::string> decodeImageFile(const std::filesystem::path& path, ImageSize size,
                                           std::uint8_t* destination) {
#ifdef CNNSTUDIO_HAVE_OPENCV
    if (const std::optional<std::string> format = refusedFormatOf(path))
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
