// --checkpoint-every: steps or minutes, kept in the trainer's JSON, and every other text refused
// naming the option.
#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/trainer.h"

namespace cnnstudio {
namespace {

TEST(CheckpointCadence, StepsOrMinutesRoundTripThroughTheTrainerSettings) {
    const CheckpointCadence steps = CheckpointCadence::parse("200steps", "--checkpoint-every");
    EXPECT_EQ(steps.steps, 200);
    EXPECT_EQ(steps.minutes, 0);
    EXPECT_EQ(steps.toString(), "200steps");
    const CheckpointCadence minutes = CheckpointCadence::parse("2.5min", "--checkpoint-every");
    EXPECT_EQ(minutes.steps, 0);
    EXPECT_DOUBLE_EQ(minutes.minutes, 2.5);

    TrainerConfig config;
    EXPECT_EQ(config.checkpointEvery.toString(), "5min") << "the default";
    config.checkpointEvery = steps;
    EXPECT_EQ(TrainerConfig::fromJson(config.toJson()).checkpointEvery.steps, 200);
    nlohmann::json older = config.toJson();
    older.erase("checkpoint_every");  // a run recorded before the cadence existed
    EXPECT_EQ(TrainerConfig::fromJson(older).checkpointEvery.toString(), "5min");
}

TEST(CheckpointCadence, AnythingElseIsRefusedNamingTheOption) {
    for (const char* text : {"", "200", "steps", "0steps", "-5min", "5 min", "1.5steps", "5minutes", "nanmin"}) {
        try {
            CheckpointCadence::parse(text, "--checkpoint-every");
            ADD_FAILURE() << "'" << text << "' was accepted";
        } catch (const Error& error) {
            EXPECT_EQ(error.where(), "--checkpoint-every") << text;
            EXPECT_NE(error.hint().find("200steps or 5min"), std::string::npos) << error.what();
        }
    }
}

}  // namespace
}  // namespace cnnstudio
