#include "cnnstudio/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"

namespace cnnstudio {

// The format stores little-endian values; we copy floats and the header length as they are.
static_assert(std::endian::native == std::endian::little,
              "safetensors I/O copies raw little-endian bytes");

namespace {

constexpr std::uint64_t kMaximumHeaderBytes = 100'000'000;  // the reference implementation's limit
constexpr const char* kMetadataKey = "__metadata__";
// Each tensor's CRC32 (of its data bytes, 8 hex digits) is kept in the metadata under this prefix
// and the tensor's name, so that a byte flipped on disk is caught on reading and the tensor
// holding it named. Other readers (PyTorch) see plain string metadata and ignore it.
constexpr const char* kChecksumPrefix = "crc32:";

std::string crc32Hex(const char* data, std::size_t bytes) {
    uLong crc = crc32(0L, Z_NULL, 0);
    // zlib takes lengths as uInt: feed a large tensor in pieces.
    for (std::size_t done = 0; done < bytes;) {
        const std::size_t piece = std::min<std::size_t>(bytes - done, 1u << 30);
        crc = crc32(crc, reinterpret_cast<const Bytef*>(data + done), uInt(piece));
        done += piece;
    }
    char text[9];
    std::snprintf(text, sizeof text, "%08lx", static_cast<unsigned long>(crc));
    return text;
}

bool isChecksumKey(const std::string& key) { return key.rfind(kChecksumPrefix, 0) == 0; }

std::int64_t elementCount(const std::vector<std::int64_t>& shape) {
    std::int64_t count = 1;
    for (std::int64_t dimension : shape) count *= dimension;
    return count;
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

[[noreturn]] void corrupt(const std::filesystem::path& file, const std::string& what) {
    throw Error(what, file.string(),
                "the file is damaged or not a float32 safetensors file; write it again "
                "(or resume from another checkpoint)");
}

std::string readWholeFile(const std::filesystem::path& file) {
    std::ifstream stream(file, std::ios::binary);
    if (!stream) throw Error("cannot open the file", file.string(), "check that it exists and is readable");
    std::ostringstream contents;
    contents << stream.rdbuf();
    if (stream.bad()) throw Error("cannot read the file", file.string());
    return std::move(contents).str();
}

std::uint64_t nonNegativeInteger(const nlohmann::json& value, const std::filesystem::path& file,
                                 const std::string& what) {
    if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<std::int64_t>() < 0))
        corrupt(file, what + " is " + value.dump() + ", expected a non-negative integer");
    return value.get<std::uint64_t>();
}

}  // namespace

const NamedTensor* SafetensorsContents::find(const std::string& name) const {
    for (const auto& tensor : tensors)
        if (tensor.name == name) return &tensor;
    return nullptr;
}

