// FER2013 CSV reader: splits, gzip detection, the message for each kind of bad row, skipBad,
// chunk boundaries, and the counts of the real shared file.
#include "cnnstudio/datasets/fer2013.h"

#include "cnnstudio/error.h"
#include "test_files.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>

namespace cnnstudio::datasets {
namespace {

using testing::TempDir;
using testing::gzipBytes;
using testing::writeFile;

constexpr const char* kHeader = "emotion,pixels,Usage\n";

std::vector<std::uint8_t> randomPixels(std::mt19937& rng, int count = kFer2013Pixels) {
    std::uniform_int_distribution<int> value(0, 255);
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(count));
    for (auto& p : pixels) p = std::uint8_t(value(rng));
    return pixels;
}

std::string pixelText(const std::vector<std::uint8_t>& pixels) {
    std::string text;
    for (std::size_t i = 0; i < pixels.size(); ++i) {
        if (i) text += ' ';
        text += std::to_string(pixels[i]);
    }
    return text;
}

std::string row(int label, const std::vector<std::uint8_t>& pixels, const std::string& usage) {
    return std::to_string(label) + "," + pixelText(pixels) + "," + usage + "\n";
}

// The error the loader throws for the file, or a test failure if it throws none.
Error loadError(const std::filesystem::path& path) {
    try {
        loadFer2013Csv(path);
    } catch (const Error& error) {
        return error;
    }
    ADD_FAILURE() << "no error for " << path;
    return Error("none");
}

TEST(Fer2013Csv, RowsGoToTheSplitOfTheirUsage) {
    const unsigned seed = 11;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const auto a = randomPixels(rng), b = randomPixels(rng), c = randomPixels(rng), d = randomPixels(rng);
    TempDir dir;
    writeFile(dir / "fer.csv", std::string(kHeader) + row(3, a, "Training") + row(0, b, "PublicTest") +
                                   row(6, c, "PrivateTest") + row(5, d, "Training"));
    const DatasetSplits splits = loadFer2013Csv(dir / "fer.csv");
    ASSERT_EQ(splits.train.size(), 2u);
    ASSERT_EQ(splits.validation.size(), 1u);
    ASSERT_EQ(splits.test.size(), 1u);
    EXPECT_EQ(splits.train.channels, 1);
    EXPECT_EQ(splits.train.height, 48);
    EXPECT_EQ(splits.train.width, 48);
    EXPECT_EQ(splits.train.labels, (std::vector<std::int32_t>{3, 5}));
    EXPECT_EQ(splits.validation.labels[0], 0);
    EXPECT_EQ(splits.test.labels[0], 6);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), splits.train.image(0).begin()));
    EXPECT_TRUE(std::equal(d.begin(), d.end(), splits.train.image(1).begin()));
    EXPECT_TRUE(std::equal(b.begin(), b.end(), splits.validation.image(0).begin()));
    EXPECT_TRUE(std::equal(c.begin(), c.end(), splits.test.image(0).begin()));
    EXPECT_EQ(splits.classNames, (std::vector<std::string>{"Angry", "Disgust", "Fear", "Happy", "Sad",
                                                           "Surprise", "Neutral"}));
    EXPECT_EQ(splits.skipped.count, 0u);
}

TEST(Fer2013Csv, GzipIsDetectedByMagicBytesNotByName) {
    std::mt19937 rng(12);
    const std::string csv = std::string(kHeader) + row(1, randomPixels(rng), "Training") +
                            row(2, randomPixels(rng), "PublicTest");
    TempDir dir;
    writeFile(dir / "compressed.csv", gzipBytes(csv));
    writeFile(dir / "plain.csv.gz", csv);
    const DatasetSplits fromGzip = loadFer2013Csv(dir / "compressed.csv");
    const DatasetSplits fromPlain = loadFer2013Csv(dir / "plain.csv.gz");
    EXPECT_EQ(fromGzip.train.images, fromPlain.train.images);
    EXPECT_EQ(fromGzip.validation.labels, fromPlain.validation.labels);
    EXPECT_EQ(fromGzip.train.size(), 1u);
}

