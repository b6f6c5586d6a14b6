// Reads (and inflates) a file on a background thread, handing out large chunks in order, so
// a parser on the calling thread runs while the next chunk is being decompressed.
#pragma once

#include "cnnstudio/datasets/compressed_file.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace cnnstudio::datasets {

class BackgroundChunkReader {
public:
    BackgroundChunkReader(const std::filesystem::path& path, std::size_t chunkBytes,
                          std::size_t chunksInFlight);
    // Stops the reader thread (also mid-file) and waits for it.
    ~BackgroundChunkReader();
    BackgroundChunkReader(const BackgroundChunkReader&) = delete;
    BackgroundChunkReader& operator=(const BackgroundChunkReader&) = delete;

    // The next chunk of content, empty at the end of the file. It stays valid until the next
    // call. Errors of the reader thread (corrupt gzip, read failures) are rethrown here.
    std::span<const char> next();

    std::uint64_t expectedContentBytes() const { return expectedBytes_; }

private:
    struct Chunk {
        std::vector<char> bytes;
        std::size_t used = 0;
    };
    void readLoop();

    CompressedFileReader reader_;
    std::uint64_t expectedBytes_;
    std::vector<Chunk> chunks_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::size_t> filled_, free_;
    std::ptrdiff_t held_ = -1;  // the chunk the caller is looking at
    bool endReached_ = false, stopping_ = false;
    std::exception_ptr failure_;
    std::thread thread_;
};

}  // namespace cnnstudio::datasets
