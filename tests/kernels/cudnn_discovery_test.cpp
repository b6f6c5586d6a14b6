// GPU discovery: library versions are reported with or without a GPU, a machine without one
// gets zero GPUs and a reason (never an exception), every GPU found is described sensibly, and
// looking at the hardware does not disturb a backend already running on a device.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/hardware.h"
#include "kernels/cudnn_test_support.h"

namespace cnnstudio::test {
namespace {

bool looksLikeVersion(const std::string& text) {
    return std::regex_match(text, std::regex(R"(\d+\.\d+(\.\d+)?)"));
}

TEST(GpuDiscovery, ReportsLibraryVersionsWithOrWithoutAGpu) {
    HardwareInfo hardware;
    ASSERT_NO_THROW(hardware = discoverHardware());
    EXPECT_TRUE(looksLikeVersion(hardware.runtimeVersion)) << "'" << hardware.runtimeVersion << "'";
    EXPECT_TRUE(looksLikeVersion(hardware.cudnnVersion)) << "'" << hardware.cudnnVersion << "'";
    EXPECT_EQ(hardware.cudnnVersion.rfind("9.", 0), 0u) << "built against cuDNN 9";
    EXPECT_TRUE(looksLikeVersion(hardware.ncclVersion)) << "'" << hardware.ncclVersion << "'";
}

TEST(GpuDiscovery, NoUsableGpuMeansZeroGpusAndAReason) {
    const HardwareInfo hardware = discoverHardware();
    const std::string unavailable = backendUnavailableReason("cudnn");
    if (hardware.gpus.empty()) {
        EXPECT_FALSE(hardware.gpuProblem.empty());
    }
    if (!unavailable.empty()) {
        EXPECT_TRUE(hardware.gpus.empty()) << "cudnn is unavailable (" << unavailable
                                           << ") yet discovery lists GPUs";
        EXPECT_FALSE(hardware.gpuProblem.empty());
    }
}

TEST(GpuDiscovery, CudnnBackendWithoutAGpuThrowsItsReason) {
    const std::string unavailable = backendUnavailableReason("cudnn");
    if (unavailable.empty()) GTEST_SKIP() << "a CUDA device is present";
    try {
        createBackend("cudnn");
        FAIL() << "createBackend(\"cudnn\") succeeded without a usable GPU";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(unavailable), std::string::npos) << error.what();
    }
}

TEST(GpuDiscovery, EveryGpuIsDescribedSensibly) {
    CNNSTUDIO_SKIP_WITHOUT_CUDA_DEVICE();
    const HardwareInfo hardware = discoverHardware();
    ASSERT_FALSE(hardware.gpus.empty()) << hardware.gpuProblem;
    EXPECT_FALSE(hardware.driverVersion.empty());
    for (std::size_t i = 0; i < hardware.gpus.size(); ++i) {
        const GpuInfo& gpu = hardware.gpus[i];
        SCOPED_TRACE("GPU " + std::to_string(i) + " " + gpu.name);
        EXPECT_EQ(gpu.index, int(i));
        EXPECT_FALSE(gpu.name.empty());
        EXPECT_GT(gpu.totalBytes, std::size_t(1) << 30);
        EXPECT_GT(gpu.freeBytes, 0u);
        EXPECT_LE(gpu.freeBytes, gpu.totalBytes);
        EXPECT_GT(gpu.multiprocessors, 0);
        EXPECT_GE(gpu.computeMajor, 5);
    }
    const auto json = toJson(hardware);
    EXPECT_EQ(json.at("gpus").size(), hardware.gpus.size());
}

// Discovery creates a context on devices it inspects and releases the ones it created; a device
// a backend already uses must keep its context, its memory and its queued work.
TEST(GpuDiscovery, LeavesARunningBackendsDeviceIntact) {
    CNNSTUDIO_SKIP_WITHOUT_CUDA_DEVICE();
    SeededRandom random;
    auto backend = createCudnn(Precision::Fp32);
    const std::vector<float> values = random.uniforms(4099);
    Tensor source = tensorFromHost(*backend, values);
    Tensor doubled = poisonedTensor(*backend, std::int64_t(values.size()));
    backend->add(source.data(), source.data(), doubled.data(), values.size());

    const HardwareInfo hardware = discoverHardware();
    EXPECT_FALSE(hardware.gpus.empty()) << hardware.gpuProblem;

    backend->scale(doubled.data(), 0.5f, values.size());
    EXPECT_TRUE(identical(doubled.toHost(), values, "x + x halved, across a discovery"));
    EXPECT_TRUE(identical(source.toHost(), values, "source, across a discovery"));
}

}  // namespace
}  // namespace cnnstudio::test
