// BatchLoader: a fixed pool of batch buffers cycling between worker threads (filling, at most
// prefetchDepth batches ahead) and the consumer (holding leases). One mutex guards the pool's
// bookkeeping; buffers are written outside it, each by the one worker that claimed it.
#include "cnnstudio/datasets/batch_loader.h"

#include "cnnstudio/error.h"
#include "random.h"

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <new>

namespace cnnstudio::datasets {

// ---- ShardSchedule -------------------------------------------------------------------------

ShardSchedule::ShardSchedule(std::size_t datasetSize, std::size_t batchSize, int rank, int ranks,
                             bool shuffle, std::uint64_t seed, bool dropLast)
    : datasetSize_(datasetSize), batchSize_(batchSize), ranks_(std::size_t(ranks)),
      rank_(std::size_t(rank)), batchesPerEpoch_(0), shuffle_(shuffle), seed_(seed) {
    if (batchSize == 0) throw Error("batch size 0", "batch pipeline", "use a batch size of at least 1");
    if (ranks < 1 || rank < 0 || rank >= ranks)
        throw Error("rank " + std::to_string(rank) + " of " + std::to_string(ranks) + " ranks", "batch pipeline",
                    "ranks must be >= 1 and rank in 0..ranks-1");
    const std::size_t globalBatch = batchSize_ * ranks_;
    batchesPerEpoch_ = dropLast ? datasetSize / globalBatch : (datasetSize + globalBatch - 1) / globalBatch;
}

std::vector<std::size_t> ShardSchedule::epochOrder(std::uint64_t epoch) const {
    if (shuffle_) return seededPermutation(datasetSize_, mixSeed(seed_, epoch));
    std::vector<std::size_t> order(datasetSize_);
    for (std::size_t i = 0; i < datasetSize_; ++i) order[i] = i;
    return order;
}

std::size_t ShardSchedule::batchSamples(std::size_t batch) const {
    if (batch >= batchesPerEpoch_) return 0;
    const std::size_t start = batch * batchSize_ * ranks_;
    const std::size_t span = std::min(datasetSize_ - start, batchSize_ * ranks_);
    return span > rank_ ? (span - rank_ + ranks_ - 1) / ranks_ : 0;
}

void ShardSchedule::batchIndices(std::span<const std::size_t> order, std::size_t batch,
                                 std::vector<std::size_t>& indices) const {
    if (order.size() != datasetSize_)
        throw Error("epoch order of " + std::to_string(order.size()) + " samples for a data set of " +
                        std::to_string(datasetSize_),
                    "ShardSchedule::batchIndices");
    indices.clear();
    if (batch >= batchesPerEpoch_) return;
    const std::size_t start = batch * batchSize_ * ranks_;
    const std::size_t end = std::min(datasetSize_, start + batchSize_ * ranks_);
    for (std::size_t position = start + rank_; position < end; position += ranks_)
        indices.push_back(order[position]);
}

// ---- the buffer pool shared by the loader and its leases --------------------------------------

struct BatchLease::Pool {
    struct Slot {
        Batch batch;
        std::vector<std::size_t> indices;
        std::vector<ImageAugmentation> augmentations;
        MixedLabels mixedLabels;
        std::size_t imageBytes = 0, labelBytes = 0;
    };
    struct Prepared {
        std::size_t slot;
        std::exception_ptr failure;
    };

    BatchMemory memory;
    std::vector<Slot> slots;

    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::size_t> freeSlots;
    std::map<std::size_t, Prepared> ready;  // by batch index
    std::vector<std::size_t> order;         // the epoch's global order; replaced only when no batch is in flight
    std::uint64_t epoch = 0, generation = 0;
    bool epochStarted = false, stopping = false;
    std::size_t nextToClaim = 0, nextToDeliver = 0, endBatch = 0, inFlight = 0, prefetchDepth = 0;

    ~Pool() {
        for (Slot& slot : slots) {
            if (slot.batch.images) memory.release(slot.batch.images, slot.imageBytes);
            if (slot.batch.labels) memory.release(slot.batch.labels, slot.labelBytes);
        }
    }

