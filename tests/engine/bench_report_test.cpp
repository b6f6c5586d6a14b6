// The benchmark report: JSON round trip, errors that name the file and field, speedups,
// scaling efficiency, baselines and the per-user folder of this machine's reports.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cnnstudio/bench_report.h"
#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

BenchConfiguration configuration(std::string label, std::string backend, int ranks, double median,
                                 int threads = 0, std::string precision = "fp32") {
    BenchConfiguration c;
    c.label = std::move(label);
    c.backend = std::move(backend);
    c.precision = std::move(precision);
    c.threads = threads;
    c.batch = 64;
    c.ranks = ranks;
    c.devices = c.backend == "cuda" || c.backend == "cudnn" ? "gpu" : "cpu";
    c.steps = 4;
    c.warmup = 1;
    c.repeats = 3;
    c.trainImagesPerSecond = BenchThroughput::fromRepeats({median * 0.9, median, median * 1.1});
    c.inferenceImagesPerSecond = median * 3;
    return c;
}

BenchReport sampleReport() {
    BenchReport report;
    report.created = "2026-12-01T03:10:00Z";
    report.tool = {"cnnstudio-bench", "0.1.0", "cnnstudio-bench --backend cpu-ref cpu"};
    report.machine.hostname = "h200-a";
    report.machine.label = "H200 server";
    report.machine.cpuModel = "Xeon";
    report.machine.cpuCores = 16;
    report.machine.cpuThreads = 32;
    report.machine.memoryBytes = 128ull << 30;
    report.machine.gpus = {{"NVIDIA H200", 141ull << 30}};
    report.machine.versions.onednn = "3.0.0";
    report.network = {"fer-cnn", {1, 48, 48}, 7, 1234567, 0.75};
    report.breakdownMethod = "profiling pass";
    report.configurations = {configuration("cpu-ref 1 thread", "cpu-ref", 1, 10, 1),
                             configuration("cpu 16 threads", "cpu", 1, 200, 16),
                             configuration("cpu 4 threads", "cpu", 1, 90, 4),
                             configuration("cudnn fp32", "cudnn", 1, 5000),
                             configuration("cudnn fp32, 2 GPUs", "cudnn", 2, 9000)};
    BenchConfiguration& cpu = report.configurations[1];
    cpu.breakdownMs.convolution = 12.5;
    cpu.breakdownMs.update = 0.25;
    cpu.layers = {{"conv1", "Conv2D", "convolution", 4.5, 8.0}};
    cpu.peakMemoryBytes = 1 << 20;
    cpu.reduced = true;
    cpu.reducedReason = "slow";
    BenchConfiguration failed = configuration("cuda fp32", "cuda", 1, 0);
    failed.status = BenchStatus::Failed;
    failed.error = "no CUDA device found";
    failed.trainImagesPerSecond = {};
    report.configurations.push_back(failed);
    return report;
}

std::filesystem::path scratchFolder(const std::string& name) {
    auto folder = std::filesystem::temp_directory_path() / ("cnnstudio-bench-report-" + name + "-" +
                                                            std::to_string(::getpid()));
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    return folder;
}

std::string errorOf(const nlohmann::json& json) {
    try {
        benchReportFromJson(json, "report.json");
    } catch (const Error& error) {
        return error.what();
    }
    return "no error";
}

TEST(BenchReport, RoundTripKeepsEveryField) {
    const BenchReport report = sampleReport();
    const auto folder = scratchFolder("round-trip");
    saveBenchReport(report, folder / "r.json");
    const BenchReport back = loadBenchReport(folder / "r.json");
    EXPECT_EQ(toJson(back), toJson(report));
    ASSERT_EQ(back.configurations.size(), 6u);
    const BenchConfiguration& cpu = back.configurations[1];
    EXPECT_DOUBLE_EQ(cpu.breakdownMs.convolution, 12.5);
    EXPECT_DOUBLE_EQ(cpu.breakdownMs.update, 0.25);
    ASSERT_EQ(cpu.layers.size(), 1u);
    EXPECT_EQ(cpu.layers[0].category, "convolution");
    EXPECT_DOUBLE_EQ(cpu.layers[0].backwardMs, 8.0);
    EXPECT_TRUE(cpu.reduced);
    EXPECT_EQ(back.configurations[5].status, BenchStatus::Failed);
    EXPECT_EQ(back.configurations[5].error, "no CUDA device found");
    EXPECT_EQ(back.machine.gpus.at(0).memoryBytes, 141ull << 30);
    std::filesystem::remove_all(folder);
}

