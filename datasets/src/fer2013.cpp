// FER2013 CSV reader. Rows are split on '\n' with memchr and pixels parsed by a hand-rolled
// loop over the bytes (no streams, no std::stoi): the text of the full data set is ~300 MB,
// and the reader must not be what a user waits for. Every line the loop reads ends in a byte
// that is neither digit nor space ('\n', '\r', or one we supply), so the digit loops need no
// bounds checks.
#include "cnnstudio/datasets/fer2013.h"

#include "background_chunk_reader.h"
#include "cnnstudio/error.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>

namespace cnnstudio::datasets {

namespace {

constexpr std::string_view kHeaderHint = "emotion,pixels,Usage";
constexpr std::size_t kChunkBytes = std::size_t(8) << 20;
constexpr std::size_t kLongestLineBytes = std::size_t(64) << 20;

enum class Split { Train, Validation, Test };

std::string quoted(std::string_view text) {
    constexpr std::size_t kShown = 40;
    std::string shown(text.substr(0, kShown));
    if (text.size() > kShown) shown += "...";
    return "'" + shown + "'";
}

std::string_view trimmed(std::string_view field) {
    while (!field.empty() && (field.front() == ' ' || field.front() == '"')) field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '"')) field.remove_suffix(1);
    return field;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

class FerCsvParser {
public:
    FerCsvParser(std::string sourceName, bool skipBad, DatasetSplits& out)
        : source_(std::move(sourceName)), skipBad_(skipBad), out_(out) {
        out_.classNames = fer2013ClassNames();
        for (Dataset* split : {&out_.train, &out_.validation, &out_.test}) {
            split->channels = 1;
            split->height = kFer2013Side;
            split->width = kFer2013Side;
        }
    }

    // Parses the lines in [begin, end). end points at the '\n' closing the last line, or
    // at a readable non-digit, non-space byte just past it.
    void parseLines(const char* begin, const char* end) {
        const char* line = begin;
        while (line < end) {
            const char* newline = static_cast<const char*>(std::memchr(line, '\n', std::size_t(end - line)));
            const char* lineEnd = newline ? newline : end;
            parseLine(line, lineEnd);
            line = lineEnd + 1;
        }
    }

    void finish() {
        if (!headerSeen_)
            throw Error("the file is empty: no header and no rows", source_,
                        "a FER2013 CSV starts with the line " + std::string(kHeaderHint));
    }

private:
    void parseLine(const char* line, const char* lineEnd) {
        ++lineNumber_;
        if (lineEnd > line && lineEnd[-1] == '\r') --lineEnd;  // CRLF files
        if (lineEnd == line) return;                            // blank lines carry nothing
        if (!headerSeen_) {
            parseHeader(std::string_view(line, std::size_t(lineEnd - line)));
            headerSeen_ = true;
            return;
        }
        if (std::optional<std::string> problem = parseRow(line, lineEnd)) {
            const std::string where = source_ + ":" + std::to_string(lineNumber_);
            if (!skipBad_)
                throw UnreadableInputError(*problem, where, "fix or remove the row", "bad rows");
            out_.skipped.record(where + ": " + *problem);
        }
    }

    void parseHeader(std::string_view header) {
        if (lineNumber_ == 1 && header.starts_with("\xEF\xBB\xBF")) header.remove_prefix(3);  // BOM
        const std::string where = source_ + ":" + std::to_string(lineNumber_);
        const std::string_view firstField = trimmed(header.substr(0, header.find(',')));
        if (!firstField.empty() && std::isdigit(static_cast<unsigned char>(firstField.front())))
            throw Error("missing header: the first line is a data row",
                        where, "the file must start with the line " + std::string(kHeaderHint));
        int column = 0;
        for (std::size_t start = 0;; ++column) {
            const std::size_t comma = header.find(',', start);
            const std::string_view name = trimmed(header.substr(start, comma - start));
            if (equalsIgnoringCase(name, "emotion")) emotionColumn_ = column;
            else if (equalsIgnoringCase(name, "pixels")) pixelsColumn_ = column;
            else if (equalsIgnoringCase(name, "usage")) usageColumn_ = column;
            if (comma == std::string_view::npos) break;
            start = comma + 1;
        }
        columnCount_ = column + 1;
        if (emotionColumn_ < 0 || pixelsColumn_ < 0)
            throw Error("header " + quoted(header) + " lacks the " +
                            (emotionColumn_ < 0 ? "'emotion'" : "'pixels'") + " column",
                        where, "the file must start with the line " + std::string(kHeaderHint));
    }

