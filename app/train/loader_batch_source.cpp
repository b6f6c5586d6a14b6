#include "train/loader_batch_source.h"

namespace cnnstudio::app {

LoaderBatchSource::LoaderBatchSource(const datasets::Dataset& split, const datasets::BatchLoaderOptions& options)
    : split_(split), loader_(split, options) {}

std::int64_t LoaderBatchSource::samples() const { return std::int64_t(split_.size()); }

std::int64_t LoaderBatchSource::batchesPerEpoch() const { return std::int64_t(loader_.batchesPerEpoch()); }

void LoaderBatchSource::startEpoch(int epoch, std::int64_t firstBatch) {
    loader_.startEpoch(std::uint64_t(epoch), std::size_t(firstBatch));
}

bool LoaderBatchSource::next(Batch& batch) {
    datasets::BatchLease lease = loader_.next();
    if (!lease) return false;
    const std::size_t values = lease->size * std::size_t(lease->channels) * lease->height * lease->width;
    batch.count = int(lease->size);
    batch.images.assign(lease->images, lease->images + values);
    batch.labels.assign(lease->labels, lease->labels + lease->size);
    batch.augmentations.assign(lease->augmentations.begin(), lease->augmentations.end());
    batch.secondLabels.assign(lease->secondLabels.begin(), lease->secondLabels.end());
    batch.labelWeights.assign(lease->labelWeights.begin(), lease->labelWeights.end());
    return true;
}

datasets::BatchLoaderOptions trainingLoaderOptions(int batch, std::uint64_t seed,
                                                   const datasets::AugmentationConfig& augmentation,
                                                   const datasets::Normalization& normalization) {
    datasets::BatchLoaderOptions options;
    options.batchSize = std::size_t(batch);
    options.shuffle = true;
    options.seed = seed;
    options.augmentation = augmentation;
    options.normalization = normalization;
    options.dropLast = true;
    return options;
}

datasets::BatchLoaderOptions evaluationLoaderOptions(int batch, const datasets::Normalization& normalization) {
    datasets::BatchLoaderOptions options;
    options.batchSize = std::size_t(batch);
    options.shuffle = false;
    options.normalization = normalization;
    options.dropLast = false;
    return options;
}

InputNormalization toInputNormalization(const datasets::Normalization& normalization) {
    return {normalization.mean, normalization.stddev};
}

datasets::Normalization toDatasetNormalization(const InputNormalization& normalization, int channels) {
    if (normalization.mean.empty()) return datasets::Normalization::unit(channels);
    return {normalization.mean, normalization.stddev};
}

}  // namespace cnnstudio::app
