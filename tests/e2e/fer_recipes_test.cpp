// Recipes, installed models and model cards as a user meets them: `recipes` lists them, a
// recipe's settings reach config.json with the command line's overrides, a trained model exported
// with bf16 weights into a models folder is found by name by `models`, `evaluate` (with
// test-time augmentation) and `predict`, and `card` writes its MODEL_CARD.md. A trained run
// teaches a new one (--teacher).
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "train_worker.h"

namespace cnnstudio::e2e {
namespace {

std::filesystem::path scratchFolder(const std::string& name) {
    return freshFolder(std::filesystem::path(::testing::TempDir()) / ("cnnstudio-fer-e2e-" + std::to_string(::getpid())),
                       name);
}

// A FER2013-format CSV: `training` Training rows and `publicTest` PublicTest rows of random
// 48x48 faces, labels cycling through the 7 emotions.
void writeTinyFerCsv(const std::filesystem::path& file, int training, int publicTest) {
    std::ofstream csv(file);
    csv << "emotion,pixels,Usage\n";
    std::mt19937 random(5);
    for (int row = 0; row < training + publicTest; ++row) {
        csv << row % 7 << ",";
        for (int i = 0; i < 48 * 48; ++i) csv << (i ? " " : "") << random() % 256;
        csv << "," << (row < training ? "Training" : "PublicTest") << "\n";
    }
}

nlohmann::json readJson(const std::filesystem::path& file) {
    std::ifstream stream(file);
    return nlohmann::json::parse(stream);
}

TEST(Recipes, ListedWithTheirNetworksAndDataSetKind) {
    const ProcessResult listed = train({"recipes"}, scratchFolder("list"));
    ASSERT_EQ(listed.exitCode, 0) << listed.err;
    for (const char* line : {"fer-cnn          preset:fer-cnn", "mini-xception    preset:mini-xception",
                             "resnet-fer       preset:resnet-fer", "vgg-wide         preset:vgg-wide"})
        EXPECT_NE(listed.out.find(line), std::string::npos) << line << "\n" << listed.out;
    EXPECT_NE(listed.out.find("fer2013"), std::string::npos);
}

// The recipe names the network: --summary needs nothing else (it asked for --preset or --spec).
TEST(Recipes, SummaryShowsTheRecipesNetwork) {
    const ProcessResult summary = train({"--recipe", "resnet4-fer", "--summary"}, scratchFolder("summary"));
    EXPECT_EQ(summary.exitCode, 0) << summary.err;
    EXPECT_NE(summary.out.find("3,909,879"), std::string::npos) << summary.out;
}

TEST(Recipes, NeedTheirKindOfDataSet) {
    const auto work = scratchFolder("kind");
    const ProcessResult noData = train({"--recipe", "fer-cnn"}, work);
    EXPECT_EQ(noData.exitCode, 2);
    EXPECT_NE(noData.err.find("--dataset fer2013:PATH"), std::string::npos) << noData.err;
    const ProcessResult wrongData = train({"--recipe", "fer-cnn", "--dataset", "fashion-mnist"}, work);
    EXPECT_EQ(wrongData.exitCode, 2);
    EXPECT_NE(wrongData.err.find("is for fer2013 data"), std::string::npos) << wrongData.err;
}

// One training run checked four ways (ctest runs each test in its own process).
TEST(Recipes, ResolvedIntoConfigAndTheModelShipsByName) {
    const auto work = scratchFolder("ship");
    const auto csv = work / "fer-tiny.csv";
    writeTinyFerCsv(csv, 32, 14);
    const auto runDir = work / "run";
    const ProcessResult trained =
        train({"--recipe", "fer-cnn", "--dataset", "fer2013:" + csv.string(), "--backend", "cpu", "--precision", "fp32",
               "--epochs", "1", "--batch", "8", "--threads", "2", "--target-accuracy", "0.01", "--run-dir",
               runDir.string()},
              work);
    ASSERT_EQ(trained.exitCode, 0) << trained.err;
    // The time to --target-accuracy is printed at the end ("first reached after ..." or "never reached").
    EXPECT_NE(trained.out.find("1.00% validation accuracy "), std::string::npos) << trained.out;

    // The recipe's settings, with the command line's batch, epochs, backend and precision.
    const nlohmann::json config = readJson(runDir / "config.json");
    EXPECT_EQ(config["recipe"], "fer-cnn");
    EXPECT_EQ(config["spec"], "preset:fer-cnn");
    EXPECT_EQ(config["batch"], 8);
    EXPECT_EQ(config["backend"], "cpu");
    EXPECT_EQ(config["precision"], "fp32");
    EXPECT_EQ(config["augment"], "crop=4,flip");
    EXPECT_EQ(config["trainer"]["epochs"], 1);
    EXPECT_EQ(config["trainer"]["optimizer"]["kind"], "sgd");
    EXPECT_EQ(config["trainer"]["optimizer"]["nesterov"], true);
    EXPECT_FLOAT_EQ(config["trainer"]["optimizer"]["learning_rate"].get<float>(), 0.05f);
    EXPECT_FLOAT_EQ(config["trainer"]["optimizer"]["weight_decay"].get<float>(), 5e-4f);
    EXPECT_EQ(config["trainer"]["schedule"]["kind"], "onecycle");
    EXPECT_FLOAT_EQ(config["trainer"]["label_smoothing"].get<float>(), 0.1f);
    EXPECT_DOUBLE_EQ(config["trainer"]["target_accuracy"].get<double>(), 0.01);

    // The model, exported with bf16 weights into a models folder, is found there by name.
    const auto models = work / "models";
    const ProcessResult exported = train({"export", runDir.string(), "--model-folder", (models / "tiny-fer").string(),
                                          "--weights-dtype", "bf16"},
                                         work);
    ASSERT_EQ(exported.exitCode, 0) << exported.err;
    const auto fp32Bytes = std::filesystem::file_size(runDir / "model" / "model.safetensors");
    const auto bf16Bytes = std::filesystem::file_size(models / "tiny-fer" / "model.safetensors");
    EXPECT_LT(bf16Bytes, fp32Bytes * 6 / 10);

    std::vector<std::string> environment = kQuietOpenMp;
    environment.push_back("CNNSTUDIO_MODELS_DIR=" + models.string());
    auto run = [&](std::vector<std::string> arguments) {
        arguments.insert(arguments.begin(), kTrainProgram);
        return runProcess(arguments, work.string(), environment);
    };
    const ProcessResult listed = run({"models"});
    ASSERT_EQ(listed.exitCode, 0) << listed.err;
    EXPECT_NE(listed.out.find("tiny-fer"), std::string::npos) << listed.out;

    const ProcessResult plain = run({"evaluate", "--model", "tiny-fer", "--split", "validation", "--threads", "2"});
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
    EXPECT_NE(plain.out.find("on 14 validation images"), std::string::npos) << plain.out;
    EXPECT_NE(plain.out.find("F1"), std::string::npos) << plain.out;
    for (const char* tta : {"flip", "tencrop"}) {
        const ProcessResult augmented =
            run({"evaluate", "tiny-fer", "--split", "validation", "--threads", "2", "--tta", tta});
        ASSERT_EQ(augmented.exitCode, 0) << augmented.err;
        EXPECT_NE(augmented.out.find(std::string("test-time augmentation ") + tta), std::string::npos) << augmented.out;
    }
    // An ensemble: the installed bf16 model beside the run's fp32 one; a model naming other
    // classes is refused, named.
    const ProcessResult ensemble = run({"evaluate", "tiny-fer", runDir.string(), "--split", "validation", "--threads", "2"});
    ASSERT_EQ(ensemble.exitCode, 0) << ensemble.err;
    EXPECT_NE(ensemble.out.find("on 14 validation images"), std::string::npos) << ensemble.out;
    EXPECT_NE(ensemble.out.find("ensemble of 2 models"), std::string::npos) << ensemble.out;
    const auto renamed = work / "renamed";
    std::filesystem::copy(models / "tiny-fer", renamed);
    nlohmann::json info = readJson(renamed / "model.json");
    info["classes"][0] = "Furious";
    std::ofstream(renamed / "model.json") << info.dump();
    const ProcessResult mixed = run({"evaluate", "tiny-fer", "--model", renamed.string(), "--split", "validation"});
    EXPECT_EQ(mixed.exitCode, 1);
    EXPECT_NE(mixed.err.find(renamed.string()), std::string::npos) << mixed.err;
    EXPECT_NE(mixed.err.find("its classes differ from the first model's"), std::string::npos) << mixed.err;

    const ProcessResult unknown = run({"evaluate", "--model", "no-such-model"});
    EXPECT_EQ(unknown.exitCode, 1);
    EXPECT_NE(unknown.err.find("is neither a folder nor the name of an installed model"), std::string::npos)
        << unknown.err;
    EXPECT_NE(unknown.err.find("tiny-fer"), std::string::npos) << "the models it lists: " << unknown.err;

    // The card, from the run's events.
    const ProcessResult carded = train({"card", runDir.string(), "--tta-accuracy", "0.5"}, work);
    ASSERT_EQ(carded.exitCode, 0) << carded.err;
    std::ifstream cardFile(runDir / "model" / "MODEL_CARD.md");
    const std::string card((std::istreambuf_iterator<char>(cardFile)), std::istreambuf_iterator<char>());
    for (const char* part : {"# Model card: fer-cnn", "Recipe: `fer-cnn`", "| validation (selection) |", "50.00%",
                             "Confusion matrix", "| Disgust |", "| class | precision | recall | F1 | images |",
                             "FER2013: known biases and label noise"})
        EXPECT_NE(card.find(part), std::string::npos) << part << "\n" << card;
}

// Distillation from the command line: a finished run teaches a new one; config.json records
// the teacher's model folder (absolute, for a resume from anywhere), the weight and temperature.
TEST(Distillation, ARunTeachesANewOneAndItsConfigNamesTheTeacher) {
    const auto work = scratchFolder("distil");
    const auto csv = work / "fer-tiny.csv";
    writeTinyFerCsv(csv, 32, 14);
    auto trainRun = [&](const std::filesystem::path& runDir, std::vector<std::string> extra) {
        std::vector<std::string> arguments = {"--preset", "fer-cnn", "--dataset", "fer2013:" + csv.string(),
                                              "--backend", "cpu", "--epochs", "1", "--batch", "8",
                                              "--threads", "2", "--run-dir", runDir.string()};
        arguments.insert(arguments.end(), extra.begin(), extra.end());
        return train(arguments, work);
    };
    const ProcessResult teacher = trainRun(work / "teacher", {});
    ASSERT_EQ(teacher.exitCode, 0) << teacher.err;
    const ProcessResult student =
        trainRun(work / "student", {"--teacher", (work / "teacher").string(), "--distill-weight", "0.7",
                                    "--distill-temperature", "2"});
    ASSERT_EQ(student.exitCode, 0) << student.err;
    const nlohmann::json distillation = readJson(work / "student" / "config.json")["trainer"]["distillation"];
    ASSERT_EQ(distillation["teachers"].size(), 1u) << distillation;
    EXPECT_EQ(std::filesystem::path(distillation["teachers"][0].get<std::string>()),
              std::filesystem::absolute(work / "teacher" / "model"));
    EXPECT_FLOAT_EQ(distillation["weight"].get<float>(), 0.7f);
    EXPECT_FLOAT_EQ(distillation["temperature"].get<float>(), 2.0f);
    EXPECT_TRUE(readJson(work / "teacher" / "config.json")["trainer"]["distillation"].is_null());
    const ProcessResult carded = train({"card", (work / "student").string()}, work);
    ASSERT_EQ(carded.exitCode, 0) << carded.err;
    std::ifstream cardFile(work / "student" / "model" / "MODEL_CARD.md");
    const std::string card((std::istreambuf_iterator<char>(cardFile)), std::istreambuf_iterator<char>());
    EXPECT_NE(card.find("- Distilled from 1 teacher (`model`): 0.7 of the loss learns the mean of their "
                        "probabilities at temperature 2"),
              std::string::npos) << card;

    const ProcessResult noTeacher = trainRun(work / "none", {"--distill-weight", "0.5"});
    EXPECT_EQ(noTeacher.exitCode, 2);
    EXPECT_NE(noTeacher.err.find("need a teacher"), std::string::npos) << noTeacher.err;
    const ProcessResult recipeWithoutTeachers =
        train({"--recipe", "resnet4-fer-distilled", "--dataset", "fer2013:" + csv.string()}, work);
    EXPECT_EQ(recipeWithoutTeachers.exitCode, 2);
    EXPECT_NE(recipeWithoutTeachers.err.find("recipe resnet4-fer-distilled distils"), std::string::npos)
        << recipeWithoutTeachers.err;
    const ProcessResult missing = trainRun(work / "missing", {"--teacher", "no-such-model"});
    EXPECT_NE(missing.exitCode, 0);
    EXPECT_NE(missing.err.find("no-such-model"), std::string::npos) << missing.err;
    const ProcessResult resumed = train({"--resume", (work / "student").string(), "--teacher", "x"}, work);
    EXPECT_EQ(resumed.exitCode, 2);
    EXPECT_NE(resumed.err.find("--teacher cannot be changed when resuming"), std::string::npos) << resumed.err;
}

}  // namespace
}  // namespace cnnstudio::e2e
