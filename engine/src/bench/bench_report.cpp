#include "cnnstudio/bench_report.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#ifdef CNNSTUDIO_HAVE_MPI
#include <mpi.h>
#endif

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"

namespace cnnstudio {

// ---- Throughput and breakdown ---------------------------------------------------------------

BenchThroughput BenchThroughput::fromRepeats(std::vector<double> repeats) {
    BenchThroughput throughput;
    throughput.repeats = repeats;
    if (repeats.empty()) return throughput;
    std::sort(repeats.begin(), repeats.end());
    throughput.min = repeats.front();
    throughput.max = repeats.back();
    const std::size_t middle = repeats.size() / 2;
    throughput.median = repeats.size() % 2 == 1 ? repeats[middle]
                                                : (repeats[middle - 1] + repeats[middle]) / 2;
    return throughput;
}

const std::vector<std::string>& BenchBreakdown::categories() {
    static const std::vector<std::string> names{"convolution", "batch_norm", "activation",
                                                "pooling",     "dense",      "loss",
                                                "update",      "communication", "other"};
    return names;
}

double& BenchBreakdown::at(const std::string& category) {
    if (category == "convolution") return convolution;
    if (category == "batch_norm") return batchNorm;
    if (category == "activation") return activation;
    if (category == "pooling") return pooling;
    if (category == "dense") return dense;
    if (category == "loss") return loss;
    if (category == "update") return update;
    if (category == "communication") return communication;
    if (category == "other") return other;
    throw Error("unknown time category '" + category + "'", "breakdown_ms",
                "use one of convolution, batch_norm, activation, pooling, dense, loss, update, "
                "communication, other");
}

double BenchBreakdown::at(const std::string& category) const {
    return const_cast<BenchBreakdown&>(*this).at(category);
}

std::vector<std::pair<std::string, double>> BenchBreakdown::entries() const {
    std::vector<std::pair<std::string, double>> result;
    for (const std::string& category : categories()) result.emplace_back(category, at(category));
    return result;
}

double BenchBreakdown::totalMs() const {
    double total = 0;
    for (const auto& [category, ms] : entries()) total += ms;
    return total;
}

std::string toString(BenchStatus status) {
    switch (status) {
    case BenchStatus::Ok: return "ok";
    case BenchStatus::Failed: return "failed";
    case BenchStatus::Cancelled: return "cancelled";
    }
    return "ok";
}

const BenchConfiguration* BenchReport::find(const std::string& label) const {
    for (const BenchConfiguration& configuration : configurations)
        if (configuration.label == label) return &configuration;
    return nullptr;
}

// ---- JSON out ---------------------------------------------------------------------------------

namespace {

nlohmann::ordered_json throughputJson(const BenchThroughput& throughput) {
    return {{"median", throughput.median},
            {"min", throughput.min},
            {"max", throughput.max},
            {"repeats", throughput.repeats}};
}

nlohmann::ordered_json configurationJson(const BenchConfiguration& c) {
    nlohmann::ordered_json breakdown = nlohmann::ordered_json::object();
    for (const auto& [category, ms] : c.breakdownMs.entries()) breakdown[category] = ms;
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const BenchLayerTime& layer : c.layers)
        layers.push_back({{"name", layer.name},
                          {"type", layer.type},
                          {"category", layer.category},
                          {"forward_ms", layer.forwardMs},
                          {"backward_ms", layer.backwardMs}});
    nlohmann::ordered_json json = {
        {"label", c.label},       {"backend", c.backend}, {"precision", c.precision},
        {"threads", c.threads},   {"batch", c.batch},     {"ranks", c.ranks},
        {"nodes", c.nodes},       {"devices", c.devices}, {"status", toString(c.status)},
        {"error", c.error},       {"steps", c.steps},     {"warmup", c.warmup},
        {"repeats", c.repeats},   {"reduced", c.reduced}, {"reduced_reason", c.reducedReason},
        {"train_images_per_second", throughputJson(c.trainImagesPerSecond)},
        {"inference_images_per_second", c.inferenceImagesPerSecond},
        {"peak_memory_bytes", c.peakMemoryBytes},
        {"breakdown_ms", breakdown},
        {"layers", layers}};
    return json;
}

nlohmann::ordered_json machineJson(const BenchMachine& m) {
    nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
    for (const BenchGpu& gpu : m.gpus) gpus.push_back({{"name", gpu.name}, {"memory_bytes", gpu.memoryBytes}});
    return {{"hostname", m.hostname},
            {"label", m.label},
            {"cpu", {{"model", m.cpuModel}, {"cores", m.cpuCores}, {"threads", m.cpuThreads}}},
            {"memory_bytes", m.memoryBytes},
            {"gpus", gpus},
            {"nodes", m.nodes},
            {"versions",
             {{"driver", m.versions.driver},
              {"cuda", m.versions.cuda},
              {"cudnn", m.versions.cudnn},
              {"nccl", m.versions.nccl},
              {"onednn", m.versions.onednn},
              {"openmpi", m.versions.openmpi}}}};
}

nlohmann::ordered_json orderedReportJson(const BenchReport& report) {
    nlohmann::ordered_json configurations = nlohmann::ordered_json::array();
    for (const BenchConfiguration& c : report.configurations) configurations.push_back(configurationJson(c));
    return {{"schema", kBenchReportSchema},
            {"created", report.created},
            {"tool",
             {{"program", report.tool.program},
              {"version", report.tool.version},
              {"command", report.tool.command}}},
            {"machine", machineJson(report.machine)},
            {"network",
             {{"name", report.network.name},
              {"input", report.network.input},
              {"classes", report.network.classes},
              {"parameters", report.network.parameters},
              {"train_gflop_per_image", report.network.trainGflopPerImage}}},
            {"breakdown_method", report.breakdownMethod},
            {"configurations", configurations}};
}

// ---- JSON in: every read names the field it reads ----------------------------------------------

// A JSON value and the path that led to it ("configurations[2].batch"), so that every error
// says which field of which file is wrong.
class Field {
public:
    Field(const nlohmann::json& value, std::string path, const std::string& source)
        : value_(value), path_(std::move(path)), source_(source) {}

