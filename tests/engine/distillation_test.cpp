// Distillation in the trainer (distillation.h) on cpu-ref with the tiny synthetic classes: a
// student learns what its teachers predict, on the batches it sees; teachers that cannot teach
// it are refused naming their folder; the run's config records the teachers for a resume.
#include <gtest/gtest.h>

#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/distillation.h"
#include "cnnstudio/error.h"
#include "cnnstudio/events.h"
#include "cnnstudio/network.h"
#include "cnnstudio/run_folder.h"
#include "cnnstudio/trainer.h"
#include "synthetic_batches.h"

namespace cnnstudio {
namespace {

using testing::InMemoryBatchSource;
using testing::SyntheticImages;

constexpr std::uint64_t kSeed = 23;

// The same images, every label moved on by one class: what a teacher that learnt the wrong
// names would predict.
SyntheticImages withShiftedLabels(SyntheticImages data) {
    for (std::int32_t& label : data.labels) label = (label + 1) % data.classes;
    return data;
}

struct Fixture {
    SyntheticImages train = testing::makeSyntheticImages(96, kSeed);
    SyntheticImages validation = testing::makeSyntheticImages(60, kSeed + 1);
    std::unique_ptr<Backend> backend = createBackend("cpu-ref");
    TrainerConfig config;
    RunDescription description;

    Fixture() {
        config.epochs = 6;
        config.seed = kSeed;
        config.optimizer.learningRate = 0.05f;
        description.dataset = testing::describe(train, validation);
    }

    // Trains the tiny network on `data` and returns its model folder.
    std::filesystem::path trainTeacher(const SyntheticImages& data, const std::string& name) {
        const RunFolder folder = RunFolder::create(testing::freshFolder(name));
        Network network(testing::tinyNetworkSpec(), *backend, 8, kSeed);
        EventWriter events(false);
        Trainer trainer(network, config, events);
        trainer.setRunFolder(&folder);
        InMemoryBatchSource source(data, 8, true, kSeed);
        trainer.train(source, nullptr, nullptr, description);
        return folder.modelFolder();
    }

    double accuracyOn(Network& network, const SyntheticImages& data) {
        InMemoryBatchSource source(data, 8, false, kSeed);
        return evaluate(network, source).accuracy();
    }
};

TEST(Distillation, AStudentLearnsItsTeachersPredictionsNotTheLabels) {
    Fixture f;
    const std::filesystem::path teacher = f.trainTeacher(withShiftedLabels(f.train), "teacher");
    {
        const ModelFolder model = readModelFolder(teacher);
        Network network(model.spec, *f.backend, 8, 0);
        loadNetworkTensors(network, model.weights, teacher);
        ASSERT_GT(f.accuracyOn(network, withShiftedLabels(f.validation)), 0.8) << "the teacher learnt its labels";
    }
    for (float weight : {1.0f, 0.2f}) {
        SCOPED_TRACE("distillation weight " + std::to_string(weight));
        TrainerConfig config = f.config;
        config.distillation.teachers = {teacher.string()};
        config.distillation.weight = weight;
        config.distillation.temperature = 2.0f;
        Network student(testing::tinyNetworkSpec(), *f.backend, 8, kSeed + 7);
        EventWriter events(false);
        Trainer trainer(student, config, events);
        InMemoryBatchSource source(f.train, 8, true, kSeed);  // the true labels
        trainer.train(source, nullptr, nullptr, f.description);
        const double agreesWithTeacher = f.accuracyOn(student, withShiftedLabels(f.validation));
        const double agreesWithLabels = f.accuracyOn(student, f.validation);
        if (weight == 1.0f) {
            EXPECT_GT(agreesWithTeacher, 0.8);
            EXPECT_LT(agreesWithLabels, 0.2);
        } else {
            EXPECT_GT(agreesWithLabels, agreesWithTeacher) << "at 0.2 the labels weigh more";
        }
    }
}

TEST(Distillation, ATeacherForOtherClassesOrInputsIsRefusedNamingItsFolder) {
    Fixture f;
    const std::filesystem::path teacher = f.trainTeacher(f.train, "teacher");
    TrainerConfig config = f.config;
    config.distillation.teachers = {teacher.string()};
    EventWriter events(false);

    NetworkSpec fourClasses = testing::tinyNetworkSpec();
    fourClasses.find("logits")->params["units"] = 4;
    Network other(fourClasses, *f.backend, 8, kSeed);
    try {
        Trainer trainer(other, config, events);
        FAIL() << "a 3-class teacher cannot teach a 4-class student";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("predicts 3 classes, the student 4"), std::string::npos) << error.what();
        EXPECT_EQ(error.where(), teacher.string());
    }

    Network student(testing::tinyNetworkSpec(), *f.backend, 8, kSeed);
    Trainer trainer(student, config, events);
    InMemoryBatchSource source(f.train, 8, true, kSeed);
    RunDescription renamed = f.description;
    renamed.dataset.classNames = {"a", "b", "c"};
    EXPECT_THROW(trainer.train(source, nullptr, nullptr, renamed), Error);
    RunDescription normalised = f.description;
    normalised.normalization = {{0.5f}, {0.25f}};
    try {
        trainer.train(source, nullptr, nullptr, normalised);
        FAIL() << "the teacher saw pixels / 255, the run normalises them";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("normalises its inputs"), std::string::npos) << error.what();
        EXPECT_EQ(error.where(), teacher.string());
    }

    config.distillation.teachers = {(testing::freshFolder("missing") / "nothing").string()};
    EXPECT_THROW(Trainer(student, config, events), Error);
}

TEST(Distillation, TheRunsConfigKeepsTheTeachersForAResume) {
    TrainerConfig config;
    config.distillation.teachers = {"/models/a", "/models/b"};
    config.distillation.weight = 0.7f;
    config.distillation.temperature = 3.0f;
    const TrainerConfig back = TrainerConfig::fromJson(config.toJson());
    EXPECT_EQ(back.distillation.teachers, config.distillation.teachers);
    EXPECT_FLOAT_EQ(back.distillation.weight, 0.7f);
    EXPECT_FLOAT_EQ(back.distillation.temperature, 3.0f);
    EXPECT_FALSE(TrainerConfig::fromJson(TrainerConfig{}.toJson()).distillation.enabled());

    config.distillation.weight = 0.0f;
    EXPECT_THROW(config.validate(), Error);
    config.distillation.weight = 0.5f;
    config.distillation.temperature = -1.0f;
    EXPECT_THROW(config.validate(), Error);
}

}  // namespace
}  // namespace cnnstudio
