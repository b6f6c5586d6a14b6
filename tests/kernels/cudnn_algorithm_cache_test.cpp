// The cudnn backend plans each geometry once: the first call benchmarks cuDNN's convolution
// algorithms and caches them with the descriptors; later calls, and captured steps replayed as
// CUDA graphs, reuse them. A geometry first met while a step is being captured is planned by
// cuDNN's heuristics instead (benchmarking would synchronise) and still computes the right thing.
#include <gtest/gtest.h>

#include <memory>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/kernels/cudnn_stats.h"
#include "kernels/cudnn_test_support.h"

namespace cnnstudio::test {
namespace {

using kernels::CudnnStats;
using kernels::cudnnStats;

const double kFp32Tolerance = relativeTolerance(Precision::Fp32);

class CudnnAlgorithmCache : public ::testing::Test {
protected:
    void SetUp() override {
        CNNSTUDIO_SKIP_WITHOUT_CUDA_DEVICE();
        cudnn_ = createCudnn(Precision::Fp32);
        reference_ = createBackend("cpu-ref");
    }

    std::unique_ptr<Backend> cudnn_, reference_;
    const ConvGeometry first_ = convGeometry(4, 8, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1);
    const ConvGeometry second_ = convGeometry(4, 16, 14, 14, 8, 3, 3, 2, 2, 1, 1, 2);
};

TEST_F(CudnnAlgorithmCache, SecondCallOfAGeometryRunsNoNewSearch) {
    SeededRandom random;
    ConvStep step(*cudnn_, first_, ConvStepInputs::random(first_, random));
    step.run(*cudnn_);
    cudnn_->synchronize();
    const CudnnStats afterFirst = cudnnStats(*cudnn_);
    EXPECT_EQ(afterFirst.convolutionPlans, 1u);
    EXPECT_EQ(afterFirst.algorithmSearches, 3u) << "one benchmark per direction";
    EXPECT_EQ(afterFirst.heuristicChoices, 0u);

    step.run(*cudnn_);
    step.run(*cudnn_);
    cudnn_->synchronize();
    const CudnnStats afterRepeats = cudnnStats(*cudnn_);
    EXPECT_EQ(afterRepeats.convolutionPlans, 1u);
    EXPECT_EQ(afterRepeats.algorithmSearches, 3u);

    ConvStep other(*cudnn_, second_, ConvStepInputs::random(second_, random));
    other.run(*cudnn_);
    cudnn_->synchronize();
    const CudnnStats afterOther = cudnnStats(*cudnn_);
    EXPECT_EQ(afterOther.convolutionPlans, 2u);
    EXPECT_EQ(afterOther.algorithmSearches, 6u);
}

TEST_F(CudnnAlgorithmCache, CachedPlansGiveTheReferenceResultOnEveryCall) {
    SeededRandom random;
    const ConvStepInputs inputs = ConvStepInputs::random(first_, random);
    ConvStep reference(*reference_, first_, inputs);
    reference.run(*reference_);
    ConvStep tested(*cudnn_, first_, inputs);
    for (int call = 0; call < 3; ++call) {
        SCOPED_TRACE("call " + std::to_string(call + 1));
        tested.run(*cudnn_);
        cudnn_->synchronize();
        tested.expectCloseTo(reference, kFp32Tolerance);
    }
}

TEST_F(CudnnAlgorithmCache, CapturedStepReplaysCachedPlansOnNewInputs) {
    SeededRandom random;
    ConvStepInputs inputs = ConvStepInputs::random(first_, random);
    ConvStep tested(*cudnn_, first_, inputs);
    tested.run(*cudnn_);  // the eager first step plans and benchmarks
    cudnn_->synchronize();
    const CudnnStats planned = cudnnStats(*cudnn_);

    std::unique_ptr<StepGraph> graph = cudnn_->captureStep([&] { tested.run(*cudnn_); });
    ASSERT_NE(graph, nullptr) << "the cudnn backend captures steps";

    for (int replay = 0; replay < 2; ++replay) {
        SCOPED_TRACE("replay " + std::to_string(replay + 1));
        inputs.x = random.uniforms(inputs.x.size());
        tested.setInput(inputs.x);
        graph->replay();
        cudnn_->synchronize();
        ConvStep reference(*reference_, first_, inputs);
        reference.run(*reference_);
        tested.expectCloseTo(reference, kFp32Tolerance);
    }
    const CudnnStats afterReplays = cudnnStats(*cudnn_);
    EXPECT_EQ(afterReplays.algorithmSearches, planned.algorithmSearches);
    EXPECT_EQ(afterReplays.heuristicChoices, planned.heuristicChoices);
    EXPECT_EQ(afterReplays.convolutionPlans, planned.convolutionPlans);
}

TEST_F(CudnnAlgorithmCache, GeometryFirstSeenDuringCaptureIsPlannedByHeuristics) {
    SeededRandom random;
    const ConvStepInputs inputs = ConvStepInputs::random(second_, random);
    ConvStep tested(*cudnn_, second_, inputs);
    std::unique_ptr<StepGraph> graph = cudnn_->captureStep([&] { tested.run(*cudnn_); });
    ASSERT_NE(graph, nullptr);
    const CudnnStats captured = cudnnStats(*cudnn_);
    EXPECT_EQ(captured.algorithmSearches, 0u) << "benchmarking cannot run inside a capture";
    EXPECT_EQ(captured.heuristicChoices, 3u);

    graph->replay();
    cudnn_->synchronize();
    ConvStep reference(*reference_, second_, inputs);
    reference.run(*reference_);
    tested.expectCloseTo(reference, kFp32Tolerance);
}

TEST_F(CudnnAlgorithmCache, InconsistentGeometryNamesTheOp) {
    ConvGeometry wrong = first_;
    wrong.outHeight += 1;
    Tensor scratch = poisonedTensor(*cudnn_, wrong.inputCount() + wrong.outputCount());
    try {
        cudnn_->convForward(wrong, scratch.data(), scratch.data(), nullptr, scratch.data());
        FAIL() << "an output size that does not follow from the input was accepted";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("convForward"), std::string::npos) << error.what();
    }
    EXPECT_EQ(cudnnStats(*cudnn_).convolutionPlans, 0u) << "a rejected geometry is not cached";
}

}  // namespace
}  // namespace cnnstudio::test
