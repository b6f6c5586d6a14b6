// Reading files that may be gzip-compressed. Compression is detected from the first two
// bytes (1f 8b), never from the file name, and inflated with zlib in large chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace cnnstudio::datasets {

class CompressedFileReader {
public:
    // Throws cnnstudio::Error naming the file if it cannot be opened.
    explicit CompressedFileReader(std::filesystem::path path);
    ~CompressedFileReader();
    CompressedFileReader(const CompressedFileReader&) = delete;
    CompressedFileReader& operator=(const CompressedFileReader&) = delete;

    // Fills up to `capacity` bytes of (decompressed) content; returns how many, 0 at the end.
    // Corrupt or truncated gzip data throws cnnstudio::Error naming the file.
    std::size_t read(char* destination, std::size_t capacity);

    bool isGzip() const;
    const std::filesystem::path& path() const;
    // The content size if known up front: the file size for plain files, the gzip trailer's
    // size field for single-member gzip files under 4 GiB (never more than deflate can expand
    // the file to); an estimate, never a promise.
    std::uint64_t expectedContentBytes() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// The whole (decompressed) content of a file.
std::string readDecompressedFile(const std::filesystem::path& path);

}  // namespace cnnstudio::datasets