TEST(BenchReport, JsonUsesTheSchemaFieldNames) {
    const nlohmann::json json = toJson(sampleReport());
    EXPECT_EQ(json["schema"], "cnnstudio-bench-report/1");
    const nlohmann::json& c = json["configurations"][1];
    for (const char* key : {"label", "backend", "precision", "threads", "batch", "ranks", "nodes", "devices",
                            "status", "error", "steps", "warmup", "repeats", "reduced", "reduced_reason",
                            "train_images_per_second", "inference_images_per_second", "peak_memory_bytes",
                            "breakdown_ms", "layers"})
        EXPECT_TRUE(c.contains(key)) << key;
    for (const char* key : {"convolution", "batch_norm", "activation", "pooling", "dense", "loss", "update",
                            "communication", "other"})
        EXPECT_TRUE(c["breakdown_ms"].contains(key)) << key;
    EXPECT_EQ(json["machine"]["cpu"]["threads"], 32);
    EXPECT_TRUE(json["machine"]["versions"].contains("openmpi"));
    EXPECT_EQ(json["network"]["input"], nlohmann::json({1, 48, 48}));
}

TEST(BenchReport, MalformedFieldIsNamedWithTheFile) {
    nlohmann::json json = toJson(sampleReport());
    json["configurations"][2]["train_images_per_second"]["median"] = "fast";
    const std::string message = errorOf(json);
    EXPECT_NE(message.find("report.json"), std::string::npos) << message;
    EXPECT_NE(message.find("configurations[2].train_images_per_second.median"), std::string::npos) << message;
    EXPECT_NE(message.find("expected a number"), std::string::npos) << message;
}

TEST(BenchReport, MissingFieldAndUnknownStatusAreNamed) {
    nlohmann::json missing = toJson(sampleReport());
    missing["machine"].erase("hostname");
    EXPECT_NE(errorOf(missing).find("machine.hostname: is missing"), std::string::npos) << errorOf(missing);
    nlohmann::json status = toJson(sampleReport());
    status["configurations"][0]["status"] = "done";
    EXPECT_NE(errorOf(status).find("configurations[0].status: 'done' is not a status"), std::string::npos)
        << errorOf(status);
    nlohmann::json duplicate = toJson(sampleReport());
    duplicate["configurations"][1]["label"] = "cpu-ref 1 thread";
    EXPECT_NE(errorOf(duplicate).find("labels two configurations"), std::string::npos) << errorOf(duplicate);
}

TEST(BenchReport, OtherSchemaAndNonJsonAreRefused) {
    nlohmann::json json = toJson(sampleReport());
    json["schema"] = "cnnstudio-bench-report/9";
    EXPECT_NE(errorOf(json).find("not a schema this version reads"), std::string::npos);
    const auto folder = scratchFolder("garbage");
    std::ofstream(folder / "garbage.json") << "{ not json";
    try {
        loadBenchReport(folder / "garbage.json");
        FAIL() << "a file that is not JSON was read";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("garbage.json"), std::string::npos) << error.what();
        EXPECT_NE(std::string(error.what()).find("not JSON"), std::string::npos) << error.what();
    }
    EXPECT_THROW(loadBenchReport(folder / "absent.json"), Error);
    std::filesystem::remove_all(folder);
}

TEST(BenchReport, UnknownFieldsAreTolerated) {
    nlohmann::json json = toJson(sampleReport());
    json["configurations"][0]["future_field"] = 1;
    json["future"] = {{"x", 1}};
    EXPECT_EQ(benchReportFromJson(json, "r.json").configurations.size(), 6u);
}

TEST(BenchReport, SpeedupIsMedianOverBaselineMedian) {
    const BenchReport report = sampleReport();
    const BenchConfiguration* naive = findBaseline(report, BenchBaseline::CpuRefOneThread);
    ASSERT_NE(naive, nullptr);
    EXPECT_EQ(naive->label, "cpu-ref 1 thread");
    const BenchConfiguration* best = findBaseline(report, BenchBaseline::BestCpu);
    ASSERT_NE(best, nullptr);
    EXPECT_EQ(best->label, "cpu 16 threads");
    EXPECT_DOUBLE_EQ(*speedupOver(*report.find("cudnn fp32"), *naive), 500.0);
    EXPECT_DOUBLE_EQ(*speedupOver(*report.find("cudnn fp32"), *best), 25.0);
    EXPECT_FALSE(speedupOver(*report.find("cuda fp32"), *naive).has_value()) << "a failed run has no speedup";
    EXPECT_EQ(toString(BenchBaseline::BestCpu), "best CPU");
}

