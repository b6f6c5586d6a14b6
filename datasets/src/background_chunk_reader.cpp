// BackgroundChunkReader: a fixed pool of chunk buffers cycling between the reader thread
// (filling) and the caller (parsing); nothing is allocated after construction.
#include "background_chunk_reader.h"

#include <algorithm>

namespace cnnstudio::datasets {

namespace {
// The smallest chunk, for content whose size is unknown or underestimated (concatenated gzip
// members report only the last one's size).
constexpr std::size_t kMinChunkBytes = std::size_t(64) << 10;
}  // namespace

BackgroundChunkReader::BackgroundChunkReader(const std::filesystem::path& path,
                                             std::size_t chunkBytes, std::size_t chunksInFlight)
    : reader_(path), expectedBytes_(reader_.expectedContentBytes()) {
    // No larger than the content and one byte (so a small file is one chunk, then the end): a
    // 20 KB CSV costs three small buffers, not three of chunkBytes.
    const std::size_t bytes = std::min<std::uint64_t>(
        chunkBytes, std::max<std::uint64_t>(expectedBytes_ + 1, kMinChunkBytes));
    chunks_.resize(std::max<std::size_t>(chunksInFlight, 2));
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
        chunks_[i].bytes.resize(bytes);
        free_.push_back(i);
    }
    thread_ = std::thread([this] { readLoop(); });
}

BackgroundChunkReader::~BackgroundChunkReader() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void BackgroundChunkReader::readLoop() {
    for (;;) {
        std::size_t index;
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [&] { return stopping_ || !free_.empty(); });
            if (stopping_) return;
            index = free_.front();
            free_.pop_front();
        }
        Chunk& chunk = chunks_[index];
        try {
            chunk.used = reader_.read(chunk.bytes.data(), chunk.bytes.size());
        } catch (...) {
            std::lock_guard lock(mutex_);
            failure_ = std::current_exception();
            changed_.notify_all();
            return;
        }
        std::lock_guard lock(mutex_);
        if (chunk.used == 0) {
            endReached_ = true;
            changed_.notify_all();
            return;
        }
        filled_.push_back(index);
        changed_.notify_all();
    }
}

std::span<const char> BackgroundChunkReader::next() {
    std::unique_lock lock(mutex_);
    if (held_ >= 0) {
        free_.push_back(std::size_t(held_));
        held_ = -1;
        changed_.notify_all();
    }
    changed_.wait(lock, [&] { return !filled_.empty() || endReached_ || failure_; });
    if (!filled_.empty()) {
        held_ = std::ptrdiff_t(filled_.front());
        filled_.pop_front();
        const Chunk& chunk = chunks_[std::size_t(held_)];
        return {chunk.bytes.data(), chunk.used};
    }
    if (failure_) std::rethrow_exception(failure_);
    return {};
}

}  // namespace cnnstudio::datasets
