// The training-memory estimate and the refusal of a batch too large for the free GPU memory,
// with a batch size that fits (issue 16: "GPU out of memory names a batch size that fits"), and
// the host memory the host backends budget against.
#include "cnnstudio/memory_estimate.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/host_memory.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"

namespace cnnstudio {
namespace {

TEST(MemoryEstimate, CountsParametersWithOptimiserStateAndActivationsWithGradients) {
    const ShapeReport report = inferShapes(loadPreset("lenet5"));
    const MemoryEstimate adam = estimateTrainingMemory(report, sizeof(float), "adam");
    EXPECT_EQ(adam.fixedBytes, report.totalParameters * 4 * 4) << "weights, gradients and two moments";
    EXPECT_EQ(adam.bytesPerImage, report.activationBytesPerImage * 2) << "each output and its gradient";
    EXPECT_EQ(estimateTrainingMemory(report, sizeof(float), "sgd").fixedBytes, report.totalParameters * 4 * 3);
    EXPECT_EQ(estimateTrainingMemory(report, 2, "adam").bytesPerImage, report.activationBytesPerImage)
        << "bf16 activations take half";
    EXPECT_GT(adam.bytesFor(64), adam.fixedBytes + 64 * adam.bytesPerImage) << "with a margin";
}

TEST(MemoryEstimate, ABatchTooLargeForTheFreeMemoryIsRefusedNamingOneThatFits) {
    const ShapeReport report = inferShapes(loadPreset("fer-cnn"));
    const MemoryEstimate estimate = estimateTrainingMemory(report, sizeof(float), "adam");
    // A GPU with room for a batch of about 100: 4096 is refused, 64 named as fitting.
    const std::size_t freeBytes = std::size_t(estimate.bytesFor(100));
    EXPECT_EQ(estimate.largestBatchWithin(freeBytes), 64);
    EXPECT_NO_THROW(requireBatchFits(estimate, 64, {freeBytes, "backend 'cudnn'", "this GPU"}));
    try {
        requireBatchFits(estimate, 4096, {freeBytes, "backend 'cudnn'", "this GPU"});
        FAIL() << "batch 4096 should not fit";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), "backend 'cudnn'");
        EXPECT_NE(error.reason().find("batch 4096 needs about "), std::string::npos) << error.what();
        EXPECT_NE(error.reason().find(" is free"), std::string::npos) << error.what();
        EXPECT_NE(error.hint().find("use --batch 64 or less"), std::string::npos) << error.what();
    }
}

TEST(MemoryEstimate, WhenNotOneImageFitsTheMessageSaysSo) {
    const MemoryEstimate estimate = estimateTrainingMemory(inferShapes(loadPreset("vgg-fer")), 4, "adam");
    try {
        requireBatchFits(estimate, 32, {std::size_t(estimate.fixedBytes / 2), "backend 'cuda'", "this GPU"});
        FAIL() << "nothing should fit in half the parameters' memory";
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("not even one image fits"), std::string::npos) << error.what();
        EXPECT_NE(error.hint().find("free memory on this GPU"), std::string::npos) << error.what();
    }
}

// Linux overcommits: without this check a batch too large for the host was killed by the OOM
// killer in its first step, without a message.
TEST(MemoryEstimate, HostBackendsRefuseABatchBeyondTheMachinesMemoryNamingOneThatFits) {
    const ShapeReport report = inferShapes(loadPreset("vgg-fer"));
    for (const char* name : {"cpu-ref", "cpu"}) {
        const auto backend = createBackend(name, {.threads = 1});
        const std::optional<std::size_t> freeBytes = backend->freeMemoryBytes();
        ASSERT_TRUE(freeBytes.has_value()) << name << ": /proc/meminfo unread";
        const MemoryEstimate estimate = estimateTrainingMemory(report, sizeof(float), "adam");
        ASSERT_GT(estimate.bytesFor(65536), std::int64_t(*freeBytes)) << "a machine with over a terabyte free";
        try {
            requireBatchFits(report, 65536, *backend, "adam");
            FAIL() << name << ": batch 65536 of vgg-fer should not fit";
        } catch (const Error& error) {
            EXPECT_EQ(error.where(), std::string("backend '") + name + "'");
            EXPECT_NE(error.reason().find("batch 65536 needs about "), std::string::npos) << error.what();
            EXPECT_NE(error.hint().find("use --batch "), std::string::npos) << error.what();
        }
        EXPECT_NO_THROW(requireBatchFits(report, 1, *backend, "adam")) << name;
    }
}

