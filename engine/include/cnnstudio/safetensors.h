// The safetensors file format (https://github.com/huggingface/safetensors), float32 only:
//   8 bytes   N, the header length, unsigned little-endian
//   N bytes   a JSON object: {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//             ..., "__metadata__": {"key": "value"}}, offsets relative to the data section
//   the data  raw little-endian float32, the tensors back to back with no holes
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

// Written atomically (temporary file, fsync, rename), with each tensor's CRC32 in the metadata
// ("crc32:<tensor>", reserved). Throws Error naming the file and the tensor
// when a name repeats or a tensor's values do not match its shape.
void writeSafetensors(const std::filesystem::path& file, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Validates everything (header length, JSON, dtype, shapes, offsets, sizes, the recorded CRC32
// of each tensor) and throws Error naming the file, the tensor and what is wrong with it. The
// checksums are not returned in `metadata`.
SafetensorsContents readSafetensors(const std::filesystem::path& file);

}  // namespace cnnstudio