// The size estimate is the last member's (one row), far short of the first member's 30 rows
// (~250 KB): the reader's chunks, sized by the estimate, must still carry all of it.
TEST(Fer2013Csv, ConcatenatedGzipMembersReadAsOneFile) {
    std::mt19937 rng(13);
    std::string first = kHeader;
    for (int i = 0; i < 30; ++i) first += row(i % 7, randomPixels(rng), "Training");
    TempDir dir;
    writeFile(dir / "two.csv.gz", gzipBytes(first) + gzipBytes(row(2, randomPixels(rng), "Training")));
    LoadOptions options;
    options.validationFraction = 0;
    const DatasetSplits splits = loadFer2013Csv(dir / "two.csv.gz", options);
    EXPECT_EQ(splits.train.size(), 31u);
    EXPECT_EQ(splits.train.labels.back(), 2);
}

TEST(Fer2013Csv, TruncatedGzipNamesTheFile) {
    std::mt19937 rng(14);
    const std::string gz = gzipBytes(std::string(kHeader) + row(1, randomPixels(rng), "Training"));
    TempDir dir;
    writeFile(dir / "cut.csv.gz", gz.substr(0, gz.size() / 2));
    const Error error = loadError(dir / "cut.csv.gz");
    EXPECT_NE(std::string(error.what()).find("cut.csv.gz"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
}

TEST(Fer2013Csv, AcceptsCrlfQuotesReorderedColumnsAndNoFinalNewline) {
    std::mt19937 rng(15);
    const auto a = randomPixels(rng), b = randomPixels(rng);
    TempDir dir;
    writeFile(dir / "odd.csv", "\xEF\xBB\xBFUsage,emotion,pixels\r\n"
                               "Training,4,\"" + pixelText(a) + "\"\r\n\r\n"
                               "PublicTest,2," + pixelText(b));
    const DatasetSplits splits = loadFer2013Csv(dir / "odd.csv");
    ASSERT_EQ(splits.train.size(), 1u);
    ASSERT_EQ(splits.validation.size(), 1u);
    EXPECT_EQ(splits.train.labels[0], 4);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), splits.train.image(0).begin()));
    EXPECT_TRUE(std::equal(b.begin(), b.end(), splits.validation.image(0).begin()));
}

struct BadRowCase {
    const char* name;
    std::string badRow;       // written as line 3, after the header and one good row
    const char* expectedText;  // part of the message after "fer2013.csv:3: "
};

class Fer2013BadRow : public ::testing::TestWithParam<BadRowCase> {};

TEST_P(Fer2013BadRow, MessageNamesFileLineAndProblem) {
    std::mt19937 rng(16);
    TempDir dir;
    const auto path = dir / "fer2013.csv";
    writeFile(path, std::string(kHeader) + row(0, randomPixels(rng), "Training") + GetParam().badRow +
                        row(1, randomPixels(rng), "Training"));
    const Error error = loadError(path);
    EXPECT_EQ(error.where(), path.string() + ":3");
    EXPECT_NE(error.reason().find(GetParam().expectedText), std::string::npos)
        << "message: " << error.what() << "\nexpected to contain: " << GetParam().expectedText;
    EXPECT_NE(std::string(error.what()).find("fer2013.csv:3: "), std::string::npos) << error.what();
    EXPECT_NE(error.hint().find("--skip-bad"), std::string::npos) << "the hint names the flag: " << error.hint();
}

std::vector<BadRowCase> badRows() {
    std::mt19937 rng(17);
    const std::string good = pixelText(randomPixels(rng));
    const std::string short_ = pixelText(randomPixels(rng, kFer2013Pixels - 1));
    const std::string long_ = pixelText(randomPixels(rng, kFer2013Pixels + 1));
    return {
        {"TooFewPixels", "2," + short_ + ",Training\n", "2303 pixels, expected 2304"},
        {"TooManyPixels", "2," + long_ + ",Training\n", "2305 pixels, expected 2304"},
        {"PixelAbove255", "2,256 " + good.substr(good.find(' ') + 1) + ",Training\n", "pixel 1 is 256, must be 0..255"},
        {"PixelWithFourDigits", "2,1000 " + good.substr(good.find(' ') + 1) + ",Training\n", "pixel 1 has more than 3 digits"},
        {"NegativePixel", "2,-1 " + good.substr(good.find(' ') + 1) + ",Training\n", "unexpected character '-' after pixel 0"},
        {"LabelOutOfRange", "7," + good + ",Training\n", "emotion 7 is out of range 0..6"},
        {"LabelNotANumber", "x," + good + ",Training\n", "emotion 'x' is not a label 0..6"},
        {"EmptyLabel", "," + good + ",Training\n", "empty emotion field"},
        {"UnknownUsage", "2," + good + ",Validation\n", "unknown Usage 'Validation'"},
        {"MissingUsage", "2," + good + "\n", "too few fields: 2, expected 3"},
        {"ExtraField", "2," + good + ",Training,extra\n", "too many fields: 4, expected 3"},
        {"LetterInPixels", "2,12 a4 " + good + ",Training\n", "unexpected character 'a' after pixel 1"},
    };
}

