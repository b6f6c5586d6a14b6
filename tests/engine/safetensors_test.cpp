// safetensors: what we write reads back exactly, the bytes follow the format (so other tools
// read our weights), and every kind of damage gives an Error that names the file.
#include <cmath>
#include <cstring>
#include <limits>
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

    writeBytes(file, handMade(R"({"w":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}})", std::string(4, '\0')));
    expectErrorMentions(file, "dtype I16");

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

// Found with tests/fuzz/safetensors_fuzz: the element count of three dimensions near 2^31
// overflowed int64 (undefined behaviour), and a shape nested 100,000 levels deep overflowed the
// stack while the error message was written.
TEST(Safetensors, ShapesPastTheDataOrNestedDeepAreErrors) {
    const auto folder = testing::freshFolder();
    writeBytes(folder / "huge.safetensors",
               handMade(R"({"t":{"dtype":"F32","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,0]}})", ""));
    expectErrorMentions(folder / "huge.safetensors", "more than the 0 bytes of data hold");
    const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
    writeBytes(folder / "deep.safetensors",
               handMade(R"({"t":{"dtype":"F32","shape":[)" + deep + R"(],"data_offsets":[0,0]}})", ""));
    expectErrorMentions(folder / "deep.safetensors", "the header is JSON nested more than 64");
    writeBytes(folder / "listed.safetensors",
               handMade(R"({"t":{"dtype":"F32","shape":[[1,2]],"data_offsets":[0,0]}})", ""));
    expectErrorMentions(folder / "listed.safetensors", "shape entry is [1,2], expected a non-negative integer");
    // Found by checkpoint_fuzz after 48 s: nlohmann reports 1e300777 as out_of_range, which the
    // reader did not catch, so a resume aborted.
    writeBytes(folder / "number.safetensors", handMade(R"({"t":{"dtype":"F32","shape":[1e300777],"data_offsets":[0,0]}})", ""));
    expectErrorMentions(folder / "number.safetensors", "the header is not valid JSON");
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

namespace cnnstudio {
namespace {

// Bit patterns from the IEEE 754 binary16 and bfloat16 definitions, rounding to nearest even.
TEST(HalfPrecision, ConversionsRoundToNearestEvenAndKeepSpecialValues) {
    EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
    EXPECT_EQ(floatToBfloat16(-2.0f), 0xc000);
    EXPECT_EQ(floatToBfloat16(1.0f + 1.0f / 256), 0x3f80);  // a tie, to the even 1.0
    EXPECT_EQ(floatToBfloat16(1.0f + 3.0f / 256), 0x3f82);  // a tie, to the even 1 + 2/128
    EXPECT_FLOAT_EQ(bfloat16ToFloat(0x3fc0), 1.5f);
    EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(std::numeric_limits<float>::quiet_NaN()))));

    EXPECT_EQ(floatToFloat16(1.0f), 0x3c00);
    EXPECT_EQ(floatToFloat16(-2.0f), 0xc000);
    EXPECT_EQ(floatToFloat16(65504.0f), 0x7bff);                 // the largest half
    EXPECT_EQ(floatToFloat16(65520.0f), 0x7c00);                 // rounds past it: infinity
    EXPECT_EQ(floatToFloat16(1.0f + 1.0f / 2048), 0x3c00);       // a tie, to even
    EXPECT_EQ(floatToFloat16(std::ldexp(1.0f, -24)), 0x0001);    // the smallest subnormal
    EXPECT_EQ(floatToFloat16(std::ldexp(1.0f, -14)), 0x0400);    // the smallest normal
    EXPECT_FLOAT_EQ(float16ToFloat(0x3555), 0.333251953125f);
    EXPECT_FLOAT_EQ(float16ToFloat(0x0001), std::ldexp(1.0f, -24));
    EXPECT_TRUE(std::isinf(float16ToFloat(0x7c00)));
    EXPECT_TRUE(std::isnan(float16ToFloat(floatToFloat16(std::numeric_limits<float>::quiet_NaN()))));
}

// Shipped models keep half-precision weights: each dtype reads back as its rounding of the
// values, in half the bytes of float32.
TEST(Safetensors, Bfloat16AndFloat16WeightsReadBackAsTheirRoundedValues) {
    const std::vector<NamedTensor> tensors{{"conv.weight", {2, 3}, {0.1f, -0.25f, 3.14159f, 1e-3f, 100.0f, -7.5f}},
                                           {"conv.bias", {2}, {0.5f, -0.0625f}}};
    for (const WeightsDtype dtype : {WeightsDtype::BF16, WeightsDtype::F16}) {
        const bool bf16 = dtype == WeightsDtype::BF16;
        SCOPED_TRACE(bf16 ? "bf16" : "fp16");
        const auto file = testing::freshFolder(bf16 ? "bf16" : "fp16") / "half.safetensors";
        writeSafetensors(file, tensors, {{"format", "test"}}, dtype);
        const SafetensorsContents read = readSafetensors(file);
        ASSERT_EQ(read.tensors.size(), 2u);
        for (const NamedTensor& original : tensors) {
            const NamedTensor* back = read.find(original.name);
            ASSERT_NE(back, nullptr);
            EXPECT_EQ(back->shape, original.shape);
            for (std::size_t i = 0; i < original.values.size(); ++i) {
                const float rounded = bf16 ? bfloat16ToFloat(floatToBfloat16(original.values[i]))
                                           : float16ToFloat(floatToFloat16(original.values[i]));
                EXPECT_EQ(back->values[i], rounded) << original.name << "[" << i << "]";
                EXPECT_NEAR(back->values[i], original.values[i], std::fabs(original.values[i]) * (bf16 ? 4e-3 : 5e-4));
            }
        }
        // The data after the header holds 8 values of 2 bytes each.
        const std::string bytes = readBytes(file);
        std::uint64_t headerLength = 0;
        std::memcpy(&headerLength, bytes.data(), 8);
        EXPECT_EQ(bytes.size() - 8 - headerLength, 8u * 2);
    }
    EXPECT_EQ(parseWeightsDtype("BF16"), WeightsDtype::BF16);
    EXPECT_EQ(parseWeightsDtype("fp16"), WeightsDtype::F16);
    EXPECT_THROW(parseWeightsDtype("int8"), Error);
}

TEST(Safetensors, Float16RefusesValuesBeyondItsRange) {
    const auto file = testing::freshFolder() / "big.safetensors";
    try {
        writeSafetensors(file, {{"dense.weight", {1}, {1e5f}}}, {}, WeightsDtype::F16);
        FAIL() << "a value beyond 65504 was written as float16";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("dense.weight"), std::string::npos) << error.what();
    }
    EXPECT_FALSE(std::filesystem::exists(file));
}

}  // namespace
}  // namespace cnnstudio
