#include "train/run_config.h"

#include "cnnstudio/backend.h"
#include "cnnstudio/error.h"

namespace cnnstudio::app {

std::string DistributedLayout::describe() const {
    if (ranks() == 1) return "one process";
    std::string text = std::to_string(ranks()) + " ranks";
    if (nodes > 1) text += " (" + std::to_string(ranksPerNode) + " per node on " + std::to_string(nodes) + " nodes, hostfile " + hostfile + ")";
    return text;
}

nlohmann::json DistributedLayout::toJson() const {
    return {{"ranks_per_node", ranksPerNode}, {"nodes", nodes}, {"hostfile", hostfile}};
}

nlohmann::json RunConfig::toJson() const {
    nlohmann::json json = {{"format", "cnnstudio-run-config"},
            {"version", 1},
            {"recipe", recipe},
            {"spec", spec},
            {"dataset", dataset},
            {"backend", backend},
            {"precision", precision},
            {"threads", threads},
            {"batch", batch},
            {"augment", augment},
            {"class_weights_mode", classWeights},
            {"limit", limit},
            {"skip_bad", skipBad},
            {"normalization", {{"mean", normalization.mean}, {"stddev", normalization.stddev}}},
            {"distributed", distributed.toJson()},
            {"trainer", trainer.toJson()}};
    if (prediction)
        json["prediction"] = {{"epoch_s", prediction->epochSeconds},
                              {"total_s", prediction->totalSeconds},
                              {"basis", prediction->basis}};
    return json;
}

RunConfig RunConfig::fromJson(const nlohmann::json& json, const std::string& source) {
    if (!json.is_object() || json.value("format", "") != "cnnstudio-run-config" || json.value("version", 0) != 1)
        throw Error("not a version 1 CNN Studio run configuration", source,
                    "resume a run folder written by cnnstudio-train");
    RunConfig config;
    try {
        config.recipe = json.value("recipe", "");  // absent in runs made before recipes
        config.spec = json.at("spec").get<std::string>();
        config.dataset = json.at("dataset").get<std::string>();
        config.backend = json.at("backend").get<std::string>();
        config.precision = json.at("precision").get<std::string>();
        config.threads = json.at("threads").get<int>();
        config.batch = json.at("batch").get<int>();
        config.augment = json.at("augment").get<std::string>();
        config.classWeights = json.at("class_weights_mode").get<std::string>();
        // get<std::size_t>() would wrap a negative limit round to about 2^64: all the data.
        if (!json.at("limit").is_number_unsigned())
            throw Error("limit " + json.at("limit").dump() + " is not a count of images", source,
                        "the run folder is damaged; start a new run");
        config.limit = json.at("limit").get<std::size_t>();
        config.skipBad = json.at("skip_bad").get<bool>();
        config.normalization.mean = json.at("normalization").at("mean").get<std::vector<float>>();
        config.normalization.stddev = json.at("normalization").at("stddev").get<std::vector<float>>();
        if (json.contains("prediction") && !json.at("prediction").is_null()) {  // optional: runs before 0.1.1 have none
            const nlohmann::json& prediction = json.at("prediction");
            config.prediction = Prediction{prediction.at("epoch_s").get<double>(), prediction.at("total_s").get<double>(),
                                           prediction.at("basis").get<std::string>()};
        }
        // Runs recorded before the layout was kept ran as one process or did not say.
        if (json.contains("distributed")) {
            const nlohmann::json& layout = json.at("distributed");
            config.distributed.ranksPerNode = layout.at("ranks_per_node").get<int>();
            config.distributed.nodes = layout.at("nodes").get<int>();
            config.distributed.hostfile = layout.at("hostfile").get<std::string>();
        }
    } catch (const nlohmann::json::exception& error) {
        throw Error(std::string("the configuration is incomplete: ") + error.what(), source,
                    "the run folder is damaged; start a new run");
    }
    // As model.json's are checked (ModelInfo::fromJson): a zero stddev trained on infinities.
    if (config.normalization.mean.size() != config.normalization.stddev.size())
        throw Error("normalization has " + std::to_string(config.normalization.mean.size()) + " means and " +
                        std::to_string(config.normalization.stddev.size()) + " standard deviations",
                    source, "the run folder is damaged; start a new run");
    for (float stddev : config.normalization.stddev)
        if (!(stddev > 0))
            throw Error("a normalization stddev is not positive (" + std::to_string(stddev) + ")", source,
                        "the run folder is damaged; start a new run");
    if (config.threads < 0 || config.threads > kMaxCpuThreads)
        throw Error("threads " + std::to_string(config.threads) + " is out of range 0.." + std::to_string(kMaxCpuThreads),
                    source, "the run folder is damaged; start a new run");
    if (config.distributed.ranksPerNode < 1 || config.distributed.nodes < 1)
        throw Error("the distributed layout asks for " + std::to_string(config.distributed.ranksPerNode) +
                        " ranks per node on " + std::to_string(config.distributed.nodes) + " nodes",
                    source, "the run folder is damaged; start a new run");
    if (!json.contains("trainer")) throw Error("the configuration has no trainer settings", source);
    config.trainer = TrainerConfig::fromJson(json.at("trainer"));
    return config;
}

}  // namespace cnnstudio::app