INSTANTIATE_TEST_SUITE_P(Cases, Fer2013BadRow, ::testing::ValuesIn(badRows()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Fer2013Csv, MissingHeaderIsReportedOnLine1) {
    std::mt19937 rng(18);
    TempDir dir;
    writeFile(dir / "noheader.csv", row(0, randomPixels(rng), "Training"));
    const Error error = loadError(dir / "noheader.csv");
    EXPECT_EQ(error.where(), (dir / "noheader.csv").string() + ":1");
    EXPECT_NE(error.reason().find("missing header"), std::string::npos) << error.what();
}

TEST(Fer2013Csv, HeaderWithoutPixelsColumnIsRejected) {
    TempDir dir;
    writeFile(dir / "wrong.csv", "emotion,image,Usage\n");
    const Error error = loadError(dir / "wrong.csv");
    EXPECT_NE(error.reason().find("lacks the 'pixels' column"), std::string::npos) << error.what();
}

TEST(Fer2013Csv, EmptyFileAndMissingFileAreErrors) {
    TempDir dir;
    writeFile(dir / "empty.csv", "");
    EXPECT_NE(loadError(dir / "empty.csv").reason().find("empty"), std::string::npos);
    const Error missing = loadError(dir / "absent.csv");
    EXPECT_NE(std::string(missing.what()).find("absent.csv"), std::string::npos) << missing.what();
}

TEST(Fer2013Csv, SkipBadSkipsAndCountsBadRowsWithTheirMessages) {
    std::mt19937 rng(19);
    TempDir dir;
    const auto path = dir / "mixed.csv";
    std::string csv = kHeader;
    csv += row(0, randomPixels(rng), "Training");                             // line 2
    csv += "9," + pixelText(randomPixels(rng)) + ",Training\n";               // line 3: label
    csv += row(1, randomPixels(rng), "Training");                             // line 4
    csv += "2," + pixelText(randomPixels(rng, 100)) + ",Training\n";          // line 5: pixels
    csv += row(2, randomPixels(rng), "PublicTest");                           // line 6
    csv += "3," + pixelText(randomPixels(rng)) + ",Elsewhere\n";              // line 7: usage
    writeFile(path, csv);
    LoadOptions options;
    options.skipBad = true;
    const DatasetSplits splits = loadFer2013Csv(path, options);
    EXPECT_EQ(splits.train.size(), 2u);
    EXPECT_EQ(splits.validation.size(), 1u);
    EXPECT_EQ(splits.train.labels, (std::vector<std::int32_t>{0, 1}));
    ASSERT_EQ(splits.skipped.count, 3u);
    ASSERT_EQ(splits.skipped.firstMessages.size(), 3u);
    EXPECT_EQ(splits.skipped.firstMessages[0], path.string() + ":3: emotion 9 is out of range 0..6");
    EXPECT_EQ(splits.skipped.firstMessages[1], path.string() + ":5: 100 pixels, expected 2304");
    EXPECT_NE(splits.skipped.firstMessages[2].find(":7: unknown Usage 'Elsewhere'"), std::string::npos);
}

TEST(Fer2013Csv, SkipBadKeepsOnlyTheFirstMessagesButCountsAll) {
    std::mt19937 rng(20);
    TempDir dir;
    std::string csv = std::string(kHeader) + row(0, randomPixels(rng), "Training");
    for (int i = 0; i < 25; ++i) csv += "8," + pixelText(randomPixels(rng, 3)) + ",Training\n";
    writeFile(dir / "many.csv", csv);
    LoadOptions options;
    options.skipBad = true;
    options.validationFraction = 0;
    const DatasetSplits splits = loadFer2013Csv(dir / "many.csv", options);
    EXPECT_EQ(splits.train.size(), 1u);
    EXPECT_EQ(splits.skipped.count, 25u);
    EXPECT_EQ(splits.skipped.firstMessages.size(), SkippedInput::kMessagesKept);
}

// loadFer2013Csv reads 8 MiB chunks: a 10 MB file puts rows across chunk boundaries, which
// must give exactly what parsing the whole text at once gives, plain and gzipped.
TEST(Fer2013Csv, RowsAcrossChunkBoundariesParseLikeOneBuffer) {
    const unsigned seed = 21;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::string csv = kHeader;
    const char* usages[] = {"Training", "Training", "Training", "PublicTest", "PrivateTest"};
    for (int i = 0; i < 1200; ++i) csv += row(i % 7, randomPixels(rng), usages[i % 5]);
    TempDir dir;
    writeFile(dir / "big.csv", csv);
    writeFile(dir / "big.csv.gz", gzipBytes(csv, 1));
    const DatasetSplits reference = parseFer2013Csv(csv, "big.csv", false);
    ASSERT_EQ(reference.train.size(), 720u);
    for (const char* name : {"big.csv", "big.csv.gz"}) {
        SCOPED_TRACE(name);
        const DatasetSplits loaded = loadFer2013Csv(dir / name);
        EXPECT_EQ(loaded.train.images, reference.train.images);
        EXPECT_EQ(loaded.train.labels, reference.train.labels);
        EXPECT_EQ(loaded.validation.images, reference.validation.images);
        EXPECT_EQ(loaded.test.labels, reference.test.labels);
    }
}

TEST(Fer2013Csv, WithoutPublicTestRowsValidationIsHeldOutOfTrain) {
    std::mt19937 rng(22);
    std::string csv = kHeader;
    for (int i = 0; i < 50; ++i) csv += row(i % 7, randomPixels(rng), "Training");
    TempDir dir;
    writeFile(dir / "train_only.csv", csv);
    LoadOptions options;
    options.validationFraction = 0.2;
    options.seed = 5;
    const DatasetSplits a = loadFer2013Csv(dir / "train_only.csv", options);
    const DatasetSplits b = loadFer2013Csv(dir / "train_only.csv", options);
    EXPECT_EQ(a.train.size(), 40u);
    EXPECT_EQ(a.validation.size(), 10u);
    EXPECT_EQ(a.validation.images, b.validation.images);  // the same seed holds out the same rows
    options.limit = 7;
    EXPECT_EQ(loadFer2013Csv(dir / "train_only.csv", options).train.size(), 7u);
}

// FER2013 is not ours to ship (README, "FER2013"): this test reads a copy named by the
// environment variable CNNSTUDIO_FER2013_CSV (Kaggle's file with Training and PublicTest rows).
TEST(Fer2013Csv, RealFileHasThePublishedCountsPerSplitAndClass) {
    const char* named = std::getenv("CNNSTUDIO_FER2013_CSV");
    if (named == nullptr || *named == '\0')
        GTEST_SKIP() << "set CNNSTUDIO_FER2013_CSV to a fer2013.csv (plain or gzipped) to run this test";
    const std::filesystem::path path(named);
    ASSERT_TRUE(std::filesystem::exists(path)) << "CNNSTUDIO_FER2013_CSV names " << path << ", which does not exist";
    const DatasetSplits splits = loadFer2013Csv(path);
    EXPECT_EQ(splits.train.size(), 28709u);
    EXPECT_EQ(splits.validation.size(), 3589u);
    EXPECT_EQ(splits.test.size(), 0u);  // PrivateTest is held back from development
    EXPECT_EQ(splits.train.classCounts(7),
              (std::vector<std::size_t>{3995, 436, 4097, 7215, 4830, 3171, 4965}));
    EXPECT_EQ(splits.validation.classCounts(7),
              (std::vector<std::size_t>{467, 56, 496, 895, 653, 415, 607}));
    // The first row as commonly quoted: "0,70 80 82 72 58 ..."
    EXPECT_EQ(splits.train.labels[0], 0);
    const auto first = splits.train.image(0);
    EXPECT_EQ((std::vector<int>{first[0], first[1], first[2], first[3], first[4]}),
              (std::vector<int>{70, 80, 82, 72, 58}));
    EXPECT_EQ(splits.skipped.count, 0u);
}

}  // namespace
}  // namespace cnnstudio::datasets
