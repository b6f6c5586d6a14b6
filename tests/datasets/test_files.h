// Helpers for the datasets tests: a temporary folder removed afterwards, and writers for the
// small files the tests feed the loaders (text, gzip, IDX).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cnnstudio::datasets::testing {

class TempDir {
public:
    TempDir() {
        std::random_device entropy;
        path_ = std::filesystem::temp_directory_path() /
                ("cnnstudio_datasets_test_" + std::to_string(entropy()) + std::to_string(entropy()));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

private:
    std::filesystem::path path_;
};

inline void writeFile(const std::filesystem::path& path, std::string_view content) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out.write(content.data(), std::streamsize(content.size()));
    if (!out) throw std::runtime_error("test could not write " + path.string());
}

// gzip-compressed bytes of content (one gzip member), at the given zlib level.
inline std::string gzipBytes(std::string_view content, int level = 6) {
    z_stream stream{};
    if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    std::string out(deflateBound(&stream, uLong(content.size())) + 64, '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
    stream.avail_in = uInt(content.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = uInt(out.size());
    const int status = deflate(&stream, Z_FINISH);
    out.resize(stream.total_out);
    deflateEnd(&stream);
    if (status != Z_STREAM_END) throw std::runtime_error("deflate failed");
    return out;
}

inline void appendBigEndian32(std::string& out, std::uint32_t value) {
    out.push_back(char(value >> 24));
    out.push_back(char(value >> 16));
    out.push_back(char(value >> 8));
    out.push_back(char(value));
}

// An IDX file of unsigned bytes with the given dimensions and data.
inline std::string idxBytes(const std::vector<std::uint32_t>& dims, const std::vector<std::uint8_t>& data) {
    std::string out;
    out.push_back(0);
    out.push_back(0);
    out.push_back(0x08);
    out.push_back(char(dims.size()));
    for (std::uint32_t d : dims) appendBigEndian32(out, d);
    out.append(reinterpret_cast<const char*>(data.data()), data.size());
    return out;
}

}  // namespace cnnstudio::datasets::testing
