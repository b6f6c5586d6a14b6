// One image file, read the one way CNN Studio reads images (image folders, `predict`, the live
// demo's folder source): decoded by OpenCV, converted to grey or RGB and resized as training
// does. Files that OpenCV would hand to a medical or geospatial library, or decode leaking a
// file descriptor, are refused first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cnnstudio::datasets {

// The size every image is brought to: channels 1 (grey) or 3 (RGB), height x width pixels.
struct ImageSize {
    int channels = 3, height = 64, width = 64;
};

// True for a file an image folder holds: a known image extension (any case), not hidden.
bool isImageFile(const std::filesystem::path& path);

// What the file is when CNN Studio refuses to hand it to OpenCV ("a DICOM file", "a NITF
// file", "a DTED file", "a Radiance HDR file"), judged by its content as OpenCV judges it;
// nothing for any other file, readable or not.
std::optional<std::string> refusedFormatOf(const std::filesystem::path& path);

// Decodes `path` into `destination` (size.channels x size.height x size.width planes of bytes),
// shrinking with area averaging and enlarging bilinearly. Returns what went wrong, without the
// file's name, or nothing: the image folder loader skips or reports, the others throw.
std::optional<std::string> decodeImageFile(const std::filesystem::path& path, ImageSize size,
                                           std::uint8_t* destination);

// decodeImageFile into a new buffer; throws cnnstudio::Error naming the file.
std::vector<std::uint8_t> readImageFile(const std::filesystem::path& path, ImageSize size);

}  // namespace cnnstudio::datasets