// evaluate's --batch reaches 65536: its forward pass keeps every node's output, and was killed
// by the OOM killer like training was.
TEST(MemoryEstimate, AForwardPassCountsParametersAndActivationsOnly) {
    const ShapeReport report = inferShapes(loadPreset("vgg-fer"));
    const MemoryEstimate inference = estimateInferenceMemory(report, sizeof(float));
    EXPECT_EQ(inference.fixedBytes, report.totalParameters * 4);
    EXPECT_EQ(inference.bytesPerImage, report.activationBytesPerImage);
    const auto backend = createBackend("cpu", {.threads = 1});
    try {
        requireInferenceBatchFits(report, 65536, *backend);
        FAIL() << "a forward pass of 65536 vgg-fer images should not fit";
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("batch 65536 needs about "), std::string::npos) << error.what();
        EXPECT_NE(error.reason().find(" to run, "), std::string::npos) << error.what();
    }
    EXPECT_NO_THROW(requireInferenceBatchFits(report, 64, *backend));
}

TEST(MemoryEstimate, RanksOnOneMachineEachGetTheirShareOfItsMemory) {
    const ShapeReport report = inferShapes(loadPreset("vgg-fer"));
    const auto backend = createBackend("cpu-ref", {});
    const std::size_t freeBytes = backend->freeMemoryBytes().value();
    const MemoryEstimate estimate = estimateTrainingMemory(report, sizeof(float), "adam");
    // The largest batch that fits alone, if it does not fit a sixteenth of the memory.
    const int alone = estimate.largestBatchWithin(freeBytes);
    ASSERT_GT(alone, 1);
    ASSERT_GT(estimate.bytesFor(alone), std::int64_t(freeBytes / 16));
    EXPECT_NO_THROW(requireBatchFits(report, alone, *backend, "adam", 1));
    try {
        requireBatchFits(report, alone, *backend, "adam", 16);
        FAIL() << "batch " << alone << " per rank should not fit 16 ranks";
    } catch (const Error& error) {
        EXPECT_NE(error.where().find("one of 16 ranks sharing this machine's memory"), std::string::npos)
            << error.what();
    }
}

// /proc/meminfo's MemAvailable, lowered to the headroom of every memory cgroup from the
// process's own up, in both cgroup versions.
class HostMemory : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = std::filesystem::temp_directory_path() /
                ("cnnstudio-host-memory-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(root_);
        write("proc/meminfo", "MemTotal:       24683664 kB\nMemFree:        15000000 kB\n"
                              "MemAvailable:   20000000 kB\nBuffers:          100 kB\n");
    }
    void TearDown() override { std::filesystem::remove_all(root_); }
    void write(const std::string& relative, const std::string& text) {
        std::filesystem::create_directories((root_ / relative).parent_path());
        std::ofstream(root_ / relative) << text;
    }
    std::filesystem::path root_;
};

TEST_F(HostMemory, IsMemAvailableWithoutCgroupLimits) {
    write("proc/self/cgroup", "0::/user.slice/session-1.scope\n");
    write("sys/fs/cgroup/user.slice/session-1.scope/memory.max", "max\n");
    EXPECT_EQ(availableHostMemoryBytes(root_), std::size_t(20000000) * 1024);
}

TEST_F(HostMemory, IsTheTightestCgroupHeadroomInVersion2) {
    write("proc/self/cgroup", "0::/outer/inner\n");
    write("sys/fs/cgroup/outer/inner/memory.max", "max\n");
    write("sys/fs/cgroup/outer/memory.max", "8000000000\n");  // a container of 8 GB
    write("sys/fs/cgroup/outer/memory.current", "3000000000\n");
    EXPECT_EQ(availableHostMemoryBytes(root_), std::size_t(5000000000));
}

TEST_F(HostMemory, IsTheCgroupHeadroomInVersion1) {
    write("proc/self/cgroup", "5:devices:/\n4:memory:/job\n0::/\n");
    write("sys/fs/cgroup/memory/job/memory.limit_in_bytes", "2147483648\n");
    write("sys/fs/cgroup/memory/job/memory.usage_in_bytes", "1073741824\n");
    write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");  // unlimited
    EXPECT_EQ(availableHostMemoryBytes(root_), std::size_t(1073741824));
}

TEST_F(HostMemory, IsZeroWhenACgroupIsFull) {
    write("proc/self/cgroup", "0::/full\n");
    write("sys/fs/cgroup/full/memory.max", "1000\n");
    write("sys/fs/cgroup/full/memory.current", "4096\n");
    EXPECT_EQ(availableHostMemoryBytes(root_), std::size_t(0));
}

TEST_F(HostMemory, IsUnknownWithoutProcMeminfo) {
    std::filesystem::remove(root_ / "proc/meminfo");
    EXPECT_FALSE(availableHostMemoryBytes(root_).has_value());
}

}  // namespace
}  // namespace cnnstudio
