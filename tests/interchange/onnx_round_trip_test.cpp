// Our export read back by our import: the same network computes the same logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/onnx_export.h"
#include "cnnstudio/onnx_import.h"
#include "interchange/onnx_test_networks.h"

namespace cnnstudio {
namespace {

constexpr float kTolerance = 1e-5f;  // the same backend both ways; SeparableConv2D comes back as two Conv2D
constexpr int kBatch = 2;
constexpr std::uint64_t kSeed = 20261202;

std::filesystem::path scratchFile(const std::string& name) {
    const std::filesystem::path folder = std::filesystem::temp_directory_path() / "cnnstudio-onnx-round-trip";
    std::filesystem::create_directories(folder);
    return folder / name;
}

class OnnxRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxRoundTrip, ImportedExportGivesTheSameLogits) {
    SCOPED_TRACE("seed " + std::to_string(kSeed));
    std::unique_ptr<Backend> backend = createBackend("cpu-ref", {});
    const NetworkSpec spec = testing::onnxTestNetwork(GetParam());
    std::unique_ptr<Network> original = testing::buildWithRandomWeights(spec, *backend, kBatch, kSeed);
    const std::filesystem::path file = scratchFile(GetParam() + ".onnx");
    exportOnnx(spec, networkTensors(*original), file);

    const ImportedNetwork imported = importOnnx(file);
    Network reread(imported.spec, *backend, kBatch, 0);
    loadNetworkTensors(reread, imported.weights, file);

    const std::vector<float> images = testing::randomImages(*original, kSeed + 1);
    const std::vector<float> before = testing::inferenceLogits(*original, images);
    const std::vector<float> after = testing::inferenceLogits(reread, images);
    ASSERT_EQ(after.size(), before.size());
    float largest = 0;
    for (std::size_t i = 0; i < before.size(); ++i) largest = std::max(largest, std::abs(after[i] - before[i]));
    EXPECT_LE(largest, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(EveryPresetAndLayerType, OnnxRoundTrip, ::testing::ValuesIn(testing::onnxTestNetworkNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name = info.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

TEST(OnnxImport, FileThatIsNotOnnxNamesTheFile) {
    const std::filesystem::path file = scratchFile("not-onnx.onnx");
    std::ofstream(file) << "this is text, not a ModelProto";
    try {
        importOnnx(file);
        FAIL() << "imported a text file";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), file.string());
    }
}

}  // namespace
}  // namespace cnnstudio
