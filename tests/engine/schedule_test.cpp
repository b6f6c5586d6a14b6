// Learning-rate schedules as the trainer uses them: warm-up, step decay, cosine, plateau, and a
// state that survives a checkpoint.
#include <cmath>

#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/optimizer.h"

namespace cnnstudio {
namespace {

constexpr float kBase = 0.1f;
constexpr std::int64_t kStepsPerEpoch = 10;

ScheduleConfig scheduleOf(const std::string& kind, int warmup = 0) {
    ScheduleConfig config;
    config.kind = kind;
    config.warmupEpochs = warmup;
    return config;
}

TEST(LearningRateSchedule, WarmupRisesLinearlyFromAHundredthToTheBase) {
    const LearningRateSchedule schedule(scheduleOf("constant", 2), kBase, kStepsPerEpoch, 5);
    EXPECT_FLOAT_EQ(schedule.at(0), kBase * 0.01f);
    EXPECT_FLOAT_EQ(schedule.at(10), kBase * (0.01f + 0.99f * 0.5f));
    EXPECT_FLOAT_EQ(schedule.at(20), kBase);
    EXPECT_FLOAT_EQ(schedule.at(49), kBase);
}

TEST(LearningRateSchedule, StepDecaysByGammaEveryStepEpochs) {
    ScheduleConfig config = scheduleOf("step");
    config.stepEpochs = 2;
    config.gamma = 0.5f;
    const LearningRateSchedule schedule(config, kBase, kStepsPerEpoch, 6);
    EXPECT_FLOAT_EQ(schedule.at(19), kBase);
    EXPECT_FLOAT_EQ(schedule.at(20), kBase * 0.5f);
    EXPECT_FLOAT_EQ(schedule.at(45), kBase * 0.25f);
}

TEST(LearningRateSchedule, CosineFallsFromBaseToMinimumOverTheRun) {
    ScheduleConfig config = scheduleOf("cosine");
    config.minimumLearningRate = 0.001f;
    const LearningRateSchedule schedule(config, kBase, kStepsPerEpoch, 4);
    EXPECT_FLOAT_EQ(schedule.at(0), kBase);
    EXPECT_NEAR(schedule.at(20), 0.001f + (kBase - 0.001f) * 0.5f, 1e-7);
    EXPECT_NEAR(schedule.at(40), 0.001f, 1e-7);
}

// The values PyTorch 1.13's OneCycleLR(max_lr=0.1, total_steps=50) gives at those steps.
TEST(LearningRateSchedule, OneCycleFollowsPyTorchsOneCycleLR) {
    const LearningRateSchedule schedule(scheduleOf("onecycle"), kBase, kStepsPerEpoch, 5);
    EXPECT_NEAR(schedule.at(0), 0.004, 1e-7);
    EXPECT_NEAR(schedule.at(7), 0.052, 1e-7);
    EXPECT_NEAR(schedule.at(14), 0.1, 1e-7);
    EXPECT_NEAR(schedule.at(15), 0.09979871550490317, 1e-7);
    EXPECT_NEAR(schedule.at(30), 0.05671183644422961, 1e-7);
    EXPECT_NEAR(schedule.at(49), 4e-07, 1e-9);
}

TEST(LearningRateSchedule, OneCycleRefusesWarmupEpochsOfItsOwn) {
    EXPECT_THROW(scheduleOf("onecycle", 2).validate(), Error);
}

TEST(LearningRateSchedule, PlateauDecaysAfterPatienceEpochsAndItsStateSurvivesACheckpoint) {
    ScheduleConfig config = scheduleOf("plateau");
    config.patience = 2;
    config.gamma = 0.1f;
    LearningRateSchedule schedule(config, kBase, kStepsPerEpoch, 10);
    schedule.endEpoch(1.0);
    schedule.endEpoch(1.1);  // one epoch without improvement
    EXPECT_FLOAT_EQ(schedule.at(30), kBase);
    const nlohmann::json saved = schedule.state();

    schedule.endEpoch(1.2);  // second: decay
    EXPECT_FLOAT_EQ(schedule.at(40), kBase * 0.1f);

    LearningRateSchedule restored(config, kBase, kStepsPerEpoch, 10);
    restored.restore(saved);
    restored.endEpoch(1.2);
    EXPECT_FLOAT_EQ(restored.at(40), kBase * 0.1f);
}

}  // namespace
}  // namespace cnnstudio
