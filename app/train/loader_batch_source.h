// The engine's BatchSource on top of the datasets library's prefetching BatchLoader: the
// trainer pulls ready batches, the loader's worker threads shuffle, augment and normalise ahead.
#pragma once

#include <cstdint>

#include "cnnstudio/checkpoint.h"
#include "cnnstudio/datasets/batch_loader.h"
#include "cnnstudio/datasets/normalization.h"
#include "cnnstudio/trainer.h"

namespace cnnstudio::app {

class LoaderBatchSource : public BatchSource {
public:
    // `split` must outlive the source.
    LoaderBatchSource(const datasets::Dataset& split, const datasets::BatchLoaderOptions& options);

    std::int64_t samples() const override;
    std::int64_t batchesPerEpoch() const override;
    void startEpoch(int epoch, std::int64_t firstBatch) override;
    bool next(Batch& batch) override;

private:
    const datasets::Dataset& split_;
    datasets::BatchLoader loader_;
};

// Training: shuffled from `seed`, augmented, every batch full. Evaluation: in order, no
// augmentation, a last partial batch.
datasets::BatchLoaderOptions trainingLoaderOptions(int batch, std::uint64_t seed,
                                                   const datasets::AugmentationConfig& augmentation,
                                                   const datasets::Normalization& normalization);
datasets::BatchLoaderOptions evaluationLoaderOptions(int batch, const datasets::Normalization& normalization);

// The two spellings of one normalisation: the datasets library's and the model folder's.
InputNormalization toInputNormalization(const datasets::Normalization& normalization);
datasets::Normalization toDatasetNormalization(const InputNormalization& normalization, int channels);

}  // namespace cnnstudio::app