    // Returns what is wrong with the row, or nothing when it was stored.
    std::optional<std::string> parseRow(const char* line, const char* lineEnd) {
        int label = -1;
        Split split = Split::Train;
        const char* p = line;
        for (int column = 0; column < columnCount_; ++column) {
            if (column > 0) {
                if (p == lineEnd)
                    return "too few fields: " + std::to_string(column) + ", expected " +
                           std::to_string(columnCount_);
                ++p;  // the ','
            }
            const bool isQuoted = p < lineEnd && *p == '"';
            if (isQuoted) ++p;
            const char* fieldEnd = p;
            if (column == pixelsColumn_) {
                std::optional<std::string> problem = parsePixels(p, lineEnd, fieldEnd);
                if (problem) return problem;
            } else {
                fieldEnd = p;
                while (fieldEnd < lineEnd && *fieldEnd != ',' && *fieldEnd != '"') ++fieldEnd;
                const std::string_view field = trimmed(std::string_view(p, std::size_t(fieldEnd - p)));
                if (column == emotionColumn_) {
                    std::optional<std::string> problem = parseLabel(field, label);
                    if (problem) return problem;
                } else if (column == usageColumn_) {
                    if (field == "Training") split = Split::Train;
                    else if (field == "PublicTest") split = Split::Validation;
                    else if (field == "PrivateTest") split = Split::Test;
                    else
                        return "unknown Usage " + quoted(field) +
                               ", expected Training, PublicTest or PrivateTest";
                }
            }
            if (isQuoted) {
                if (fieldEnd == lineEnd || *fieldEnd != '"')
                    return "unterminated quote in field " + std::to_string(column + 1);
                ++fieldEnd;
            }
            p = fieldEnd;
            if (p != lineEnd && *p != ',')
                return "unexpected character " + quoted(std::string_view(p, 1)) + " in field " +
                       std::to_string(column + 1);
        }
        if (p != lineEnd) {
            const auto fields = 1 + std::count(line, lineEnd, ',');
            return "too many fields: " + std::to_string(fields) + ", expected " +
                   std::to_string(columnCount_);
        }
        Dataset& target = split == Split::Train        ? out_.train
                          : split == Split::Validation ? out_.validation
                                                       : out_.test;
        target.append(row_, label);
        return std::nullopt;
    }

    static std::optional<std::string> parseLabel(std::string_view field, int& label) {
        if (field.empty()) return "empty emotion field";
        int value = 0;
        for (char c : field) {
            if (c < '0' || c > '9' || value > 1000)
                return "emotion " + quoted(field) + " is not a label 0..6";
            value = value * 10 + (c - '0');
        }
        if (value > 6) return "emotion " + std::to_string(value) + " is out of range 0..6";
        label = value;
        return std::nullopt;
    }

    // The hot loop: 2304 numbers of 1-3 digits separated by single spaces. Stops at the first
    // byte that is neither digit nor space (',', '"', or the line's end).
    std::optional<std::string> parsePixels(const char* p, const char* lineEnd, const char*& fieldEnd) {
        std::size_t count = 0;
        std::uint8_t* out = row_.data();
        for (;;) {
            while (*p == ' ') ++p;
            unsigned value = unsigned(*p) - '0';
            if (value > 9) break;
            ++p;
            unsigned digit = unsigned(*p) - '0';
            if (digit <= 9) {
                value = value * 10 + digit;
                ++p;
                digit = unsigned(*p) - '0';
                if (digit <= 9) {
                    value = value * 10 + digit;
                    ++p;
                    if (unsigned(*p) - '0' <= 9)
                        return "pixel " + std::to_string(count + 1) + " has more than 3 digits";
                }
            }
            if (value > 255)
                return "pixel " + std::to_string(count + 1) + " is " + std::to_string(value) +
                       ", must be 0..255";
            if (count < std::size_t(kFer2013Pixels)) out[count] = std::uint8_t(value);
            ++count;
        }
        fieldEnd = p;
        if (p != lineEnd && *p != ',' && *p != '"')
            return "unexpected character " + quoted(std::string_view(p, 1)) + " after pixel " +
                   std::to_string(count);
        if (count != std::size_t(kFer2013Pixels))
            return std::to_string(count) + " pixels, expected " + std::to_string(kFer2013Pixels);
        return std::nullopt;
    }

