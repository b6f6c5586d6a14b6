// The cudnn backend in bf16 keeps the bf16 copy of a filter it stages during a hold of the weights
// (Backend::beginWeightsHeld) for the rest of the hold, and, as a later hold that covers the
// filter begins, stages it again on its side stream beside the ops that follow. Such a copy must
// hold the weights as they are when the hold begins, in eager steps and in captured ones, and
// only weights that a hold covers (memory the caller vouches for) are staged ahead.
#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/kernels/cudnn_stats.h"
#include "kernels/cudnn_test_support.h"

namespace cnnstudio::test {
namespace {

using kernels::cudnnStats;

class CudnnHeldWeights : public ::testing::Test {
protected:
    void SetUp() override {
        CNNSTUDIO_SKIP_WITHOUT_CUDA_DEVICE();
        cudnn_ = createCudnn(Precision::Bf16);
    }

    std::size_t copiesStagedAhead() const { return cudnnStats(*cudnn_).weightCopiesStagedAhead; }

    // One training step's convolution ops on `step`, its weights held over `covered`.
    void runHeld(ConvStep& step, std::span<const float> covered) {
        WeightsHeld held(*cudnn_, covered);
        step.run(*cudnn_);
    }

    // `tested`'s outputs against the same ops on `inputs` with no hold, on the same backend.
    void expectAsWithoutAHold(const ConvStep& tested, const ConvStepInputs& inputs) {
        cudnn_->synchronize();
        ConvStep unheld(*cudnn_, g_, inputs);
        unheld.run(*cudnn_);
        cudnn_->synchronize();
        tested.expectCloseTo(unheld, relativeTolerance(Precision::Bf16));
    }

    std::unique_ptr<Backend> cudnn_;
    // 16 channels: the filter is staged unpadded, the one kind a hold keeps.
    const ConvGeometry g_ = convGeometry(4, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1);
};

TEST_F(CudnnHeldWeights, OnlyCopiesOfWeightsTheHoldCoversAreStagedAhead) {
    SeededRandom random;
    ConvStep step(*cudnn_, g_, ConvStepInputs::random(g_, random));
    const Tensor elsewhere = tensorFromHost(*cudnn_, random.uniforms(64));
    const std::span<const float> w = step.weights();

    runHeld(step, w);
    EXPECT_EQ(copiesStagedAhead(), 0u) << "the first hold has no copy from a hold before";
    runHeld(step, w);
    EXPECT_EQ(copiesStagedAhead(), 1u) << "the filter staged in the hold before";
    runHeld(step, {elsewhere.data(), std::size_t(elsewhere.count())});
    EXPECT_EQ(copiesStagedAhead(), 1u) << "a hold that covers other memory stages nothing ahead";
    runHeld(step, w.first(w.size() - 1));
    EXPECT_EQ(copiesStagedAhead(), 1u) << "a hold that covers part of the filter stages nothing ahead";
    runHeld(step, w);
    EXPECT_EQ(copiesStagedAhead(), 2u) << "the hold before staged it in front of its op";
}

TEST_F(CudnnHeldWeights, CopyStagedAheadHoldsTheWeightsAsTheHoldBegins) {
    SeededRandom random;
    ConvStepInputs inputs = ConvStepInputs::random(g_, random);
    ConvStep tested(*cudnn_, g_, inputs);
    runHeld(tested, tested.weights());
    for (int hold = 0; hold < 2; ++hold) {
        SCOPED_TRACE("hold " + std::to_string(hold + 2));
        inputs.w = random.uniforms(inputs.w.size());
        tested.setWeights(inputs.w);
        runHeld(tested, tested.weights());
        expectAsWithoutAHold(tested, inputs);
    }
    EXPECT_EQ(copiesStagedAhead(), 2u);
}

TEST_F(CudnnHeldWeights, CapturedStepStagesTheCopyAheadAtEveryReplay) {
    SeededRandom random;
    ConvStepInputs inputs = ConvStepInputs::random(g_, random);
    ConvStep tested(*cudnn_, g_, inputs);
    runHeld(tested, tested.weights());  // eager: plans, searches, stages the copy in front
    std::unique_ptr<StepGraph> graph =
        cudnn_->captureStep([&] { runHeld(tested, tested.weights()); });
    ASSERT_NE(graph, nullptr) << "the cudnn backend captures steps";
    for (int replay = 0; replay < 2; ++replay) {
        SCOPED_TRACE("replay " + std::to_string(replay + 1));
        inputs.w = random.uniforms(inputs.w.size());
        tested.setWeights(inputs.w);
        graph->replay();
        expectAsWithoutAHold(tested, inputs);
    }
}

}  // namespace
}  // namespace cnnstudio::test