    Field operator[](const std::string& key) const {
        requireType(value_.is_object(), "an object");
        const std::string path = path_.empty() ? key : path_ + "." + key;
        auto it = value_.find(key);
        if (it == value_.end()) fail(path, "is missing");
        return Field(*it, path, source_);
    }
    // Null when absent: optional fields added after version 1 of the schema.
    std::optional<Field> optional(const std::string& key) const {
        requireType(value_.is_object(), "an object");
        auto it = value_.find(key);
        if (it == value_.end() || it->is_null()) return std::nullopt;
        return Field(*it, path_.empty() ? key : path_ + "." + key, source_);
    }
    std::vector<Field> items() const {
        requireType(value_.is_array(), "an array");
        std::vector<Field> result;
        for (std::size_t i = 0; i < value_.size(); ++i)
            result.emplace_back(value_[i], path_ + "[" + std::to_string(i) + "]", source_);
        return result;
    }
    std::string text() const {
        requireType(value_.is_string(), "a string");
        return value_.get<std::string>();
    }
    double number() const {
        requireType(value_.is_number(), "a number");
        return value_.get<double>();
    }
    int integer() const {
        requireType(value_.is_number_integer(), "an integer");
        return value_.get<int>();
    }
    std::uint64_t count() const {
        requireType(value_.is_number_unsigned() || (value_.is_number_integer() && value_.get<std::int64_t>() >= 0),
                    "a non-negative integer");
        return value_.get<std::uint64_t>();
    }
    bool flag() const {
        requireType(value_.is_boolean(), "true or false");
        return value_.get<bool>();
    }
    [[noreturn]] void fail(const std::string& what) const { fail(path_, what); }

private:
    void requireType(bool ok, const std::string& expected) const {
        if (!ok) fail(path_.empty() ? "the report" : path_, std::string("expected ") + expected + ", found " +
                                                                 value_.type_name());
    }
    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw Error(path + ": " + what, source_, "a cnnstudio-bench report (" +
                                                     std::string(kBenchReportSchema) + ") is expected");
    }
    const nlohmann::json& value_;
    std::string path_;
    const std::string& source_;
};

std::string textOr(const Field& object, const std::string& key) {
    auto field = object.optional(key);
    return field ? field->text() : std::string();
}

BenchStatus statusFrom(const Field& field) {
    const std::string text = field.text();
    if (text == "ok") return BenchStatus::Ok;
    if (text == "failed") return BenchStatus::Failed;
    if (text == "cancelled") return BenchStatus::Cancelled;
    field.fail("'" + text + "' is not a status (ok, failed or cancelled)");
}

BenchThroughput throughputFrom(const Field& field) {
    BenchThroughput throughput;
    throughput.median = field["median"].number();
    throughput.min = field["min"].number();
    throughput.max = field["max"].number();
    for (const Field& repeat : field["repeats"].items()) throughput.repeats.push_back(repeat.number());
    return throughput;
}

