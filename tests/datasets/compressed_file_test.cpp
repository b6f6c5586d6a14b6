// CompressedFileReader: plain pass-through, gzip by magic bytes, and damaged gzip files.
#include "cnnstudio/datasets/compressed_file.h"

#include "cnnstudio/error.h"
#include "test_files.h"

#include <gtest/gtest.h>

#include <random>

namespace cnnstudio::datasets {
namespace {

using testing::TempDir;
using testing::gzipBytes;
using testing::writeFile;

std::string randomText(unsigned seed, std::size_t bytes) {
    std::mt19937 rng(seed);
    std::string text(bytes, ' ');
    for (char& c : text) c = char('a' + rng() % 8);  // compressible, like CSV digits
    return text;
}

std::string errorText(const std::filesystem::path& path) {
    try {
        readDecompressedFile(path);
    } catch (const Error& error) {
        return error.what();
    }
    return "no error";
}

TEST(CompressedFile, PlainAndGzipGiveTheSameContentAndSizeHint) {
    const std::string text = randomText(71, 3'000'000);
    TempDir dir;
    writeFile(dir / "plain", text);
    writeFile(dir / "packed", gzipBytes(text));
    EXPECT_EQ(readDecompressedFile(dir / "plain"), text);
    EXPECT_EQ(readDecompressedFile(dir / "packed"), text);
    CompressedFileReader packed(dir / "packed"), plain(dir / "plain");
    EXPECT_TRUE(packed.isGzip());
    EXPECT_FALSE(plain.isGzip());
    EXPECT_EQ(packed.expectedContentBytes(), text.size());
    EXPECT_EQ(plain.expectedContentBytes(), text.size());
}

TEST(CompressedFile, SmallReadsReassembleTheContent) {
    const std::string text = randomText(72, 100'000);
    TempDir dir;
    writeFile(dir / "packed", gzipBytes(text));
    CompressedFileReader reader(dir / "packed");
    std::string out;
    char buffer[777];
    for (std::size_t got; (got = reader.read(buffer, sizeof buffer)) > 0;) out.append(buffer, got);
    EXPECT_EQ(out, text);
    EXPECT_EQ(reader.read(buffer, sizeof buffer), 0u);  // stays at the end
}

TEST(CompressedFile, CorruptDataNamesTheFile) {
    std::string packed = gzipBytes(randomText(73, 200'000));
    for (std::size_t i = 100; i < 140; ++i) packed[i] = char(~packed[i]);
    TempDir dir;
    writeFile(dir / "damaged.gz", packed);
    const std::string message = errorText(dir / "damaged.gz");
    EXPECT_NE(message.find("damaged.gz"), std::string::npos) << message;
    EXPECT_NE(message.find("corrupt gzip data"), std::string::npos) << message;
}

TEST(CompressedFile, GarbageAfterTheGzipDataIsAnError) {
    TempDir dir;
    writeFile(dir / "tail.gz", gzipBytes("hello\n") + "trailing junk");
    const std::string message = errorText(dir / "tail.gz");
    EXPECT_NE(message.find("unexpected bytes after the end of the gzip data"), std::string::npos) << message;
}

// Found by tests/fuzz/idx_fuzz: a 30-byte gzip file whose trailer claimed 4 GiB made the reader
// allocate 4 GiB before finding the data truncated.
TEST(CompressedFile, DamagedSizeTrailerIsNotTrusted) {
    std::string packed = gzipBytes(randomText(5, 100));
    for (std::size_t i = packed.size() - 4; i < packed.size(); ++i) packed[i] = char(0xff);  // 4 GiB - 1
    TempDir dir;
    writeFile(dir / "packed", packed);
    EXPECT_LE(CompressedFileReader(dir / "packed").expectedContentBytes(), packed.size() * 1032);
    EXPECT_NE(errorText(dir / "packed").find((dir / "packed").string()), std::string::npos)
        << "zlib's length check names the file";
}

// The buffers are sized by the file, so sizes around the sizing steps (nothing, the 2 gzip magic
// bytes, the first 4 KiB buffer) must read whole, plain and gzip.
TEST(CompressedFile, FilesOfEverySizeReadWhole) {
    TempDir dir;
    for (std::size_t bytes : {0, 1, 2, 51, 4095, 4096, 4097, 9000, 1'500'000}) {
        const std::string text = randomText(unsigned(bytes), bytes);
        writeFile(dir / "plain", text);
        writeFile(dir / "packed", gzipBytes(text));
        EXPECT_EQ(readDecompressedFile(dir / "plain"), text) << bytes << " bytes";
        EXPECT_EQ(readDecompressedFile(dir / "packed"), text) << bytes << " bytes, gzip";
    }
}

// `cat big.gz small.gz`: the trailer gives only the last member's size, far short of the content,
// so the buffer must keep growing past the estimate.
TEST(CompressedFile, ConcatenatedMembersOutgrowTheSizeEstimate) {
    const std::string big = randomText(74, 300'000);
    TempDir dir;
    writeFile(dir / "joined.gz", gzipBytes(big) + gzipBytes("tail\n"));
    EXPECT_EQ(CompressedFileReader(dir / "joined.gz").expectedContentBytes(), 5u);
    EXPECT_EQ(readDecompressedFile(dir / "joined.gz"), big + "tail\n");
}

TEST(CompressedFile, MissingFileAndDirectoryAreErrors) {
    TempDir dir;
    EXPECT_NE(errorText(dir / "absent").find("cannot open"), std::string::npos);
    EXPECT_NE(errorText(dir.path()).find("is a directory"), std::string::npos);
}

}  // namespace
}  // namespace cnnstudio::datasets