    std::string source_;
    bool skipBad_;
    DatasetSplits& out_;
    std::size_t lineNumber_ = 0;
    bool headerSeen_ = false;
    int emotionColumn_ = -1, pixelsColumn_ = -1, usageColumn_ = -1, columnCount_ = 0;
    std::array<std::uint8_t, kFer2013Pixels> row_{};
};

// Feeds text that arrives in arbitrary pieces to the parser as whole lines: the body of each
// piece is parsed in place, and only the line cut by a piece boundary is copied.
class LineAssembler {
public:
    explicit LineAssembler(FerCsvParser& parser, std::string sourceName)
        : parser_(parser), source_(std::move(sourceName)) {}

    void feed(std::string_view piece) {
        const char* begin = piece.data();
        const char* end = begin + piece.size();
        if (!partial_.empty()) {
            const char* newline = static_cast<const char*>(std::memchr(begin, '\n', piece.size()));
            if (!newline) {
                appendPartial(begin, end);
                return;
            }
            appendPartial(begin, newline + 1);
            parser_.parseLines(partial_.data(), partial_.data() + partial_.size() - 1);
            partial_.clear();
            begin = newline + 1;
        }
        const char* lastNewline = lastNewlineIn(begin, end);
        if (lastNewline) parser_.parseLines(begin, lastNewline);
        appendPartial(lastNewline ? lastNewline + 1 : begin, end);
    }

    // The last line may lack its '\n'; supply it so the parser sees a terminated line.
    void finish() {
        if (!partial_.empty()) {
            partial_.push_back('\n');
            parser_.parseLines(partial_.data(), partial_.data() + partial_.size() - 1);
            partial_.clear();
        }
        parser_.finish();
    }

private:
    static const char* lastNewlineIn(const char* begin, const char* end) {
        for (const char* p = end; p > begin; --p)
            if (p[-1] == '\n') return p - 1;
        return nullptr;
    }
    void appendPartial(const char* begin, const char* end) {
        partial_.append(begin, end);
        if (partial_.size() > kLongestLineBytes)
            throw Error("a line is longer than 64 MiB", source_,
                        "this does not look like a FER2013 CSV (one face per line, ~9 KB)");
    }

    FerCsvParser& parser_;
    std::string source_;
    std::string partial_;
};

}  // namespace

const std::vector<std::string>& fer2013ClassNames() {
    static const std::vector<std::string> names = {"Angry", "Disgust",  "Fear",   "Happy",
                                                   "Sad",   "Surprise", "Neutral"};
    return names;
}

DatasetSplits parseFer2013Csv(std::string_view text, std::string_view sourceName, bool skipBad) {
    DatasetSplits splits;
    FerCsvParser parser(std::string(sourceName), skipBad, splits);
    LineAssembler lines(parser, std::string(sourceName));
    lines.feed(text);
    lines.finish();
    splits.description = "FER2013 CSV " + std::string(sourceName);
    return splits;
}

DatasetSplits loadFer2013Csv(const std::filesystem::path& path, const LoadOptions& options) {
    DatasetSplits splits;
    const std::string source = path.string();
    {
        BackgroundChunkReader chunks(path, kChunkBytes, 3);
        FerCsvParser parser(source, options.skipBad, splits);
        // ~8.4 KB of text per row; reserving avoids regrowing the largest split.
        const std::size_t expectedRows = std::size_t(chunks.expectedContentBytes() / 8000);
        splits.train.images.reserve(expectedRows * kFer2013Pixels);
        splits.train.labels.reserve(expectedRows);
        LineAssembler lines(parser, source);
        for (std::span<const char> chunk = chunks.next(); !chunk.empty(); chunk = chunks.next())
            lines.feed(std::string_view(chunk.data(), chunk.size()));
        lines.finish();
    }
    splits.train.images.shrink_to_fit();
    splits.train.labels.shrink_to_fit();
    if (splits.train.empty())
        throw Error("no training rows", source,
                    "a FER2013 CSV needs rows whose Usage is Training (or no Usage column)");
    splits.description = "FER2013 CSV " + source;
    if (splits.validation.empty() && options.validationFraction > 0) {
        splits.validation = holdOut(splits.train, options.validationFraction, options.seed);
        splits.description += " (no PublicTest rows: validation held out of Training)";
    }
    applyLimit(splits, options.limit);
    return splits;
}

}  // namespace cnnstudio::datasets