    void giveBack(std::size_t slot) {
        {
            std::lock_guard lock(mutex);
            freeSlots.push_back(slot);
        }
        changed.notify_all();
    }
};

// ---- BatchLease ------------------------------------------------------------------------------

BatchLease::BatchLease(std::shared_ptr<Pool> pool, std::size_t slot, const Batch* batch)
    : pool_(std::move(pool)), slot_(slot), batch_(batch) {}

BatchLease::BatchLease(BatchLease&& other) noexcept
    : pool_(std::move(other.pool_)), slot_(other.slot_), batch_(other.batch_) {
    other.batch_ = nullptr;
}

BatchLease& BatchLease::operator=(BatchLease&& other) noexcept {
    if (this != &other) {
        release();
        pool_ = std::move(other.pool_);
        slot_ = other.slot_;
        batch_ = other.batch_;
        other.batch_ = nullptr;
    }
    return *this;
}

BatchLease::~BatchLease() { release(); }

void BatchLease::release() {
    if (pool_) pool_->giveBack(slot_);
    pool_.reset();
    batch_ = nullptr;
}

// ---- BatchLoader -----------------------------------------------------------------------------

namespace {
BatchMemory defaultMemory() {
    constexpr std::align_val_t kAlignment{64};
    return {[kAlignment](std::size_t bytes) { return ::operator new(bytes, kAlignment); },
            [kAlignment](void* memory, std::size_t) { ::operator delete(memory, kAlignment); }};
}
}  // namespace

BatchLoader::BatchLoader(const Dataset& dataset, BatchLoaderOptions options)
    : dataset_(dataset), options_(std::move(options)),
      schedule_(dataset.size(), options_.batchSize, options_.rank, options_.ranks, options_.shuffle,
                options_.seed, options_.dropLast) {
    const std::string where = "batch pipeline";
    if (dataset.empty() || dataset.channels < 1)
        throw Error("the split is empty", where, "load a data set with samples in this split");
    if (schedule_.batchesPerEpoch() == 0)
        throw Error(std::to_string(dataset.size()) + " samples make no full batch of " +
                        std::to_string(options_.batchSize) + " x " + std::to_string(options_.ranks) + " ranks",
                    where, "lower --batch, train on fewer ranks (--gpus, --ranks) or on more images (--limit)");
    if (options_.prefetchDepth == 0 || options_.workerThreads == 0)
        throw Error("prefetch depth and worker threads must be at least 1", where);
    if (options_.normalization.mean.empty()) options_.normalization = Normalization::unit(dataset.channels);
    if (options_.normalization.mean.size() != std::size_t(dataset.channels) ||
        options_.normalization.stddev.size() != std::size_t(dataset.channels))
        throw Error("normalisation has " + std::to_string(options_.normalization.mean.size()) +
                        " channels, the images " + std::to_string(dataset.channels),
                    where, "compute it on the training split of the same data set");
    if (!options_.memory.allocate || !options_.memory.release) options_.memory = defaultMemory();

    pool_ = std::make_shared<BatchLease::Pool>();
    BatchLease::Pool& pool = *pool_;
    pool.memory = options_.memory;
    pool.prefetchDepth = options_.prefetchDepth;
    pool.slots.resize(options_.prefetchDepth + 2);
    const std::size_t sampleFloats = dataset.sampleBytes();
    for (std::size_t i = 0; i < pool.slots.size(); ++i) {
        BatchLease::Pool::Slot& slot = pool.slots[i];
        slot.imageBytes = options_.batchSize * sampleFloats * sizeof(float);
        slot.labelBytes = options_.batchSize * sizeof(std::int32_t);
        slot.batch.images = static_cast<float*>(pool.memory.allocate(slot.imageBytes));
        slot.batch.labels = static_cast<std::int32_t*>(pool.memory.allocate(slot.labelBytes));
        if (!slot.batch.images || !slot.batch.labels)
            throw Error("could not allocate a batch buffer of " + std::to_string(slot.imageBytes) + " bytes", where,
                        "lower the batch size or the prefetch depth");
        slot.indices.reserve(options_.batchSize);
        pool.freeSlots.push_back(i);
    }
    for (std::size_t t = 0; t < options_.workerThreads; ++t) workers_.emplace_back([this] { workerLoop(); });
}

BatchLoader::~BatchLoader() {
    {
        std::lock_guard lock(pool_->mutex);
        pool_->stopping = true;
    }
    pool_->changed.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

void BatchLoader::startEpoch(std::uint64_t epoch, std::size_t firstBatch) {
    if (firstBatch > batchesPerEpoch())
        throw Error("batch " + std::to_string(firstBatch) + " is past the epoch's " +
                        std::to_string(batchesPerEpoch()) + " batches",
                    "batch pipeline", "resume at a batch index below the batches per epoch");
    std::vector<std::size_t> order = schedule_.epochOrder(epoch);
    BatchLease::Pool& pool = *pool_;
    std::unique_lock lock(pool.mutex);
    pool.epochStarted = false;  // no new claims until the new epoch is set up
    ++pool.generation;          // batches in flight for the old epoch are dropped when they finish
    pool.changed.wait(lock, [&] { return pool.inFlight == 0; });
    for (const auto& [index, prepared] : pool.ready) pool.freeSlots.push_back(prepared.slot);
    pool.ready.clear();
    pool.order = std::move(order);
    pool.epoch = epoch;
    pool.nextToClaim = pool.nextToDeliver = firstBatch;
    pool.endBatch = batchesPerEpoch();
    pool.epochStarted = true;
    lock.unlock();
    pool.changed.notify_all();
}

BatchLease BatchLoader::next() {
    BatchLease::Pool& pool = *pool_;
    std::unique_lock lock(pool.mutex);
    if (!pool.epochStarted)
        throw Error("no epoch started", "batch pipeline", "call startEpoch(epoch) before next()");
    if (pool.nextToDeliver >= pool.endBatch) return {};
    std::map<std::size_t, BatchLease::Pool::Prepared>::iterator found;
    for (;;) {
        found = pool.ready.find(pool.nextToDeliver);
        if (found != pool.ready.end()) break;
        if (pool.nextToClaim <= pool.nextToDeliver && pool.freeSlots.empty() && pool.inFlight == 0)
            throw Error("all " + std::to_string(pool.slots.size()) + " batch buffers are held by the caller",
                        "batch pipeline", "destroy or release() earlier BatchLeases before asking for more");
        pool.changed.wait(lock);
    }
    const BatchLease::Pool::Prepared prepared = found->second;
    pool.ready.erase(found);
    ++pool.nextToDeliver;
    if (prepared.failure) pool.freeSlots.push_back(prepared.slot);
    lock.unlock();
    pool.changed.notify_all();  // a worker may now run further ahead
    if (prepared.failure) std::rethrow_exception(prepared.failure);
    return BatchLease(pool_, prepared.slot, &pool.slots[prepared.slot].batch);
}

void BatchLoader::workerLoop() {
    BatchLease::Pool& pool = *pool_;
    std::unique_lock lock(pool.mutex);
    for (;;) {
        pool.changed.wait(lock, [&] {
            return pool.stopping ||
                   (pool.epochStarted && pool.nextToClaim < pool.endBatch && !pool.freeSlots.empty() &&
                    pool.nextToClaim < pool.nextToDeliver + pool.prefetchDepth);
        });
        if (pool.stopping) return;
        const std::size_t index = pool.nextToClaim++;
        const std::size_t slot = pool.freeSlots.back();
        pool.freeSlots.pop_back();
        const std::uint64_t generation = pool.generation, epoch = pool.epoch;
        ++pool.inFlight;
        lock.unlock();

        std::exception_ptr failure;
        try {
            fillBatch(slot, epoch, index);
        } catch (...) {
            failure = std::current_exception();
        }

        lock.lock();
        --pool.inFlight;
        if (generation == pool.generation) pool.ready[index] = {slot, failure};
        else pool.freeSlots.push_back(slot);
        pool.changed.notify_all();
    }
}

void BatchLoader::fillBatch(std::size_t slotIndex, std::uint64_t epoch, std::size_t index) {
    BatchLease::Pool::Slot& slot = pool_->slots[slotIndex];
    Batch& batch = slot.batch;
    std::vector<std::size_t>& indices = slot.indices;
    schedule_.batchIndices(pool_->order, index, indices);
    batch.epoch = epoch;
    batch.index = index;
    batch.size = indices.size();
    batch.channels = dataset_.channels;
    batch.height = dataset_.height;
    batch.width = dataset_.width;
    batch.sampleIndices = indices;
    const AugmentationConfig& augmentation = options_.augmentation;
    const std::size_t sampleFloats = dataset_.sampleBytes();
    for (std::size_t i = 0; i < indices.size(); ++i) {
        const std::span<const std::uint8_t> source = dataset_.image(indices[i]);
        const std::span<float> target(batch.images + i * sampleFloats, sampleFloats);
        if (augmentation.onHost()) {
            for (std::size_t j = 0; j < sampleFloats; ++j) target[j] = float(source[j]) * (1.0f / 255.0f);
            adjustImage(target, augmentation, augmentationSeed(options_.seed, epoch, indices[i]));
            normalizeImage(target, dataset_.channels, options_.normalization);
        } else {
            normalizeImage(source, dataset_.channels, options_.normalization, target);
        }
        batch.labels[i] = dataset_.labels[indices[i]];
    }
    // The device share: one ImageAugmentation per image, and the batch's mixing.
    slot.augmentations.clear();
    slot.mixedLabels = {};
    if (augmentation.onDevice() && batch.size > 0) {
        for (std::size_t sample : indices)
            slot.augmentations.push_back(imageAugmentation(
                augmentation, augmentationSeed(options_.seed, epoch, sample), batch.height, batch.width));
        if (augmentation.mixes())
            slot.mixedLabels = mixBatch(augmentation, mixingSeed(options_.seed, epoch, indices.front()),
                                        std::span<const std::int32_t>(batch.labels, batch.size),
                                        slot.augmentations, batch.height, batch.width);
    }
    batch.augmentations = slot.augmentations;
    batch.secondLabels = slot.mixedLabels.secondLabels;
    batch.labelWeights = slot.mixedLabels.labelWeights;
}

}  // namespace cnnstudio::datasets
