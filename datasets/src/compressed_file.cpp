// CompressedFileReader: plain reads, or zlib inflate over input chunks of up to 4 MiB (gzip
// members concatenated one after another, as `cat a.gz b.gz` makes, are read as one stream).
// Buffers are sized by the file: a 50-byte file costs 50-byte buffers, not megabytes (the idx
// fuzz target spent most of each execution zero-filling and unmapping 5 MiB of them).
#include "cnnstudio/datasets/compressed_file.h"

#include "cnnstudio/error.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace cnnstudio::datasets {

namespace {
constexpr std::size_t kInputChunkBytes = std::size_t(4) << 20;
// readDecompressedFile's first buffer when the expected size is tiny or unknown, and the buffer
// that checks a short read was the end.
constexpr std::size_t kMinReadChunkBytes = 4096;
constexpr std::size_t kEndProbeBytes = 4096;
// Deflate cannot expand data more than 1032-fold (a 258-byte match costs at least 2 bits), so a
// gzip trailer claiming more than that of the file's size is damaged and not to be trusted.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

std::string describeErrno() { return std::strerror(errno); }
}  // namespace

struct CompressedFileReader::State {
    std::filesystem::path path;
    std::FILE* file = nullptr;
    bool gzip = false;
    bool finished = false;       // no more content
    bool inflateReady = false;   // inflateInit2 succeeded (inflateEnd owed)
    z_stream stream{};
    std::vector<unsigned char> input;
    std::uint64_t fileBytes = 0;
    std::uint64_t trailerSize = 0;

    ~State() {
        if (inflateReady) inflateEnd(&stream);
        if (file) std::fclose(file);
    }

    Error failure(const std::string& what, const std::string& hint = {}) const {
        return Error(what, path.string(), hint);
    }

    // Refills stream.next_in; returns false at the end of the file.
    bool refill() {
        const std::size_t got = std::fread(input.data(), 1, input.size(), file);
        if (got == 0 && std::ferror(file)) throw failure("read failed: " + describeErrno());
        stream.next_in = input.data();
        stream.avail_in = static_cast<uInt>(got);
        return got > 0;
    }
};

CompressedFileReader::CompressedFileReader(std::filesystem::path path)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.path = std::move(path);
    s.file = std::fopen(s.path.c_str(), "rb");
    if (!s.file)
        throw s.failure("cannot open: " + describeErrno(), "check the path and its permissions");
    std::error_code ec;
    if (std::filesystem::is_directory(s.path, ec))
        throw s.failure("is a directory, expected a file");
    s.fileBytes = std::filesystem::file_size(s.path, ec);
    if (ec) s.fileBytes = 0;

    unsigned char magic[2] = {0, 0};
    const std::size_t magicBytes = std::fread(magic, 1, 2, s.file);
    s.gzip = magicBytes == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (s.gzip && s.fileBytes >= 18) {
        // ISIZE: the last four bytes of a gzip member, little-endian, content size mod 2^32.
        unsigned char trailer[4];
        if (std::fseek(s.file, -4, SEEK_END) == 0 && std::fread(trailer, 1, 4, s.file) == 4)
            s.trailerSize = std::uint64_t(trailer[0]) | std::uint64_t(trailer[1]) << 8 |
                            std::uint64_t(trailer[2]) << 16 | std::uint64_t(trailer[3]) << 24;
    }
    std::rewind(s.file);
    if (s.gzip) {
        // The whole file when it is smaller than a chunk (at least the 2 magic bytes it has;
        // an unknown size, 0, gets a whole chunk).
        const std::uint64_t inputBytes =
            s.fileBytes == 0 ? kInputChunkBytes : std::min<std::uint64_t>(s.fileBytes, kInputChunkBytes);
        s.input.resize(std::max<std::size_t>(std::size_t(inputBytes), 2));
        if (inflateInit2(&s.stream, 15 + 16) != Z_OK)  // 15 + 16: gzip wrapper only
            throw s.failure("zlib could not start inflating", "the process may be out of memory");
        s.inflateReady = true;
    }
}

