#include "cnnstudio/distributed.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"

namespace cnnstudio {

TrainingStep::TrainingStep(Network& network, Optimizer& optimizer, bool allowCapture,
                           GradientSync* gradientSync, double* metricSums)
    : network_(network), optimizer_(optimizer), allowCapture_(allowCapture),
      gradientSync_(gradientSync), metricSums_(metricSums) {}

TrainingStep::~TrainingStep() = default;

void TrainingStep::record() {
    {
        // Nothing writes a weight from here until the optimiser's update.
        WeightsHeld held(network_.backend(),
                         {network_.parameters(), network_.parameterCount()});
        network_.forward(Phase::Training);
        network_.computeLoss();
        if (metricSums_) network_.accumulateMetrics(network_.batch(), true, metricSums_);
        network_.backward();
    }
    if (gradientSync_) gradientSync_->finish();
    optimizer_.update(network_.stepScalars(), network_.parameters(), network_.gradients());
}

void TrainingStep::run(float learningRate, std::uint32_t step) {
    StepScalars scalars = optimizer_.stepScalars(learningRate, step);
    network_.backend().upload(network_.stepScalars(), &scalars, sizeof scalars);
    if (graph_) {
        graph_->replay();
        return;
    }
    // The first step runs eagerly so that backends pick algorithms and allocate workspaces
    // outside the capture; the second is captured, then replayed from then on.
    if (runs_++ == 0 || !allowCapture_) {
        record();
        return;
    }
    graph_ = network_.backend().captureStep([this] { record(); });
    if (graph_) {
        graph_->replay();
    } else {
        allowCapture_ = false;
        record();
    }
}

}  // namespace cnnstudio
