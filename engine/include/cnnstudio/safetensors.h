// The safetensors file format (https://github.com/huggingface/safetensors) with float32, bfloat16
// or float16 values (read into float32 in memory):
//   8 bytes   N, the header length, unsigned little-endian
//   N bytes   a JSON object: {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//             ..., "__metadata__": {"key": "value"}}, offsets relative to the data section
//   the data  raw little-endian values of each tensor's dtype, the tensors back to back with no holes
// Shipped models keep bfloat16 or float16 weights to halve their size; training reads and writes F32.
// Checkpoints and exported models use it, so the weights open in PyTorch, JAX or numpy as well.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cnnstudio {

struct NamedTensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<float> values;  // row-major, product of shape
};

struct SafetensorsContents {
    std::vector<NamedTensor> tensors;  // in the order of their data
    std::map<std::string, std::string> metadata;

    const NamedTensor* find(const std::string& name) const;
};

// How values are stored in the file: "F32", "BF16" or "F16" (safetensors' dtype names).
// BF16 and F16 round to nearest even; F16 turns values beyond its range into infinities, which the
// readers of a model refuse, so writing refuses them first.
enum class WeightsDtype { F32, BF16, F16 };
// "f32"/"fp32", "bf16", "f16"/"fp16" (any case); throws Error listing them for anything else.
WeightsDtype parseWeightsDtype(const std::string& text);

// float <-> bfloat16 / float16 bits, round to nearest even (NaN stays NaN).
std::uint16_t floatToBfloat16(float value);
float bfloat16ToFloat(std::uint16_t bits);
std::uint16_t floatToFloat16(float value);
float float16ToFloat(std::uint16_t bits);

// Written atomically (temporary file, fsync, rename), with each tensor's CRC32 in the metadata
// ("crc32:<tensor>", reserved). Throws Error naming the file and the tensor
// when a name repeats or a tensor's values do not match its shape.
void writeSafetensors(const std::filesystem::path& file, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {},
                      WeightsDtype dtype = WeightsDtype::F32);

// Validates everything (header length, JSON, dtype, shapes, offsets, sizes, the recorded CRC32
// of each tensor) and throws Error naming the file, the tensor and what is wrong with it. The
// checksums are not returned in `metadata`.
SafetensorsContents readSafetensors(const std::filesystem::path& file);

}  // namespace cnnstudio
