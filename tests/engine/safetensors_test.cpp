// safetensors: what we write reads back exactly, the bytes follow the format (so other tools
// read our weights), and every kind of damage gives an Error that names the file.
#include <cstring>
#include <fstream>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/safetensors.h"
#include "synthetic_batches.h"

namespace cnnstudio {
namespace {

std::string readBytes(const std::filesystem::path& file) {
    std::ifstream stream(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(stream), {}};
}

void writeBytes(const std::filesystem::path& file, const std::string& bytes) {
    std::ofstream(file, std::ios::binary) << bytes;
}

// A file from a header JSON text and a data section, as another writer might produce it.
std::string handMade(const std::string& header, const std::string& data) {
    std::uint64_t length = header.size();
    std::string bytes(reinterpret_cast<const char*>(&length), 8);
    return bytes + header + data;
}

std::string floats(std::initializer_list<float> values) {
    return {reinterpret_cast<const char*>(std::data(values)), values.size() * sizeof(float)};
}

void expectErrorMentions(const std::filesystem::path& file, const std::string& fragment) {
    try {
        readSafetensors(file);
        FAIL() << "reading should fail with '" << fragment << "'";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), file.string());
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
}

TEST(Safetensors, RoundTripKeepsNamesShapesValuesAndMetadata) {
    const std::uint64_t seed = 2024;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 random(seed);
    std::normal_distribution<float> normal;
    std::vector<NamedTensor> tensors = {{"conv1.weight", {4, 1, 3, 3}, {}},
                                        {"conv1.bias", {4}, {}},
                                        {"empty", {0, 5}, {}},
                                        {"bn.running_var", {4}, {}}};
    for (auto& tensor : tensors) {
        std::int64_t count = 1;
        for (auto d : tensor.shape) count *= d;
        for (std::int64_t i = 0; i < count; ++i) tensor.values.push_back(normal(random));
    }
    const auto file = testing::freshFolder() / "weights.safetensors";
    writeSafetensors(file, tensors, {{"format", "test"}});
    const SafetensorsContents read = readSafetensors(file);
    ASSERT_EQ(read.tensors.size(), tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        EXPECT_EQ(read.tensors[i].name, tensors[i].name);  // data order is write order
        EXPECT_EQ(read.tensors[i].shape, tensors[i].shape);
        EXPECT_EQ(read.tensors[i].values, tensors[i].values);
    }
    EXPECT_EQ(read.metadata.at("format"), "test");
    EXPECT_NE(read.find("conv1.bias"), nullptr);
    EXPECT_EQ(read.find("missing"), nullptr);
}

TEST(Safetensors, BytesFollowTheFormat) {
    const auto file = testing::freshFolder() / "two.safetensors";
    writeSafetensors(file, {{"a", {2}, {1.0f, 2.0f}}, {"b", {1, 1}, {-3.5f}}});
    const std::string bytes = readBytes(file);
    std::uint64_t length = 0;
    std::memcpy(&length, bytes.data(), 8);
    EXPECT_EQ(length % 8, 0u) << "the header is padded so that the data is 8-byte aligned";
    const auto header = nlohmann::json::parse(bytes.substr(8, length));
    EXPECT_EQ(header["a"]["dtype"], "F32");
    EXPECT_EQ(header["a"]["data_offsets"], nlohmann::json({0, 8}));
    EXPECT_EQ(header["b"]["shape"], nlohmann::json({1, 1}));
    EXPECT_EQ(header["b"]["data_offsets"], nlohmann::json({8, 12}));
    EXPECT_EQ(bytes.substr(8 + length), floats({1.0f, 2.0f, -3.5f}));
}

TEST(Safetensors, ReadsAFileWrittenByAnotherWriter) {
    // Keys out of data order, no padding, as Python's safetensors may write them.
    const auto file = testing::freshFolder() / "foreign.safetensors";
    writeBytes(file, handMade(R"({"z":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                              floats({9.0f, 1.0f, 2.0f})));
    const SafetensorsContents read = readSafetensors(file);
    ASSERT_EQ(read.tensors.size(), 2u);
    EXPECT_EQ(read.tensors[0].name, "z");
    EXPECT_EQ(read.find("a")->values, std::vector<float>({1.0f, 2.0f}));
}

TEST(Safetensors, DamagedFilesNameTheFileAndTheProblem) {
    const auto folder = testing::freshFolder();
    const auto file = folder / "bad.safetensors";
    const std::string good = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

    writeBytes(file, "abc");
    expectErrorMentions(file, "too short");

    writeBytes(file, handMade(good, floats({1.0f, 2.0f})).substr(0, 30));
    expectErrorMentions(file, "header claims");

    writeBytes(file, handMade("{not json", ""));
    expectErrorMentions(file, "not valid JSON");

    writeBytes(file, handMade(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", std::string(4, '\0')));
    expectErrorMentions(file, "dtype F16");

    writeBytes(file, handMade(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", floats({1.0f, 2.0f})));
    expectErrorMentions(file, "shape [3]");

    writeBytes(file, handMade(good, floats({1.0f})));  // truncated data
    expectErrorMentions(file, "outside the 4 bytes of data");

    writeBytes(file, handMade(good, floats({1.0f, 2.0f, 3.0f})));  // trailing bytes
    expectErrorMentions(file, "tensors cover 8");

    writeBytes(file, handMade(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                              floats({1.0f, 2.0f, 3.0f})));
    expectErrorMentions(file, "gap");

    writeBytes(file, handMade(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", floats({1.0f, 2.0f})));
    expectErrorMentions(file, "non-negative");

    writeBytes(file, handMade(R"({"w":{"dtype":"F32","shape":[2]}})", floats({1.0f, 2.0f})));
    expectErrorMentions(file, "no data_offsets");

    writeBytes(file, handMade(R"([1, 2])", ""));
    expectErrorMentions(file, "not a JSON object");

    expectErrorMentions(folder / "absent.safetensors", "cannot open");
}

TEST(Safetensors, AFlippedByteIsCaughtNamingTheFileAndTheTensor) {
    const auto file = testing::freshFolder() / "flipped.safetensors";
    writeSafetensors(file, {{"conv.weight", {3}, {1.0f, 2.0f, 3.0f}}, {"conv.bias", {1}, {0.5f}}}, {{"format", "test"}});
    const SafetensorsContents intact = readSafetensors(file);
    EXPECT_EQ(intact.metadata, (std::map<std::string, std::string>{{"format", "test"}}))
        << "the checksums stay inside the file";
    std::string bytes = readBytes(file);
    bytes[bytes.size() - 5] ^= 0x01;  // in conv.weight's last value: 3.0 becomes 12.0, still finite
    writeBytes(file, bytes);
    expectErrorMentions(file, "tensor 'conv.weight''s data has CRC32");
    expectErrorMentions(file, "bytes changed on disk since");
}

TEST(Safetensors, WriterKeepsTheChecksumKeysForItself) {
    const auto file = testing::freshFolder() / "reserved.safetensors";
    EXPECT_THROW(writeSafetensors(file, {{"w", {1}, {1.0f}}}, {{"crc32:w", "00000000"}}), Error);
}

TEST(Safetensors, WriterRefusesInconsistentTensors) {
    const auto file = testing::freshFolder() / "refused.safetensors";
    EXPECT_THROW(writeSafetensors(file, {{"w", {3}, {1.0f, 2.0f}}}), Error);
    EXPECT_THROW(writeSafetensors(file, {{"w", {1}, {1.0f}}, {"w", {1}, {2.0f}}}), Error);
    EXPECT_THROW(writeSafetensors(file, {{"__metadata__", {1}, {1.0f}}}), Error);
    EXPECT_FALSE(std::filesystem::exists(file));
}

}  // namespace
}  // namespace cnnstudio