BenchConfiguration configurationFrom(const Field& f) {
    BenchConfiguration c;
    c.label = f["label"].text();
    c.backend = f["backend"].text();
    c.precision = f["precision"].text();
    c.threads = f["threads"].integer();
    c.batch = f["batch"].integer();
    c.ranks = f["ranks"].integer();
    c.nodes = f["nodes"].integer();
    c.devices = f["devices"].text();
    if (c.devices != "cpu" && c.devices != "gpu") f["devices"].fail("'" + c.devices + "' is not cpu or gpu");
    c.status = statusFrom(f["status"]);
    c.error = textOr(f, "error");
    c.steps = f["steps"].integer();
    c.warmup = f["warmup"].integer();
    c.repeats = f["repeats"].integer();
    c.reduced = f["reduced"].flag();
    c.reducedReason = textOr(f, "reduced_reason");
    c.trainImagesPerSecond = throughputFrom(f["train_images_per_second"]);
    c.inferenceImagesPerSecond = f["inference_images_per_second"].number();
    c.peakMemoryBytes = f["peak_memory_bytes"].count();
    const Field breakdown = f["breakdown_ms"];
    for (const std::string& category : BenchBreakdown::categories())
        c.breakdownMs.at(category) = breakdown[category].number();
    for (const Field& layer : f["layers"].items()) {
        BenchLayerTime time;
        time.name = layer["name"].text();
        time.type = layer["type"].text();
        time.category = layer["category"].text();
        const auto& known = BenchBreakdown::categories();
        if (std::find(known.begin(), known.end(), time.category) == known.end())
            layer["category"].fail("'" + time.category + "' is not a time category");
        time.forwardMs = layer["forward_ms"].number();
        time.backwardMs = layer["backward_ms"].number();
        c.layers.push_back(time);
    }
    return c;
}

BenchMachine machineFrom(const Field& f) {
    BenchMachine m;
    m.hostname = f["hostname"].text();
    m.label = f["label"].text();
    const Field cpu = f["cpu"];
    m.cpuModel = cpu["model"].text();
    m.cpuCores = cpu["cores"].integer();
    m.cpuThreads = cpu["threads"].integer();
    m.memoryBytes = f["memory_bytes"].count();
    for (const Field& gpu : f["gpus"].items()) m.gpus.push_back({gpu["name"].text(), gpu["memory_bytes"].count()});
    m.nodes = f["nodes"].integer();
    const Field versions = f["versions"];
    m.versions = {textOr(versions, "driver"), textOr(versions, "cuda"), textOr(versions, "cudnn"),
                  textOr(versions, "nccl"),   textOr(versions, "onednn"), textOr(versions, "openmpi")};
    return m;
}

BenchNetwork networkFrom(const Field& f) {
    BenchNetwork n;
    n.name = f["name"].text();
    for (const Field& extent : f["input"].items()) n.input.push_back(extent.integer());
    n.classes = f["classes"].integer();
    n.parameters = f["parameters"].count();
    n.trainGflopPerImage = f["train_gflop_per_image"].number();
    return n;
}

}  // namespace

nlohmann::json toJson(const BenchReport& report) {
    return nlohmann::json::parse(orderedReportJson(report).dump());
}

BenchReport benchReportFromJson(const nlohmann::json& json, const std::string& source) {
    const Field root(json, "", source);
    const std::string schema = root["schema"].text();
    if (schema != kBenchReportSchema)
        root["schema"].fail("'" + schema + "' is not a schema this version reads (" +
                            std::string(kBenchReportSchema) + ")");
    BenchReport report;
    report.created = root["created"].text();
    const Field tool = root["tool"];
    report.tool = {tool["program"].text(), tool["version"].text(), tool["command"].text()};
    report.machine = machineFrom(root["machine"]);
    report.network = networkFrom(root["network"]);
    report.breakdownMethod = textOr(root, "breakdown_method");
    std::set<std::string> labels;
    for (const Field& item : root["configurations"].items()) {
        BenchConfiguration configuration = configurationFrom(item);
        if (!labels.insert(configuration.label).second)
            item["label"].fail("'" + configuration.label + "' labels two configurations");
        report.configurations.push_back(std::move(configuration));
    }
    return report;
}

void saveBenchReport(const BenchReport& report, const std::filesystem::path& file) {
    writeFileAtomically(file, orderedReportJson(report).dump(2) + "\n");
}

BenchReport loadBenchReport(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) throw Error("cannot open the benchmark report", file.string(), "check the path");
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(text.str());
    } catch (const nlohmann::json::parse_error& error) {
        throw Error(std::string("not JSON: ") + error.what(), file.string(),
                    "a cnnstudio-bench report is expected");
    }
    return benchReportFromJson(json, file.string());
}

// ---- Comparisons ------------------------------------------------------------------------------

std::string toString(BenchBaseline baseline) {
    return baseline == BenchBaseline::CpuRefOneThread ? "cpu-ref 1 thread" : "best CPU";
}

const BenchConfiguration* findBaseline(const BenchReport& report, BenchBaseline baseline) {
    const BenchConfiguration* best = nullptr;
    for (const BenchConfiguration& c : report.configurations) {
        if (!c.ok() || c.devices != "cpu") continue;
        if (baseline == BenchBaseline::CpuRefOneThread) {
            if (c.backend == "cpu-ref" && c.threads == 1 && c.ranks == 1) return &c;
            continue;
        }
        if (!best || c.trainImagesPerSecond.median > best->trainImagesPerSecond.median) best = &c;
    }
    return best;
}

