// Predicted run time from a benchmark report: the closest configuration, FLOP scaling for
// another network, validation at inference speed, and none without the backend.
#include <gtest/gtest.h>

#include "cnnstudio/run_time_prediction.h"

namespace cnnstudio {
namespace {

BenchConfiguration measured(std::string label, std::string backend, std::string precision, int batch, int ranks,
                            double trainPerSecond, double inferencePerSecond, int threads = 0) {
    BenchConfiguration c;
    c.label = std::move(label);
    c.backend = std::move(backend);
    c.precision = std::move(precision);
    c.batch = batch;
    c.ranks = ranks;
    c.threads = threads;
    c.devices = c.backend == "cudnn" ? "gpu" : "cpu";
    c.trainImagesPerSecond = BenchThroughput::fromRepeats({trainPerSecond});
    c.inferenceImagesPerSecond = inferencePerSecond;
    return c;
}

BenchReport report() {
    BenchReport r;
    r.network = {"fer-cnn", {1, 48, 48}, 7, 1000, 2.0};
    r.configurations = {measured("cudnn bf16, batch 64", "cudnn", "bf16", 64, 1, 50000, 200000),
                        measured("cudnn bf16", "cudnn", "bf16", 256, 1, 100000, 400000),
                        measured("cudnn bf16, 2 GPUs", "cudnn", "bf16", 256, 2, 190000, 800000),
                        measured("cpu 4 threads", "cpu", "fp32", 64, 1, 400, 1200, 4),
                        measured("cpu 16 threads", "cpu", "fp32", 64, 1, 1000, 3000, 16)};
    return r;
}

RunTimeQuery query() {
    RunTimeQuery q;
    q.networkName = "fer-cnn";
    q.trainGflopPerImage = 2.0;
    q.trainImages = 100000;
    q.validationImages = 40000;
    q.epochs = 10;
    q.backend = "cudnn";
    q.precision = "bf16";
    q.batch = 256;
    return q;
}

TEST(RunTimePrediction, SameNetworkUsesTheClosestConfiguration) {
    const auto prediction = predictRunTime(query(), report(), "r.json");
    ASSERT_TRUE(prediction.has_value());
    EXPECT_EQ(prediction->configurationLabel, "cudnn bf16");
    EXPECT_FALSE(prediction->scaledByFlops);
    EXPECT_DOUBLE_EQ(prediction->epochSeconds, 100000.0 / 100000 + 40000.0 / 400000);  // 1.1 s
    EXPECT_DOUBLE_EQ(prediction->totalSeconds, 11.0);
    EXPECT_EQ(prediction->basis, "'cudnn bf16' in r.json");
}

TEST(RunTimePrediction, RanksAndThreadsPickTheirConfiguration) {
    RunTimeQuery twoGpus = query();
    twoGpus.ranks = 2;
    EXPECT_EQ(predictRunTime(twoGpus, report(), "r")->configurationLabel, "cudnn bf16, 2 GPUs");
    RunTimeQuery smallBatch = query();
    smallBatch.batch = 32;
    EXPECT_EQ(predictRunTime(smallBatch, report(), "r")->configurationLabel, "cudnn bf16, batch 64");
    RunTimeQuery cpu = query();
    cpu.backend = "cpu";
    cpu.precision = "fp32";
    cpu.threads = 4;
    cpu.batch = 64;
    EXPECT_EQ(predictRunTime(cpu, report(), "r")->configurationLabel, "cpu 4 threads");
}

TEST(RunTimePrediction, AnotherNetworkIsScaledByTrainingFlops) {
    RunTimeQuery heavier = query();
    heavier.networkName = "vgg-fer";
    heavier.trainGflopPerImage = 8.0;  // four times fer-cnn's
    heavier.validationImages = 0;
    const auto prediction = predictRunTime(heavier, report(), "r.json");
    ASSERT_TRUE(prediction.has_value());
    EXPECT_TRUE(prediction->scaledByFlops);
    EXPECT_DOUBLE_EQ(prediction->trainImagesPerSecond, 25000);
    EXPECT_DOUBLE_EQ(prediction->epochSeconds, 4.0);
    EXPECT_NE(prediction->basis.find("scaled by FLOPs from fer-cnn"), std::string::npos) << prediction->basis;
}

TEST(RunTimePrediction, NoneWithoutTheBackendOrPrecision) {
    RunTimeQuery cuda = query();
    cuda.backend = "cuda";
    cuda.precision = "fp32";
    EXPECT_FALSE(predictRunTime(cuda, report(), "r").has_value());
    BenchReport failed = report();
    for (BenchConfiguration& c : failed.configurations) c.status = BenchStatus::Failed;
    EXPECT_FALSE(predictRunTime(query(), failed, "r").has_value());
}

TEST(RunTimePrediction, DurationsAreWrittenApproximately) {
    EXPECT_EQ(formatApproximateDuration(0.4), "<1 s");
    EXPECT_EQ(formatApproximateDuration(12.3), "~12 s");
    EXPECT_EQ(formatApproximateDuration(125), "~2 min");
    EXPECT_EQ(formatApproximateDuration(3 * 3600), "~3.0 h");
}

}  // namespace
}  // namespace cnnstudio
