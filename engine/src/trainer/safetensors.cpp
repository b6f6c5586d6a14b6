#include "cnnstudio/safetensors.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"
#include "cnnstudio/json_text.h"
#include "trainer/whole_file.h"

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

// The float32 bytes of a tensor of `shape`, or nothing when that is more than `limit` (a
// damaged shape's product may not even fit in 64 bits).
// The bytes of a tensor of `shape` with `valueBytes` per element, or nothing when past `limit`
// (checked before every multiplication, so no shape can overflow it).
std::optional<std::uint64_t> tensorBytes(const std::vector<std::int64_t>& shape, std::uint64_t valueBytes,
                                         std::uint64_t limit) {
    std::uint64_t bytes = valueBytes;
    for (std::int64_t dimension : shape) {
        if (dimension == 0) return 0;
        if (bytes > limit / std::uint64_t(dimension)) return std::nullopt;
        bytes *= std::uint64_t(dimension);
    }
    return bytes <= limit ? std::optional<std::uint64_t>(bytes) : std::nullopt;
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

std::uint64_t nonNegativeInteger(const nlohmann::json& value, const std::filesystem::path& file,
                                 const std::string& what) {
    if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<std::int64_t>() < 0))
        corrupt(file, what + " is " + describeJsonValue(value) + ", expected a non-negative integer");
    return value.get<std::uint64_t>();
}

const char* dtypeName(WeightsDtype dtype) {
    switch (dtype) {
    case WeightsDtype::F32: return "F32";
    case WeightsDtype::BF16: return "BF16";
    case WeightsDtype::F16: return "F16";
    }
    return "F32";
}

std::size_t bytesPerValue(WeightsDtype dtype) { return dtype == WeightsDtype::F32 ? 4 : 2; }

}  // namespace

WeightsDtype parseWeightsDtype(const std::string& text) {
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (lower == "f32" || lower == "fp32") return WeightsDtype::F32;
    if (lower == "bf16") return WeightsDtype::BF16;
    if (lower == "f16" || lower == "fp16") return WeightsDtype::F16;
    throw Error("unknown weights dtype '" + text + "'", "weights dtype", "use fp32, bf16 or fp16");
}

std::uint16_t floatToBfloat16(float value) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((bits >> 16) | 0x40u);  // quiet NaN
    return std::uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

float bfloat16ToFloat(std::uint16_t bits) { return std::bit_cast<float>(std::uint32_t(bits) << 16); }

// IEEE 754 binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
std::uint16_t floatToFloat16(float value) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const std::uint16_t sign = std::uint16_t((bits >> 16) & 0x8000u);
    const std::uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return std::uint16_t(sign | 0x7e00u);  // NaN
    if (magnitude >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // rounds beyond 65504: infinity
    if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
        // value = mantissa * 2^-24 exactly in float arithmetic, rounded to nearest even by the FPU.
        const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // * 2^24
        return std::uint16_t(sign | std::uint16_t(std::nearbyint(scaled)));
    }
    // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits, to even.
    const std::uint32_t rebased = magnitude - (112u << 23);
    const std::uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
    return std::uint16_t(sign | (rounded >> 13));
}

float float16ToFloat(std::uint16_t bits) {
    const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
        const float value = float(mantissa) / 16777216.0f;
        return sign ? -value : value;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

const NamedTensor* SafetensorsContents::find(const std::string& name) const {
    for (const auto& tensor : tensors)
        if (tensor.name == name) return &tensor;
    return nullptr;
}

namespace {

// A tensor's values as the file stores them: little-endian float32, or bfloat16/float16 bits.
std::string storedBytes(const std::vector<float>& values, WeightsDtype dtype) {
    if (dtype == WeightsDtype::F32)
        return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    std::string bytes;
    bytes.reserve(values.size() * 2);
    for (float value : values) {
        const std::uint16_t half = dtype == WeightsDtype::BF16 ? floatToBfloat16(value) : floatToFloat16(value);
        bytes.append(reinterpret_cast<const char*>(&half), sizeof half);
    }
    return bytes;
}

}  // namespace

void writeSafetensors(const std::filesystem::path& file, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata, WeightsDtype dtype) {
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
        if (dtype == WeightsDtype::F16)
            for (float value : tensor.values)
                if (std::isfinite(value) && std::isinf(float16ToFloat(floatToFloat16(value))))
                    throw Error("tensor '" + tensor.name + "' holds " + std::to_string(value) +
                                ", beyond float16's range of +-65504", file.string(), "write bf16 or fp32 weights");
        std::uint64_t bytes = tensor.values.size() * bytesPerValue(dtype);
        header[tensor.name] = {{"dtype", dtypeName(dtype)}, {"shape", tensor.shape},
                               {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    nlohmann::json metadataJson = nlohmann::json::object();
    for (const auto& [key, value] : metadata) {
        if (isChecksumKey(key))
            throw Error("metadata key '" + key + "' is reserved for the tensors' checksums", file.string());
        metadataJson[key] = value;
    }
    // The checksum covers the bytes as stored (bf16/fp16 included), which is what the reader sees.
    std::vector<std::string> stored;
    for (const auto& tensor : tensors) {
        stored.push_back(storedBytes(tensor.values, dtype));
        metadataJson[kChecksumPrefix + tensor.name] = crc32Hex(stored.back().data(), stored.back().size());
    }
    if (!metadataJson.empty()) header[kMetadataKey] = metadataJson;

    std::string headerText = header.dump();
    headerText.append((8 - headerText.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
    std::uint64_t headerLength = headerText.size();

    std::string contents;
    contents.reserve(8 + headerText.size() + offset);
    contents.append(reinterpret_cast<const char*>(&headerLength), 8);
    contents += headerText;
    for (const std::string& bytes : stored) contents += bytes;
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

    // A safetensors header is three levels deep; a deeper one would make any message that
    // shows a value recurse once per level.
    const std::string_view headerText = std::string_view(contents).substr(8, headerLength);
    try {
        rejectDeepJsonNesting(headerText, file.string());
    } catch (const Error& error) {
        corrupt(file, "the header is " + error.reason());
    }
    nlohmann::json header;
    try {
        header = nlohmann::json::parse(headerText);
    } catch (const nlohmann::json::exception& error) {  // parse_error, or out_of_range for 1e99999
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
        if (dtype != "F32" && dtype != "BF16" && dtype != "F16")
            throw Error(where + " has dtype " + dtype + "; CNN Studio reads F32, BF16 and F16",
                        file.string(), "convert the weights to one of those before loading them");
        const std::uint64_t valueBytes = dtype == "F32" ? 4 : 2;
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
        const std::optional<std::uint64_t> bytes = tensorBytes(tensor.shape, valueBytes, dataBytes);
        if (!bytes)
            corrupt(file, where + " has shape " + shapeText(tensor.shape) + ", more than the " +
                              std::to_string(dataBytes) + " bytes of data hold");
        const std::uint64_t expected = *bytes;
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
        tensor.values.resize(std::size_t(expected / valueBytes));
        if (dtype == "F32") {
            // An empty tensor's vector may hold no storage at all: memcpy wants a pointer even then.
            if (expected > 0) std::memcpy(tensor.values.data(), data + begin, expected);
        } else {
            for (std::size_t i = 0; i < tensor.values.size(); ++i) {
                std::uint16_t bits = 0;
                std::memcpy(&bits, data + begin + 2 * i, 2);
                tensor.values[i] = dtype == "BF16" ? bfloat16ToFloat(bits) : float16ToFloat(bits);
            }
        }
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