std::optional<double> speedupOver(const BenchConfiguration& configuration,
                                  const BenchConfiguration& baseline) {
    if (!configuration.ok() || !baseline.ok() || baseline.trainImagesPerSecond.median <= 0)
        return std::nullopt;
    return configuration.trainImagesPerSecond.median / baseline.trainImagesPerSecond.median;
}

std::optional<double> scalingEfficiency(const BenchReport& report,
                                        const BenchConfiguration& configuration) {
    if (!configuration.ok()) return std::nullopt;
    for (const BenchConfiguration& single : report.configurations) {
        if (!single.ok() || single.ranks != 1 || single.backend != configuration.backend ||
            single.precision != configuration.precision || single.batch != configuration.batch)
            continue;
        if (single.trainImagesPerSecond.median <= 0) return std::nullopt;
        return configuration.trainImagesPerSecond.median /
               (configuration.ranks * single.trainImagesPerSecond.median);
    }
    return std::nullopt;
}

// ---- The machine ------------------------------------------------------------------------------

namespace {

// Physical cores: distinct (physical id, core id) pairs of /proc/cpuinfo; the logical count
// where the file does not say (containers, other kernels).
int physicalCores(int logicalThreads) {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::set<std::pair<std::string, std::string>> cores;
    std::string physicalId;
    for (std::string line; std::getline(cpuinfo, line);) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
        if (line.rfind("physical id", 0) == 0) physicalId = value;
        if (line.rfind("core id", 0) == 0) cores.emplace(physicalId, value);
    }
    return cores.empty() ? logicalThreads : int(cores.size());
}

std::string hostName() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
    return name;
}

std::uint64_t physicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? std::uint64_t(pages) * std::uint64_t(pageSize) : 0;
}

// "Open MPI v4.1.4, package: Debian OpenMPI, ..." -> "Open MPI v4.1.4". MPI allows asking
// before MPI_Init.
std::string mpiLibraryVersion() {
#ifdef CNNSTUDIO_HAVE_MPI
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return {};
    std::string version(text, std::size_t(std::max(0, length)));
    return version.substr(0, version.find(','));
#else
    return {};
#endif
}

}  // namespace

BenchMachine describeMachine(const HardwareInfo& hardware) {
    BenchMachine machine;
    machine.hostname = hostName();
    machine.label = machine.hostname;
    machine.cpuModel = hardware.cpuName;
    machine.cpuThreads = int(std::max(1u, std::thread::hardware_concurrency()));
    machine.cpuCores = physicalCores(machine.cpuThreads);
    machine.memoryBytes = physicalMemoryBytes();
    for (const GpuInfo& gpu : hardware.gpus) machine.gpus.push_back({gpu.name, gpu.totalBytes});
    machine.versions = {hardware.driverVersion, hardware.runtimeVersion, hardware.cudnnVersion,
                        hardware.ncclVersion,   hardware.onednnVersion,  mpiLibraryVersion()};
    return machine;
}

std::string utcSecondsTimestamp() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

// ---- The per-user folder ----------------------------------------------------------------------

std::filesystem::path hardwareReportFolder() {
    if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data == '/')
        return std::filesystem::path(data) / "cnnstudio" / "hardware";
    const char* home = std::getenv("HOME");
    if (!home || !*home)
        throw Error("neither XDG_DATA_HOME nor HOME is set", "the hardware report folder",
                    "set HOME to save benchmark reports");
    return std::filesystem::path(home) / ".local" / "share" / "cnnstudio" / "hardware";
}

std::filesystem::path saveToHardwareFolder(const BenchReport& report,
                                           const std::filesystem::path& folder) {
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    if (error) throw Error("cannot create the folder: " + error.message(), folder.string());
    std::string stamp = report.created;
    std::replace(stamp.begin(), stamp.end(), ':', '-');  // file names without colons
    const std::filesystem::path file = folder / (stamp + "-" + report.machine.hostname + ".json");
    saveBenchReport(report, file);
    return file;
}

std::optional<std::pair<std::filesystem::path, BenchReport>>
latestReportOfMachine(const std::filesystem::path& folder, const std::string& hostname) {
    std::optional<std::pair<std::filesystem::path, BenchReport>> latest;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
        if (entry.path().extension() != ".json") continue;
        BenchReport report;
        try {
            report = loadBenchReport(entry.path());
        } catch (const Error&) {
            continue;  // not a report (or a broken one): the folder is the user's, other files may live there
        }
        if (report.machine.hostname != hostname) continue;
        if (!latest || report.created > latest->second.created) latest.emplace(entry.path(), std::move(report));
    }
    return latest;
}

}  // namespace cnnstudio