void writeSafetensors(const std::filesystem::path& file, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
    nlohmann::json header = nlohmann::json::object();
    std::uint64_t offset = 0;
    for (const auto& tensor : tensors) {
        if (tensor.name.empty() || tensor.name == kMetadataKey)
            throw Error("a tensor may not be called '" + tensor.name + "'", file.string());
        if (header.contains(tensor.name))
            throw Error("tensor '" + tensor.name + "' appears twice", file.string(),
                        "give every parameter a unique name");
        for (std::int64_t dimension : tensor.shape)
            if (dimension < 0)
                throw Error("tensor '" + tensor.name + "' has a negative dimension in shape " +
                            shapeText(tensor.shape), file.string());
        if (std::int64_t(tensor.values.size()) != elementCount(tensor.shape))
            throw Error("tensor '" + tensor.name + "' has " + std::to_string(tensor.values.size()) +
                        " values but shape " + shapeText(tensor.shape), file.string());
        std::uint64_t bytes = tensor.values.size() * sizeof(float);
        header[tensor.name] = {{"dtype", "F32"}, {"shape", tensor.shape},
                               {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    nlohmann::json metadataJson = nlohmann::json::object();
    for (const auto& [key, value] : metadata) {
        if (isChecksumKey(key))
            throw Error("metadata key '" + key + "' is reserved for the tensors' checksums", file.string());
        metadataJson[key] = value;
    }
    for (const auto& tensor : tensors)
        metadataJson[kChecksumPrefix + tensor.name] =
            crc32Hex(reinterpret_cast<const char*>(tensor.values.data()), tensor.values.size() * sizeof(float));
    if (!metadataJson.empty()) header[kMetadataKey] = metadataJson;

    std::string headerText = header.dump();
    headerText.append((8 - headerText.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
    std::uint64_t headerLength = headerText.size();

    std::string contents;
    contents.reserve(8 + headerText.size() + offset);
    contents.append(reinterpret_cast<const char*>(&headerLength), 8);
    contents += headerText;
    for (const auto& tensor : tensors)
        contents.append(reinterpret_cast<const char*>(tensor.values.data()),
                        tensor.values.size() * sizeof(float));
    writeFileAtomically(file, contents);
}

SafetensorsContents readSafetensors(const std::filesystem::path& file) {
    const std::string contents = readWholeFile(file);
    if (contents.size() < 8)
        corrupt(file, "the file is " + std::to_string(contents.size()) +
                          " bytes, too short for a safetensors header");
    std::uint64_t headerLength = 0;
    std::memcpy(&headerLength, contents.data(), 8);
    if (headerLength > kMaximumHeaderBytes)
        corrupt(file, "the header claims " + std::to_string(headerLength) + " bytes (at most " +
                          std::to_string(kMaximumHeaderBytes) + " allowed)");
    if (headerLength > contents.size() - 8)
        corrupt(file, "the header claims " + std::to_string(headerLength) +
                          " bytes but the file has only " + std::to_string(contents.size() - 8) +
                          " after the length field");

    nlohmann::json header;
    try {
        header = nlohmann::json::parse(contents.substr(8, headerLength));
    } catch (const nlohmann::json::parse_error& error) {
        corrupt(file, std::string("the header is not valid JSON: ") + error.what());
    }
    if (!header.is_object()) corrupt(file, "the header is not a JSON object");

    const std::uint64_t dataBytes = contents.size() - 8 - headerLength;
    const char* data = contents.data() + 8 + headerLength;

    SafetensorsContents result;
    std::map<std::string, std::string> checksums;  // tensor name -> CRC32 recorded when written
    struct Extent {
        std::uint64_t begin, end;
        std::size_t tensor;
    };
    std::vector<Extent> extents;
    // The metadata first: the checksums in it are needed as each tensor is read.
    if (const auto entry = header.find(kMetadataKey); entry != header.end()) {
        if (!entry->is_object()) corrupt(file, "__metadata__ is not a JSON object");
        for (const auto& [key, value] : entry->items()) {
            if (!value.is_string()) corrupt(file, "__metadata__ entry '" + key + "' is not a string");
            if (isChecksumKey(key)) checksums[key.substr(std::strlen(kChecksumPrefix))] = value.get<std::string>();
            else result.metadata[key] = value.get<std::string>();
        }
    }
    for (const auto& [name, entry] : header.items()) {
        if (name == kMetadataKey) continue;
        const std::string where = "tensor '" + name + "'";
        if (!entry.is_object()) corrupt(file, where + " is not described by a JSON object");
        for (const char* key : {"dtype", "shape", "data_offsets"})
            if (!entry.contains(key)) corrupt(file, where + " has no " + key);
        if (!entry["dtype"].is_string()) corrupt(file, where + " has a dtype that is not a string");
        const std::string dtype = entry["dtype"].get<std::string>();
        if (dtype != "F32")
            throw Error(where + " has dtype " + dtype + "; CNN Studio reads float32 (F32) only",
                        file.string(), "convert the weights to float32 before loading them");
        if (!entry["shape"].is_array()) corrupt(file, where + " has a shape that is not an array");
        NamedTensor tensor;
        tensor.name = name;
        for (const auto& dimension : entry["shape"]) {
            std::uint64_t value = nonNegativeInteger(dimension, file, where + "'s shape entry");
            if (value > std::uint64_t(std::numeric_limits<std::int32_t>::max()))
                corrupt(file, where + " has an implausible dimension " + std::to_string(value));
            tensor.shape.push_back(std::int64_t(value));
        }
        const auto& offsets = entry["data_offsets"];
        if (!offsets.is_array() || offsets.size() != 2)
            corrupt(file, where + " needs data_offsets [begin, end]");
        std::uint64_t begin = nonNegativeInteger(offsets[0], file, where + "'s data begin");
        std::uint64_t end = nonNegativeInteger(offsets[1], file, where + "'s data end");
        if (begin > end || end > dataBytes)
            corrupt(file, where + " has data_offsets [" + std::to_string(begin) + ", " +
                              std::to_string(end) + "] outside the " + std::to_string(dataBytes) +
                              " bytes of data");
        std::uint64_t expected = std::uint64_t(elementCount(tensor.shape)) * sizeof(float);
        if (end - begin != expected)
            corrupt(file, where + " has shape " + shapeText(tensor.shape) + " (" +
                              std::to_string(expected) + " bytes) but data_offsets span " +
                              std::to_string(end - begin) + " bytes");
        // Files written before checksums were kept (or by other writers) have none to compare.
        if (const auto recorded = checksums.find(name); recorded != checksums.end()) {
            const std::string actual = crc32Hex(data + begin, expected);
            if (actual != recorded->second)
                corrupt(file, where + "'s data has CRC32 " + actual + " but " + recorded->second +
                                  " was recorded when it was written: bytes changed on disk since");
        }
        tensor.values.resize(std::size_t(expected / sizeof(float)));
        std::memcpy(tensor.values.data(), data + begin, expected);
        extents.push_back({begin, end, result.tensors.size()});
        result.tensors.push_back(std::move(tensor));
    }

    // The data section is the tensors back to back: no overlap, no gaps, nothing left over.
    std::sort(extents.begin(), extents.end(),
              [](const Extent& a, const Extent& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
    std::uint64_t covered = 0;
    for (const auto& extent : extents) {
        if (extent.begin != covered)
            corrupt(file, "tensor '" + result.tensors[extent.tensor].name + "' starts at byte " +
                              std::to_string(extent.begin) + " of the data, expected " +
                              std::to_string(covered) + " (tensors overlap or leave a gap)");
        covered = extent.end;
    }
    if (covered != dataBytes)
        corrupt(file, "the data section has " + std::to_string(dataBytes) + " bytes but the tensors cover " +
                          std::to_string(covered) + " (the file is truncated or has trailing bytes)");

    std::vector<NamedTensor> ordered;
    ordered.reserve(extents.size());
    for (const auto& extent : extents) ordered.push_back(std::move(result.tensors[extent.tensor]));
    result.tensors = std::move(ordered);
    return result;
}

}  // namespace cnnstudio