CompressedFileReader::~CompressedFileReader() = default;

bool CompressedFileReader::isGzip() const { return state_->gzip; }
const std::filesystem::path& CompressedFileReader::path() const { return state_->path; }

std::uint64_t CompressedFileReader::expectedContentBytes() const {
    if (!state_->gzip) return state_->fileBytes;
    return std::min(state_->trailerSize, state_->fileBytes * kMaxDeflateRatio);
}

std::size_t CompressedFileReader::read(char* destination, std::size_t capacity) {
    State& s = *state_;
    if (s.finished || capacity == 0) return 0;
    if (!s.gzip) {
        const std::size_t got = std::fread(destination, 1, capacity, s.file);
        if (got == 0) {
            if (std::ferror(s.file)) throw s.failure("read failed: " + describeErrno());
            s.finished = true;
        }
        return got;
    }

    // zlib counts in uInt; stay well inside it.
    const std::size_t room = std::min<std::size_t>(capacity, std::size_t(1) << 30);
    s.stream.next_out = reinterpret_cast<unsigned char*>(destination);
    s.stream.avail_out = static_cast<uInt>(room);
    while (s.stream.avail_out > 0) {
        if (s.stream.avail_in == 0 && !s.refill())
            throw s.failure("gzip data ends early (the file is truncated)",
                            "download or copy the file again");
        const int status = inflate(&s.stream, Z_NO_FLUSH);
        if (status == Z_STREAM_END) {
            // Another gzip member may follow; anything else after the end is an error.
            if (s.stream.avail_in == 0 && !s.refill()) {
                s.finished = true;
                break;
            }
            if (s.stream.avail_in < 2 && s.stream.next_in[0] == 0x1f) {
                // The next member's magic straddles our input chunk; keep the first byte.
                const unsigned char first = s.stream.next_in[0];
                const std::size_t got = std::fread(s.input.data() + 1, 1, s.input.size() - 1, s.file);
                s.input[0] = first;
                s.stream.next_in = s.input.data();
                s.stream.avail_in = static_cast<uInt>(got + 1);
            }
            if (s.stream.avail_in < 2 || s.stream.next_in[0] != 0x1f || s.stream.next_in[1] != 0x8b)
                throw s.failure("unexpected bytes after the end of the gzip data",
                                "the file may be damaged; compress it again with gzip");
            inflateReset(&s.stream);
            continue;
        }
        if (status == Z_BUF_ERROR) continue;  // needs more input; refilled at the loop top
        if (status != Z_OK)
            throw s.failure(std::string("corrupt gzip data: ") +
                                (s.stream.msg ? s.stream.msg : "zlib error " + std::to_string(status)),
                            "download or copy the file again");
    }
    return room - s.stream.avail_out;
}

std::string readDecompressedFile(const std::filesystem::path& path) {
    CompressedFileReader reader(path);
    std::string content;
    // The expected size and one byte (a read that comes back short is at the end); an estimate
    // that proves short (several gzip members, a damaged trailer) grows the buffer by half of
    // what was read each time, from at least kMinReadChunkBytes.
    std::size_t chunk =
        std::max<std::size_t>(kMinReadChunkBytes, std::size_t(reader.expectedContentBytes()) + 1);
    for (;;) {
        const std::size_t used = content.size();
        content.resize(used + chunk);
        const std::size_t got = reader.read(content.data() + used, chunk);
        content.resize(used + got);
        if (got < chunk) {
            // Most likely the end: confirm it with a small read rather than growing the buffer.
            char probe[kEndProbeBytes];
            const std::size_t more = reader.read(probe, sizeof probe);
            if (more == 0) break;
            content.append(probe, more);
        }
        chunk = std::max(chunk, content.size() / 2);
    }
    return content;
}

}  // namespace cnnstudio::datasets
