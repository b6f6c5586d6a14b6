// Checkpoints and model folders: written atomically (a crash at any point leaves a readable
// previous version and no litter), restored exactly, and refused with a message naming the file
// and tensor when they belong to another network.
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "synthetic_batches.h"

namespace cnnstudio {
namespace {

std::vector<std::string> folderEntries(const std::filesystem::path& folder) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

struct Model {
    std::unique_ptr<Backend> backend = createBackend("cpu-ref");
    Network network;
    Optimizer optimizer;
    explicit Model(std::uint64_t seed, NetworkSpec spec = testing::tinyNetworkSpec())
        : network(spec, *backend, 4, seed),
          optimizer(OptimizerConfig{"adam"}, *backend, network.parameterCount()) {}
    std::vector<float> parameters() {  // cpu-ref memory is host memory
        return {network.parameters(), network.parameters() + network.parameterCount()};
    }
};

std::string readText(const std::filesystem::path& file) {
    std::ifstream stream(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(stream), {}};
}

// `text` with its one `from` replaced by `to` (the test fails when `from` is not there).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from << " is not in " << text;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TrainingProgress someProgress(int epoch) {
    TrainingProgress progress;
    progress.epoch = epoch;
    progress.epochStep = 3;
    progress.step = 40;
    progress.seed = 5;
    progress.schedule = {{"plateau_scale", 0.5}, {"best_loss", 0.7}, {"epochs_without_improvement", 1}};
    progress.bestValidationAccuracy = 0.8;
    progress.bestEpoch = 2;
    return progress;
}

TEST(Checkpoint, RestoresWeightsStateOptimiserAndProgress) {
    const auto folder = testing::freshFolder() / "latest";
    Model saved(1);
    // Non-trivial optimiser and batch-norm state to carry over, in every slice (the padding
    // between slices is not state and stays zero).
    for (auto& [name, tensor] : saved.optimizer.stateTensors()) {
        std::vector<float> values(std::size_t(tensor->count()), 0.0f);
        for (const ParameterInfo& slice : saved.network.parameterInfo())
            for (std::size_t i = slice.offset; i < slice.offset + slice.count(); ++i)
                values[i] = float(i % 13) * (name == "m" ? 0.1f : 0.01f);
        tensor->fromHost(values);
    }
    for (const ParameterInfo& slice : saved.network.stateInfo())
        for (std::size_t i = slice.offset; i < slice.offset + slice.count(); ++i)
            saved.network.state()[i] = 0.25f * float(i);
    saveCheckpoint(folder, saved.network, saved.optimizer, someProgress(2));

    Model restored(2);  // other initial weights
    ASSERT_NE(saved.parameters(), restored.parameters());
    const TrainingProgress progress = loadCheckpoint(folder, restored.network, restored.optimizer);
    EXPECT_EQ(saved.parameters(), restored.parameters());
    EXPECT_EQ(std::vector<float>(saved.network.state(), saved.network.state() + saved.network.stateCount()),
              std::vector<float>(restored.network.state(), restored.network.state() + restored.network.stateCount()));
    auto savedBuffers = saved.optimizer.stateTensors(), restoredBuffers = restored.optimizer.stateTensors();
    ASSERT_EQ(savedBuffers.size(), restoredBuffers.size());
    for (std::size_t i = 0; i < savedBuffers.size(); ++i)
        EXPECT_EQ(savedBuffers[i].second->toHost(), restoredBuffers[i].second->toHost()) << savedBuffers[i].first;
    EXPECT_EQ(progress.toJson(), someProgress(2).toJson());
}

TEST(Checkpoint, ReplacingLeavesOnlyTheNewFolder) {
    const auto checkpoints = testing::freshFolder();
    const auto folder = checkpoints / "latest";
    Model model(1);
    saveCheckpoint(folder, model.network, model.optimizer, someProgress(1));
    saveCheckpoint(folder, model.network, model.optimizer, someProgress(2));
    EXPECT_EQ(folderEntries(checkpoints), std::vector<std::string>({"latest"}));
    EXPECT_EQ(folderEntries(folder),
              std::vector<std::string>({"optimizer.safetensors", "progress.json", "weights.safetensors"}));
    EXPECT_EQ(loadCheckpoint(folder, model.network, model.optimizer).epoch, 2);
}

TEST(Checkpoint, ACrashWhileWritingLeavesThePreviousCheckpointReadable) {
    const auto checkpoints = testing::freshFolder();
    const auto folder = checkpoints / "latest";
    Model model(1);
    saveCheckpoint(folder, model.network, model.optimizer, someProgress(1));

    // A crash while building the replacement leaves a half-written staging folder behind.
    std::filesystem::create_directories(checkpoints / "latest.partial");
    std::ofstream(checkpoints / "latest.partial" / "weights.safetensors") << "half";
    EXPECT_EQ(loadCheckpoint(folder, model.network, model.optimizer).epoch, 1);
    saveCheckpoint(folder, model.network, model.optimizer, someProgress(2));
    EXPECT_EQ(folderEntries(checkpoints), std::vector<std::string>({"latest"}));

    // A crash between the two renames of the fallback path leaves only "<name>.previous".
    std::filesystem::rename(folder, checkpoints / "latest.previous");
    EXPECT_TRUE(checkpointExists(folder));
    EXPECT_EQ(loadCheckpoint(folder, model.network, model.optimizer).epoch, 2);
}

// The trainer's best checkpoint of an improving epoch is the latest one, linked rather than
// written twice: the copy must outlive the latest being replaced at the next epoch.
TEST(Checkpoint, ACopyLinksTheFilesAndOutlivesTheReplacedSource) {
    const auto checkpoints = testing::freshFolder();
    Model model(1);
    const std::vector<float> atEpochOne = model.parameters();
    saveCheckpoint(checkpoints / "latest", model.network, model.optimizer, someProgress(1));
    copyCheckpoint(checkpoints / "latest", checkpoints / "best");
    EXPECT_EQ(folderEntries(checkpoints), std::vector<std::string>({"best", "latest"}));
    for (const char* file : {"optimizer.safetensors", "progress.json", "weights.safetensors"})
        EXPECT_EQ(std::filesystem::hard_link_count(checkpoints / "best" / file), 2u) << file << " was not linked";

    model.network.parameters()[0] += 1.0f;
    saveCheckpoint(checkpoints / "latest", model.network, model.optimizer, someProgress(2));
    EXPECT_EQ(std::filesystem::hard_link_count(checkpoints / "best" / "weights.safetensors"), 1u);
    Model restored(2);
    EXPECT_EQ(loadCheckpoint(checkpoints / "best", restored.network, restored.optimizer).epoch, 1);
    EXPECT_EQ(restored.parameters(), atEpochOne);
    EXPECT_EQ(loadCheckpoint(checkpoints / "latest", restored.network, restored.optimizer).epoch, 2);
}

TEST(Checkpoint, CopyingAMissingCheckpointNamesTheFileAndLeavesNoLitter) {
    const auto checkpoints = testing::freshFolder();
    std::filesystem::create_directories(checkpoints / "latest");
    try {
        copyCheckpoint(checkpoints / "latest", checkpoints / "best");
        FAIL() << "copying an empty folder succeeded";
    } catch (const Error& error) {
        EXPECT_NE(error.where().find("weights.safetensors"), std::string::npos) << error.what();
    }
    EXPECT_EQ(folderEntries(checkpoints), std::vector<std::string>({"latest"}));
}

TEST(Checkpoint, AFailedWriteLeavesNoTemporaryFiles) {
    const auto folder = testing::freshFolder();
    EXPECT_THROW(writeSafetensors(folder / "no-such-folder" / "w.safetensors", {{"w", {1}, {1.0f}}}), Error);
    writeSafetensors(folder / "w.safetensors", {{"w", {1}, {1.0f}}});
    writeSafetensors(folder / "w.safetensors", {{"w", {2}, {1.0f, 2.0f}}});
    EXPECT_EQ(folderEntries(folder), std::vector<std::string>({"w.safetensors"}));
    EXPECT_EQ(readSafetensors(folder / "w.safetensors").tensors[0].shape, std::vector<std::int64_t>({2}));
}

TEST(Checkpoint, AnotherNetworksCheckpointNamesTheTensor) {
    const auto folder = testing::freshFolder() / "latest";
    Model tiny(1);
    saveCheckpoint(folder, tiny.network, tiny.optimizer, someProgress(1));
    NetworkSpec wider = testing::tinyNetworkSpec();
    wider.find("conv")->params["filters"] = 6;
    Model other(1, wider);
    try {
        loadCheckpoint(folder, other.network, other.optimizer);
        FAIL() << "a checkpoint of another network must be refused";
    } catch (const Error& error) {
        // Parameters are laid out last layer first, so the dense layer is the first mismatch.
        EXPECT_NE(std::string(error.what()).find("'logits.weight' has shape [3, 64], the network expects [3, 96]"),
                  std::string::npos)
            << error.what();
        EXPECT_NE(error.where().find("weights.safetensors"), std::string::npos);
    }
}

TEST(Checkpoint, DamagedProgressNamesTheFile) {
    const auto folder = testing::freshFolder() / "latest";
    Model model(1);
    saveCheckpoint(folder, model.network, model.optimizer, someProgress(1));
    std::ofstream(folder / "progress.json") << R"({"format": "cnnstudio-checkpoint", "version": 1, "epoch": "two"})";
    try {
        loadCheckpoint(folder, model.network, model.optimizer);
        FAIL();
    } catch (const Error& error) {
        EXPECT_NE(error.where().find("progress.json"), std::string::npos) << error.what();
    }
}

// Found with tests/fuzz/checkpoint_fuzz: a progress.json whose format is not a string ended the
// process with an uncaught nlohmann type_error, a counter of 1e300 was cast to int (undefined
// behaviour), and one nested 100,000 levels deep overflowed the stack.
TEST(Checkpoint, ProgressOfAnyShapeIsAnErrorNamingTheFile) {
    const auto folder = testing::freshFolder() / "latest";
    Model model(1);
    saveCheckpoint(folder, model.network, model.optimizer, someProgress(1));
    const std::string valid = readText(folder / "progress.json");
    const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
    for (const std::string& progress :
         {std::string(R"({"format": 1, "version": 1})"), std::string(R"({"format": "cnnstudio-checkpoint", "version": [1]})"),
          replaced(valid, "\"epoch\": 1", "\"epoch\": 1e300"), replaced(valid, "\"epoch\": 1", "\"epoch\": 4294967296"),
          replaced(valid, "\"step\": 40", "\"step\": 18446744073709551615"),
          replaced(valid, "\"schedule\": {", "\"schedule\": {\"deep\": " + deep + ", ")}) {
        std::ofstream(folder / "progress.json", std::ios::trunc) << progress;
        try {
            loadCheckpoint(folder, model.network, model.optimizer);
            ADD_FAILURE() << "loaded " << progress.substr(0, 200);
        } catch (const Error& error) {
            EXPECT_NE(error.where().find("progress.json"), std::string::npos) << error.what();
        }
    }
}

// NaN weights once loaded silently and gave "accuracy 58% (loss -nan)".
TEST(ModelFolder, NanWeightIsRefusedNamingTheFileAndTensor) {
    const auto folder = testing::freshFolder() / "model";
    Model model(3);
    ModelInfo info;
    info.classNames = {"circle", "square", "star"};
    saveModel(folder, model.network, info);
    ModelFolder read = readModelFolder(folder);
    read.weights.front().values.at(2) = std::numeric_limits<float>::quiet_NaN();
    try {
        loadNetworkTensors(model.network, read.weights, folder / "model.safetensors");
        FAIL() << "NaN weights must be refused";
    } catch (const Error& error) {
        EXPECT_EQ(error.where(), (folder / "model.safetensors").string());
        EXPECT_EQ(error.reason(), "tensor '" + read.weights.front().name + "' holds NaN at element 2");
    }
}

// fp16 holds at most 65504: such a weight fails the write, which leaves neither the staged
// folder (model.partial) nor a model folder behind.
TEST(ModelFolder, AFailedWriteLeavesNoStagedFolder) {
    const auto root = testing::freshFolder();
    Model model(3);
    ModelInfo info;
    info.classNames = {"circle", "square", "star"};
    saveModel(root / "model", model.network, info);
    ModelFolder read = readModelFolder(root / "model");
    read.weights.front().values.at(0) = 1e6f;
    EXPECT_THROW(writeModelFolder(root / "half", read, WeightsDtype::F16), Error);
    EXPECT_EQ(folderEntries(root), std::vector<std::string>({"model"}));
}

TEST(ModelFolder, RoundTripsSpecWeightsAndClassNames) {
    const auto folder = testing::freshFolder() / "model";
    Model model(3);
    ModelInfo info;
    info.classNames = {"circle", "square", "star"};
    info.normalization = {{0.5f}, {0.25f}};
    saveModel(folder, model.network, info);
    const ModelFolder read = readModelFolder(folder);
    EXPECT_EQ(read.spec, model.network.spec());
    EXPECT_EQ(read.info.classNames, info.classNames);
    EXPECT_EQ(read.info.normalization.mean, std::vector<float>({0.5f}));
    EXPECT_EQ(read.info.normalization.stddev, std::vector<float>({0.25f}));
    Model other(4);
    loadNetworkTensors(other.network, read.weights, folder);
    EXPECT_EQ(other.parameters(), model.parameters());

    info.classNames.pop_back();
    EXPECT_THROW(saveModel(folder, model.network, info), Error);  // 2 names, 3 outputs
}

}  // namespace
}  // namespace cnnstudio
