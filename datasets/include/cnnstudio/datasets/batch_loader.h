// The batch pipeline: shuffled, sharded, augmented, normalised float batches (N, C, H, W) with
// int32 labels, prepared on worker threads ahead of the trainer.
//
// Shuffling and sharding. Each epoch has one global order of the data set, a permutation drawn
// from (seed, epoch), identical on every rank. The order is cut into global batches of
// batchSize * ranks positions; rank r takes positions r, r + ranks, r + 2 * ranks, ... of each
// global batch (strided). So every rank runs the same number of steps per epoch, the ranks'
// batches of one step are disjoint, and together the ranks see each sample exactly once per
// epoch. With dropLast the incomplete last global batch is dropped; without it the last batch
// is smaller, on some ranks possibly empty (size 0) when fewer than `ranks` samples remain.
//
// Augmentation draws depend only on (seed, epoch, sample index in the data set), never on the
// rank, thread or prefetch timing, so a run is reproducible and resumable: startEpoch(e, b)
// gives exactly the batches b, b+1, ... that an uninterrupted epoch e would have given.
//
// Prefetching. Worker threads fill batch buffers ahead of the consumer, at most prefetchDepth
// batches ahead; next() hands them out strictly in order. A batch buffer belongs to the caller
// while it holds the BatchLease, so an asynchronous copy from it (pinned memory, cudaMemcpyAsync)
// can finish before the buffer is reused. The pool has prefetchDepth + 2 buffers: the caller may
// hold two leases (the batch being copied, the batch being used) without slowing the workers.
#pragma once

#include "cnnstudio/datasets/augmentation.h"
#include "cnnstudio/datasets/dataset.h"
#include "cnnstudio/datasets/normalization.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

namespace cnnstudio::datasets {

// Which samples a rank sees in each batch of each epoch (see the top of this file).
class ShardSchedule {
public:
    ShardSchedule(std::size_t datasetSize, std::size_t batchSize, int rank, int ranks, bool shuffle,
                  std::uint64_t seed, bool dropLast);

    std::size_t batchesPerEpoch() const { return batchesPerEpoch_; }
    // The epoch's global order of sample indices, the same on every rank.
    std::vector<std::size_t> epochOrder(std::uint64_t epoch) const;
    // How many samples this rank gets in batch `batch`.
    std::size_t batchSamples(std::size_t batch) const;
    // This rank's sample indices of batch `batch`, given epochOrder(epoch).
    void batchIndices(std::span<const std::size_t> order, std::size_t batch,
                      std::vector<std::size_t>& indices) const;

private:
    std::size_t datasetSize_, batchSize_, ranks_, rank_, batchesPerEpoch_;
    bool shuffle_;
    std::uint64_t seed_;
};

// Where batch buffers live. The default is 64-byte aligned host memory; a GPU trainer passes
// pinned-memory functions (cudaHostAlloc / cudaFreeHost). release may run after the
// BatchLoader is gone, when the last BatchLease is destroyed.
struct BatchMemory {
    std::function<void*(std::size_t bytes)> allocate;
    std::function<void(void* memory, std::size_t bytes)> release;
};

struct BatchLoaderOptions {
    std::size_t batchSize = 64;  // samples per rank per step
    bool shuffle = true;
    std::uint64_t seed = 0;      // the shuffle order and the augmentation draws
    AugmentationConfig augmentation;  // none by default
    Normalization normalization;      // empty: plain x / 255
    int rank = 0, ranks = 1;
    bool dropLast = false;
    std::size_t prefetchDepth = 4;    // batches prepared ahead of the consumer
    std::size_t workerThreads = 2;
    BatchMemory memory;               // empty functions: default host memory
};

struct Batch {
    std::uint64_t epoch = 0;
    std::size_t index = 0;  // batch index within the epoch
    std::size_t size = 0;   // samples in this batch on this rank (may be < batchSize at the end)
    int channels = 0, height = 0, width = 0;
    float* images = nullptr;         // size * channels * height * width, NCHW
    std::int32_t* labels = nullptr;  // size
    std::span<const std::size_t> sampleIndices;  // positions in the Dataset
    // The device share of the augmentation (AugmentationConfig::onDevice), one per image, for
    // Backend::augmentImages after upload; empty when there is none. With mixing (mixes()) the
    // loss's LabelMix too: second labels and label weights, one per image, else empty.
    std::span<const ImageAugmentation> augmentations;
    std::span<const std::int32_t> secondLabels;
    std::span<const float> labelWeights;
};

class BatchLoader;

// A ready batch on loan: its buffers belong to the holder until the lease is destroyed or
// released. An empty lease (false) marks the end of the epoch.
class BatchLease {
public:
    BatchLease() = default;
    BatchLease(BatchLease&& other) noexcept;
    BatchLease& operator=(BatchLease&& other) noexcept;
    ~BatchLease();

    explicit operator bool() const { return batch_ != nullptr; }
    const Batch& operator*() const { return *batch_; }
    const Batch* operator->() const { return batch_; }
    void release();  // hands the buffers back now

private:
    friend class BatchLoader;
    struct Pool;
    BatchLease(std::shared_ptr<Pool> pool, std::size_t slot, const Batch* batch);
    std::shared_ptr<Pool> pool_;
    std::size_t slot_ = 0;
    const Batch* batch_ = nullptr;
};

// One consumer thread calls startEpoch / next; the loader's own threads do the rest.
class BatchLoader {
public:
    // dataset must outlive the loader. Throws cnnstudio::Error for impossible options (rank out
    // of range, a data set too small for one batch with dropLast, normalisation channels that
    // do not match the images, ...).
    BatchLoader(const Dataset& dataset, BatchLoaderOptions options);
    // Stops the workers, also mid-epoch, without waiting for the epoch to finish.
    ~BatchLoader();
    BatchLoader(const BatchLoader&) = delete;
    BatchLoader& operator=(const BatchLoader&) = delete;

    // Begins (or restarts) an epoch at batch firstBatch; batches still prepared for a previous
    // epoch are dropped. Leases already handed out stay valid.
    void startEpoch(std::uint64_t epoch, std::size_t firstBatch = 0);
    // The next batch of the epoch in order, waiting for it if need be; an empty lease after the
    // last one. Rethrows an error a worker met preparing this batch.
    BatchLease next();

    std::size_t batchesPerEpoch() const { return schedule_.batchesPerEpoch(); }
    const ShardSchedule& schedule() const { return schedule_; }
    const BatchLoaderOptions& options() const { return options_; }

private:
    void workerLoop();
    void fillBatch(std::size_t slot, std::uint64_t epoch, std::size_t index);

    const Dataset& dataset_;
    BatchLoaderOptions options_;
    ShardSchedule schedule_;
    std::shared_ptr<BatchLease::Pool> pool_;
    std::vector<std::thread> workers_;
};

}  // namespace cnnstudio::datasets
