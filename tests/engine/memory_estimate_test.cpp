// The training-memory estimate and the refusal of a batch too large for the free GPU memory,
// with a batch size that fits (issue 16: "GPU out of memory names a batch size that fits").
#include "cnnstudio/memory_estimate.h"

#include <gtest/gtest.h>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/shape_inference.h"

namespace cnnstudio {
namespace {

TEST(MemoryEstimate, CountsParametersWithOptimiserStateAndActivationsWithGradients) {
    const ShapeReport report = inferShapes(loadPreset("lenet5"));
    const TrainingMemoryEstimate adam = estimateTrainingMemory(report, sizeof(float), "adam");
    EXPECT_EQ(adam.fixedBytes, report.totalParameters * 4 * 4) << "weights, gradients and two moments";
    EXPECT_EQ(adam.bytesPerImage, report.activationBytesPerImage * 2) << "each output and its gradient";
    EXPECT_EQ(estimateTrainingMemory(report, sizeof(float), "sgd").fixedBytes, report.totalParameters * 4 * 3);
    EXPECT_EQ(estimateTrainingMemory(report, 2, "adam").bytesPerImage, report.activationBytesPerImage)
        << "bf16 activations take half";
    EXPECT_GT(adam.bytesFor(64), adam.fixedBytes + 64 * adam.bytesPerImage) << "with a margin";
}

TEST(MemoryEstimate, ABatchTooLargeForTheFreeMemoryIsRefusedNamingOneThatFits) {
    const ShapeReport report = inferShapes(loadPreset("fer-cnn"));
    const TrainingMemoryEstimate estimate = estimateTrainingMemory(report, sizeof(float), "adam");
    // A GPU with room for a batch of about 100: 4096 is refused, 64 named as fitting.
    const std::size_t freeBytes = std::size_t(estimate.bytesFor(100));
    EXPECT_EQ(estimate.largestBatchWithin(freeBytes), 64);
    EXPECT_NO_THROW(requireBatchFits(estimate, 64, freeBytes, "backend 'cudnn'"));
    try {
        requireBatchFits(estimate, 4096, freeBytes, "backend 'cudnn'");
        FAIL() << "batch 4096 should not fit";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), "backend 'cudnn'");
        EXPECT_NE(error.reason().find("batch 4096 needs about "), std::string::npos) << error.what();
        EXPECT_NE(error.reason().find(" is free"), std::string::npos) << error.what();
        EXPECT_NE(error.hint().find("use --batch 64 or less"), std::string::npos) << error.what();
    }
}

TEST(MemoryEstimate, WhenNotOneImageFitsTheMessageSaysSo) {
    const TrainingMemoryEstimate estimate = estimateTrainingMemory(inferShapes(loadPreset("vgg-fer")), 4, "adam");
    try {
        requireBatchFits(estimate, 32, std::size_t(estimate.fixedBytes / 2), "backend 'cuda'");
        FAIL() << "nothing should fit in half the parameters' memory";
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("not even one image fits"), std::string::npos) << error.what();
    }
}

TEST(MemoryEstimate, HostBackendsReportNoFreeMemorySoNothingIsRefused) {
    // cpu-ref and cpu allocate from the operating system: no budget to check against.
    const ShapeReport report = inferShapes(loadPreset("vgg-fer"));
    for (const char* name : {"cpu-ref", "cpu"}) {
        const auto backend = createBackend(name, {.threads = 1});
        EXPECT_FALSE(backend->freeMemoryBytes().has_value()) << name;
        EXPECT_NO_THROW(requireBatchFits(report, 65536, *backend, "adam")) << name;
    }
}

}  // namespace
}  // namespace cnnstudio