TEST(BenchReport, ScalingEfficiencyComparesWithOneRankOfTheSameSetup) {
    const BenchReport report = sampleReport();
    EXPECT_DOUBLE_EQ(*scalingEfficiency(report, *report.find("cudnn fp32, 2 GPUs")), 0.9);
    EXPECT_DOUBLE_EQ(*scalingEfficiency(report, *report.find("cudnn fp32")), 1.0);
    BenchReport other = report;
    other.configurations[4].precision = "bf16";  // no one-rank bf16 run to compare with
    EXPECT_FALSE(scalingEfficiency(other, other.configurations[4]).has_value());
}

TEST(BenchReport, ThroughputMedianOfEvenAndOddRepeats) {
    EXPECT_DOUBLE_EQ(BenchThroughput::fromRepeats({3, 1, 2}).median, 2);
    const BenchThroughput even = BenchThroughput::fromRepeats({4, 1, 2, 3});
    EXPECT_DOUBLE_EQ(even.median, 2.5);
    EXPECT_DOUBLE_EQ(even.min, 1);
    EXPECT_DOUBLE_EQ(even.max, 4);
    EXPECT_EQ(even.repeats, (std::vector<double>{4, 1, 2, 3}));
}

TEST(BenchReport, BreakdownRefusesUnknownCategory) {
    BenchBreakdown breakdown;
    breakdown.at("batch_norm") = 2;
    breakdown.at("communication") = 1;
    EXPECT_DOUBLE_EQ(breakdown.batchNorm, 2);
    EXPECT_DOUBLE_EQ(breakdown.totalMs(), 3);
    EXPECT_THROW(breakdown.at("softmax"), Error);
}

TEST(BenchReport, LatestReportOfThisMachineIsFoundInTheFolder) {
    const auto folder = scratchFolder("folder");
    BenchReport older = sampleReport(), newer = sampleReport(), elsewhere = sampleReport();
    older.created = "2026-11-30T10:00:00Z";
    newer.created = "2026-12-01T09:00:00Z";
    elsewhere.created = "2026-12-02T09:00:00Z";
    elsewhere.machine.hostname = "laptop";
    saveToHardwareFolder(older, folder);
    const auto newerPath = saveToHardwareFolder(newer, folder);
    saveToHardwareFolder(elsewhere, folder);
    std::ofstream(folder / "notes.json") << "not a report";
    auto latest = latestReportOfMachine(folder, "h200-a");
    ASSERT_TRUE(latest.has_value());
    EXPECT_EQ(latest->first, newerPath);
    EXPECT_EQ(latest->second.created, newer.created);
    EXPECT_EQ(newerPath.filename().string().find(':'), std::string::npos) << "no colons in file names";
    EXPECT_FALSE(latestReportOfMachine(folder, "nobody").has_value());
    std::filesystem::remove_all(folder);
}

TEST(BenchReport, HardwareFolderFollowsXdgDataHome) {
    const char* saved = std::getenv("XDG_DATA_HOME");
    const std::string restore = saved ? saved : "", home = std::getenv("HOME") ? std::getenv("HOME") : "";
    ::setenv("XDG_DATA_HOME", "/tmp/xdg-data", 1);
    EXPECT_EQ(hardwareReportFolder(), std::filesystem::path("/tmp/xdg-data/cnnstudio/hardware"));
    ::unsetenv("XDG_DATA_HOME");
    ::setenv("HOME", "/home/someone", 1);
    EXPECT_EQ(hardwareReportFolder(), std::filesystem::path("/home/someone/.local/share/cnnstudio/hardware"));
    if (saved) ::setenv("XDG_DATA_HOME", restore.c_str(), 1);
    ::setenv("HOME", home.c_str(), 1);
}

TEST(BenchReport, MachineDescriptionCarriesTheHardwareRecord) {
    HardwareInfo hardware;
    hardware.cpuName = "Test CPU";
    hardware.cpuCores = 8;
    hardware.gpus.push_back({0, "NVIDIA H200", 100, 90, 132, 9, 0});
    hardware.cudnnVersion = "9.1.0";
    hardware.onednnVersion = "3.0.0";
    const BenchMachine machine = describeMachine(hardware);
    EXPECT_FALSE(machine.hostname.empty());
    EXPECT_EQ(machine.label, machine.hostname);
    EXPECT_EQ(machine.cpuModel, "Test CPU");
    EXPECT_GE(machine.cpuThreads, machine.cpuCores);
    EXPECT_GT(machine.memoryBytes, 0u);
    ASSERT_EQ(machine.gpus.size(), 1u);
    EXPECT_EQ(machine.gpus[0].memoryBytes, 100u);
    EXPECT_EQ(machine.versions.cudnn, "9.1.0");
    EXPECT_EQ(machine.versions.onednn, "3.0.0");
    EXPECT_EQ(utcSecondsTimestamp().size(), 20u);
}

}  // namespace
}  // namespace cnnstudio
