// Our ONNX export read by a reader we did not write: OpenCV DNN (Debian's 4.6). Every preset and
// a network holding every layer type, random weights and inputs, outputs within 1e-4 of our own
// inference forward on cpu-ref.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <opencv2/dnn.hpp>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/onnx_export.h"
#include "interchange/onnx_test_networks.h"

namespace cnnstudio {
namespace {

constexpr float kTolerance = 1e-4f;  // fp32 both sides; summation orders differ
constexpr int kBatch = 3;
constexpr std::uint64_t kSeed = 20261201;

std::vector<float> openCvLogits(const std::string& onnx, const Network& network, const std::vector<float>& images) {
    cv::dnn::Net reader = cv::dnn::readNetFromONNX(onnx.data(), onnx.size());
    const TensorShape shape = network.inputShape();
    const int dims[] = {shape.batch, shape.channels, shape.height, shape.width};
    const cv::Mat blob(4, dims, CV_32F, const_cast<float*>(images.data()));
    reader.setInput(blob, kOnnxInputName);
    const cv::Mat logits = reader.forward(kOnnxOutputName);
    return std::vector<float>(logits.ptr<float>(), logits.ptr<float>() + logits.total());
}

class OnnxReadByOpenCv : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxReadByOpenCv, GivesOurLogits) {
    SCOPED_TRACE("seed " + std::to_string(kSeed));
    std::unique_ptr<Backend> backend = createBackend("cpu-ref", {});
    const NetworkSpec spec = testing::onnxTestNetwork(GetParam());
    std::unique_ptr<Network> network = testing::buildWithRandomWeights(spec, *backend, kBatch, kSeed);
    const std::vector<float> images = testing::randomImages(*network, kSeed + 1);
    const std::vector<float> ours = testing::inferenceLogits(*network, images);

    const std::string onnx = serializeOnnxModel(describeAsOnnx(spec, networkTensors(*network)));
    const std::vector<float> theirs = openCvLogits(onnx, *network, images);

    ASSERT_EQ(theirs.size(), ours.size());
    float largest = 0, largestLogit = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) {
        largest = std::max(largest, std::abs(theirs[i] - ours[i]));
        largestLogit = std::max(largestLogit, std::abs(ours[i]));
    }
    RecordProperty("max_abs_difference", std::to_string(largest));
    std::printf("%s: max |OpenCV - ours| = %.3g over %zu logits (largest |logit| %.3g)\n", GetParam().c_str(),
                largest, ours.size(), largestLogit);
    EXPECT_LE(largest, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(EveryPresetAndLayerType, OnnxReadByOpenCv,
                         ::testing::ValuesIn(testing::onnxTestNetworkNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name = info.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

}  // namespace
}  // namespace cnnstudio
