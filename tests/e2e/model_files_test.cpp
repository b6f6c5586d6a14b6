// cnnstudio-train's commands that write model files the user names (export, import) as a user
// runs them: they never destroy a folder or file that is not theirs to replace, and never write
// a model whose weights do not fit its network.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "train_worker.h"

namespace cnnstudio::e2e {
namespace {

// An installed model (resources/models), so no test here has to train one first.
const std::string kInstalledModel = "fer-mini-xception";

// Removed at the end when every test passed (a failure keeps it).
const std::filesystem::path kScratchRoot = scratchRootRemovedOnSuccess("cnnstudio-model-files");

std::filesystem::path scratchFolder(const std::string& name) { return freshFolder(kScratchRoot, name); }

std::string fileText(const std::filesystem::path& file) {
    std::ifstream stream(file);
    std::ostringstream text;
    text << stream.rdbuf();
    return text.str();
}

// The installed model as an ONNX file in `work`.
std::filesystem::path exportedOnnx(const std::filesystem::path& work) {
    const auto onnx = work / "model.onnx";
    const ProcessResult exported = train({"export", kInstalledModel, "--onnx", onnx.string()}, work);
    EXPECT_EQ(exported.exitCode, 0) << exported.err;
    return onnx;
}

TEST(ModelFolderOutput, ImportRefusesAFolderOfUserFilesAndKeepsThem) {
    const auto work = scratchFolder("user-files");
    const auto onnx = exportedOnnx(work);
    const auto documents = work / "documents";
    std::filesystem::create_directories(documents);
    std::ofstream(documents / "thesis.tex") << "thesis";

    const ProcessResult imported = train({"import", onnx.string(), "--out", documents.string()}, work);
    EXPECT_EQ(imported.exitCode, 1);
    EXPECT_NE(imported.err.find(documents.string()), std::string::npos) << imported.err;
    EXPECT_NE(imported.err.find("'thesis.tex', which is not part of a model folder"), std::string::npos)
        << imported.err;
    EXPECT_NE(imported.err.find("new or empty folder"), std::string::npos) << imported.err;
    EXPECT_EQ(fileText(documents / "thesis.tex"), "thesis");
}

TEST(ModelFolderOutput, ImportRefusesTheFolderHoldingItsInput) {
    const auto work = scratchFolder("input-folder");
    const auto onnx = exportedOnnx(work);
    const auto models = work / "models";
    std::filesystem::create_directories(models);
    std::filesystem::copy_file(onnx, models / "model.onnx");

    const ProcessResult imported =
        train({"import", (models / "model.onnx").string(), "--out", (work / "models" / ".." / "models").string()},
              work);
    EXPECT_EQ(imported.exitCode, 1);
    EXPECT_NE(imported.err.find("which the new model is made from"), std::string::npos) << imported.err;
    EXPECT_TRUE(std::filesystem::exists(models / "model.onnx"));
}

TEST(ModelFolderOutput, ImportRefusesARunThatIsTrainingAndAFile) {
    const auto work = scratchFolder("run-and-file");
    const auto onnx = exportedOnnx(work);
    const auto run = work / "run";
    std::filesystem::create_directories(run);
    std::ofstream(run / "train.lock") << ::getpid();
    const ProcessResult intoRun = train({"import", onnx.string(), "--out", run.string()}, work);
    EXPECT_EQ(intoRun.exitCode, 1);
    EXPECT_NE(intoRun.err.find("'train.lock'"), std::string::npos) << intoRun.err;
    EXPECT_TRUE(std::filesystem::exists(run / "train.lock"));

    std::ofstream(work / "afile") << "x";
    const ProcessResult ontoFile = train({"import", onnx.string(), "--out", (work / "afile").string()}, work);
    EXPECT_EQ(ontoFile.exitCode, 1);
    EXPECT_NE(ontoFile.err.find("is not a folder"), std::string::npos) << ontoFile.err;
    EXPECT_EQ(fileText(work / "afile"), "x");
}

TEST(ModelFolderOutput, AnEarlierModelFolderOrAnEmptyFolderIsReplaced) {
    const auto work = scratchFolder("replace-model");
    const auto onnx = exportedOnnx(work);
    const auto target = work / "imported";
    std::filesystem::create_directories(target);
    const ProcessResult intoEmpty = train({"import", onnx.string(), "--out", target.string()}, work);
    ASSERT_EQ(intoEmpty.exitCode, 0) << intoEmpty.err;
    const ProcessResult again = train({"import", onnx.string(), "--out", target.string()}, work);
    EXPECT_EQ(again.exitCode, 0) << again.err;
    const ProcessResult exported =
        train({"export", kInstalledModel, "--model-folder", target.string(), "--weights-dtype", "bf16"}, work);
    EXPECT_EQ(exported.exitCode, 0) << exported.err;
    EXPECT_TRUE(std::filesystem::exists(target / "model.json"));
}

TEST(ModelFolderOutput, ExportRefusesTheModelsOwnFolderAndARunFolder) {
    const auto work = scratchFolder("export-onto-input");
    const auto model = work / "model";
    ASSERT_EQ(train({"export", kInstalledModel, "--model-folder", model.string()}, work).exitCode, 0);
    const ProcessResult inPlace =
        train({"export", model.string(), "--model-folder", model.string(), "--weights-dtype", "bf16"}, work);
    EXPECT_EQ(inPlace.exitCode, 1);
    EXPECT_NE(inPlace.err.find("which the new model is made from"), std::string::npos) << inPlace.err;

    // A run folder: its model/ beside config.json and the events.
    const auto run = work / "run";
    std::filesystem::create_directories(run);
    std::filesystem::copy(model, run / "model");
    std::ofstream(run / "config.json") << "{}";
    const ProcessResult intoRun = train({"export", run.string(), "--model-folder", run.string()}, work);
    EXPECT_EQ(intoRun.exitCode, 1);
    EXPECT_NE(intoRun.err.find(run.string()), std::string::npos) << intoRun.err;
    EXPECT_TRUE(std::filesystem::exists(run / "config.json"));
    EXPECT_TRUE(std::filesystem::exists(run / "model" / "model.safetensors"));
}

// A model folder whose spec was edited after training (a colour input) holds weights of another
// network: predict and evaluate refuse it, and export must not write it out as if it were whole.
TEST(ModelExport, WeightsThatDoNotFitTheSpecAreRefused) {
    const auto work = scratchFolder("mismatched-weights");
    const auto model = work / "model";
    ASSERT_EQ(train({"export", kInstalledModel, "--model-folder", model.string()}, work).exitCode, 0);
    nlohmann::json spec = nlohmann::json::parse(std::ifstream(model / "spec.json"));
    for (nlohmann::json& node : spec["nodes"])
        if (node["type"] == "Input") node["params"]["channels"] = 3;
    std::ofstream(model / "spec.json") << spec.dump();

    const ProcessResult onnx = train({"export", model.string(), "--onnx", (work / "model.onnx").string()}, work);
    EXPECT_EQ(onnx.exitCode, 1);
    EXPECT_NE(onnx.err.find("model.safetensors"), std::string::npos) << onnx.err;
    EXPECT_NE(onnx.err.find("has shape"), std::string::npos) << onnx.err;
    EXPECT_FALSE(std::filesystem::exists(work / "model.onnx"));

    const ProcessResult folder = train({"export", model.string(), "--model-folder", (work / "copy").string()}, work);
    EXPECT_EQ(folder.exitCode, 1);
    EXPECT_FALSE(std::filesystem::exists(work / "copy"));
}

TEST(ModelExport, OnnxOntoTheModelsOwnFilesIsRefused) {
    const auto work = scratchFolder("onnx-onto-model");
    const auto model = work / "model";
    ASSERT_EQ(train({"export", kInstalledModel, "--model-folder", model.string()}, work).exitCode, 0);
    const std::string weights = fileText(model / "model.safetensors");
    const ProcessResult exported = train(
        {"export", model.string(), "--onnx", (work / "." / "model" / "model.safetensors").string()}, work);
    EXPECT_EQ(exported.exitCode, 1);
    EXPECT_NE(exported.err.find("--onnx"), std::string::npos) << exported.err;
    EXPECT_NE(exported.err.find("is the same file as model file"), std::string::npos) << exported.err;
    EXPECT_EQ(fileText(model / "model.safetensors"), weights);
}

}  // namespace
}  // namespace cnnstudio::e2e
