// The batch pipeline: shuffle determinism, shards covering each epoch exactly once, batches in
// order with the right contents, resuming, caller-supplied memory, and shutdown mid-epoch.
#include "cnnstudio/datasets/batch_loader.h"

#include "cnnstudio/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <random>

namespace cnnstudio::datasets {
namespace {

// count samples of channels x size x size with random pixels and labels 0..6.
Dataset randomDataset(unsigned seed, std::size_t count, int channels = 1, int size = 3) {
    std::mt19937 rng(seed);
    Dataset data{channels, size, size, {}, {}};
    data.images.resize(count * data.sampleBytes());
    for (auto& p : data.images) p = std::uint8_t(rng() & 0xFF);
    for (std::size_t i = 0; i < count; ++i) data.labels.push_back(std::int32_t(rng() % 7));
    return data;
}

// Everything one loader hands out in one epoch, copied out of the leases.
struct EpochRecord {
    std::vector<std::size_t> batchIndices, sizes, samples;
    std::vector<std::int32_t> labels;
    std::vector<float> images;
    // The device share, flattened: each image's sampling matrix, partner and erase rectangle, and
    // the mixed labels.
    std::vector<float> augmentations;
    std::vector<std::int32_t> secondLabels;
    std::vector<float> labelWeights;
};

EpochRecord runEpoch(BatchLoader& loader, std::uint64_t epoch, std::size_t firstBatch = 0) {
    EpochRecord record;
    loader.startEpoch(epoch, firstBatch);
    while (BatchLease batch = loader.next()) {
        EXPECT_EQ(batch->epoch, epoch);
        record.batchIndices.push_back(batch->index);
        record.sizes.push_back(batch->size);
        record.samples.insert(record.samples.end(), batch->sampleIndices.begin(), batch->sampleIndices.end());
        record.labels.insert(record.labels.end(), batch->labels, batch->labels + batch->size);
        const std::size_t floats = batch->size * std::size_t(batch->channels * batch->height * batch->width);
        record.images.insert(record.images.end(), batch->images, batch->images + floats);
        for (const ImageAugmentation& a : batch->augmentations) {
            record.augmentations.insert(record.augmentations.end(), a.sourceFromOutput, a.sourceFromOutput + 6);
            for (std::int32_t value : {a.partner, a.pasteTop, a.pasteHeight, a.eraseTop, a.eraseHeight})
                record.augmentations.push_back(float(value));
        }
        record.secondLabels.insert(record.secondLabels.end(), batch->secondLabels.begin(), batch->secondLabels.end());
        record.labelWeights.insert(record.labelWeights.end(), batch->labelWeights.begin(), batch->labelWeights.end());
    }
    return record;
}

TEST(ShardSchedule, RanksCoverEachEpochExactlyOnceWithDisjointBatches) {
    const std::size_t datasetSize = 103, batchSize = 8;
    for (int ranks : {1, 2, 3}) {
        for (bool dropLast : {false, true}) {
            SCOPED_TRACE("ranks " + std::to_string(ranks) + (dropLast ? " dropLast" : ""));
            std::vector<ShardSchedule> schedules;
            for (int rank = 0; rank < ranks; ++rank)
                schedules.emplace_back(datasetSize, batchSize, rank, ranks, true, 77, dropLast);
            const std::size_t global = batchSize * std::size_t(ranks);
            const std::size_t batches = dropLast ? datasetSize / global : (datasetSize + global - 1) / global;
            for (std::uint64_t epoch : {0u, 1u, 5u}) {
                std::vector<std::size_t> seen, indices;
                for (const ShardSchedule& schedule : schedules) {
                    ASSERT_EQ(schedule.batchesPerEpoch(), batches);  // every rank takes the same number of steps
                    const std::vector<std::size_t> order = schedule.epochOrder(epoch);
                    for (std::size_t b = 0; b < batches; ++b) {
                        schedule.batchIndices(order, b, indices);
                        EXPECT_EQ(indices.size(), schedule.batchSamples(b));
                        EXPECT_LE(indices.size(), batchSize);
                        seen.insert(seen.end(), indices.begin(), indices.end());
                    }
                }
                std::sort(seen.begin(), seen.end());
                EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end()) << "a sample was seen twice";
                EXPECT_EQ(seen.size(), dropLast ? batches * global : datasetSize);
                if (!dropLast) {
                    EXPECT_EQ(seen.back(), datasetSize - 1);
                }
            }
        }
    }
}

TEST(ShardSchedule, RankTakesStridedPositionsOfEachGlobalBatch) {
    const ShardSchedule rank1(20, 3, 1, 2, false, 0, false);  // global batches of 6
    const std::vector<std::size_t> order = rank1.epochOrder(0);
    std::vector<std::size_t> indices;
    rank1.batchIndices(order, 0, indices);
    EXPECT_EQ(indices, (std::vector<std::size_t>{1, 3, 5}));
    rank1.batchIndices(order, 3, indices);  // positions 18, 19 remain: rank 1 gets 19
    EXPECT_EQ(indices, (std::vector<std::size_t>{19}));
}

TEST(ShardSchedule, ShuffleIsFixedBySeedAndEpoch) {
    const ShardSchedule a(500, 10, 0, 1, true, 42, false), b(500, 10, 0, 1, true, 42, false),
        otherSeed(500, 10, 0, 1, true, 43, false), sequential(500, 10, 0, 1, false, 42, false);
    EXPECT_EQ(a.epochOrder(3), b.epochOrder(3));
    EXPECT_NE(a.epochOrder(3), a.epochOrder(4));
    EXPECT_NE(a.epochOrder(3), otherSeed.epochOrder(3));
    std::vector<std::size_t> identity(500);
    std::iota(identity.begin(), identity.end(), std::size_t{0});
    EXPECT_EQ(sequential.epochOrder(9), identity);
    std::vector<std::size_t> shuffled = a.epochOrder(3);
    EXPECT_NE(shuffled, identity);
    std::sort(shuffled.begin(), shuffled.end());
    EXPECT_EQ(shuffled, identity);  // a permutation
}

TEST(BatchLoader, DeliversEveryBatchInOrderWithNormalisedPixelsAndLabels) {
    const unsigned seed = 61;
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Dataset data = randomDataset(seed, 50, 2, 3);
    BatchLoaderOptions options;
    options.batchSize = 8;
    options.seed = 5;
    options.workerThreads = 3;
    options.normalization = {{0.5f, 0.4f}, {0.25f, 0.3f}};
    BatchLoader loader(data, options);
    ASSERT_EQ(loader.batchesPerEpoch(), 7u);
    const EpochRecord record = runEpoch(loader, 0);
    EXPECT_EQ(record.batchIndices, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(record.sizes, (std::vector<std::size_t>{8, 8, 8, 8, 8, 8, 2}));
    std::vector<std::size_t> sorted = record.samples;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < 50; ++i) ASSERT_EQ(sorted[i], i);
    for (std::size_t k = 0; k < record.samples.size(); ++k) {
        const std::size_t sample = record.samples[k];
        EXPECT_EQ(record.labels[k], data.labels[sample]);
        for (int c = 0; c < 2; ++c)
            for (int i = 0; i < 9; ++i) {
                const float expected = (data.image(sample)[std::size_t(c * 9 + i)] / 255.0f - options.normalization.mean[std::size_t(c)]) /
                                       options.normalization.stddev[std::size_t(c)];
                ASSERT_NEAR(record.images[k * 18 + std::size_t(c * 9 + i)], expected, 1e-5) << "sample " << sample;
            }
    }
    EXPECT_FALSE(loader.next());  // stays at the end
    EXPECT_FALSE(loader.next());
}

TEST(BatchLoader, LoadersOfAllRanksTogetherCoverTheEpochOnce) {
    const Dataset data = randomDataset(62, 61);
    for (int ranks : {1, 2, 3}) {
        SCOPED_TRACE("ranks " + std::to_string(ranks));
        std::vector<std::size_t> seen;
        std::size_t steps = 0;
        for (int rank = 0; rank < ranks; ++rank) {
            BatchLoaderOptions options;
            options.batchSize = 4;
            options.rank = rank;
            options.ranks = ranks;
            options.seed = 8;
            BatchLoader loader(data, options);
            const EpochRecord record = runEpoch(loader, 2);
            if (rank == 0) steps = record.batchIndices.size();
            EXPECT_EQ(record.batchIndices.size(), steps);
            seen.insert(seen.end(), record.samples.begin(), record.samples.end());
        }
        std::sort(seen.begin(), seen.end());
        ASSERT_EQ(seen.size(), 61u);
        for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i);
    }
}

TEST(BatchLoader, AugmentedBatchesDoNotDependOnWorkerCountAndResumeExactly) {
    const Dataset data = randomDataset(63, 40, 3, 8);
    BatchLoaderOptions options;
    options.batchSize = 6;
    options.seed = 11;
    options.augmentation = parseAugmentation(
        "crop=2,flip,rotate=10,scale=0.9-1.1,shift=0.1,erase=0.5,mixup=0.2,cutmix=1,brightness=0.2,contrast=0.2");
    options.workerThreads = 1;
    BatchLoader single(data, options);
    options.workerThreads = 4;
    options.prefetchDepth = 2;
    BatchLoader many(data, options);
    const EpochRecord a = runEpoch(single, 3), b = runEpoch(many, 3);
    EXPECT_EQ(a.samples, b.samples);
    EXPECT_EQ(a.images, b.images);
    EXPECT_EQ(a.augmentations.size(), a.samples.size() * 11);
    EXPECT_EQ(a.augmentations, b.augmentations);
    EXPECT_EQ(a.secondLabels.size(), a.samples.size());
    EXPECT_EQ(a.secondLabels, b.secondLabels);
    EXPECT_EQ(a.labelWeights, b.labelWeights);

    // Resuming epoch 3 at batch 4 gives exactly the rest of the uninterrupted epoch.
    const EpochRecord resumed = runEpoch(many, 3, 4);
    EXPECT_EQ(resumed.batchIndices, (std::vector<std::size_t>{4, 5, 6}));
    const std::size_t skippedSamples = 4 * 6, floatsPerSample = 3 * 8 * 8;
    EXPECT_TRUE(std::equal(resumed.samples.begin(), resumed.samples.end(), a.samples.begin() + skippedSamples));
    EXPECT_TRUE(std::equal(resumed.images.begin(), resumed.images.end(),
                           a.images.begin() + std::ptrdiff_t(skippedSamples * floatsPerSample)));
    EXPECT_TRUE(std::equal(resumed.augmentations.begin(), resumed.augmentations.end(),
                           a.augmentations.begin() + std::ptrdiff_t(skippedSamples * 11)));
    EXPECT_TRUE(std::equal(resumed.labelWeights.begin(), resumed.labelWeights.end(),
                           a.labelWeights.begin() + std::ptrdiff_t(skippedSamples)));

    // Another epoch gives other augmentations of the same data.
    const EpochRecord next = runEpoch(single, 4);
    EXPECT_NE(next.images, a.images);
    EXPECT_NE(next.augmentations, a.augmentations);
}

TEST(BatchLoader, DeviceAugmentationLeavesTheImagesAndOnlyDescribesTheTransforms) {
    const Dataset data = randomDataset(66, 24, 1, 6);
    BatchLoaderOptions plain;
    plain.batchSize = 8;
    plain.seed = 3;
    BatchLoaderOptions augmented = plain;
    augmented.augmentation = parseAugmentation("flip,rotate=30,erase=1");
    BatchLoader plainLoader(data, plain), augmentedLoader(data, augmented);
    const EpochRecord without = runEpoch(plainLoader, 1), with = runEpoch(augmentedLoader, 1);
    EXPECT_TRUE(without.augmentations.empty());
    EXPECT_TRUE(without.secondLabels.empty());
    EXPECT_EQ(with.images, without.images);  // the device does the work, after upload
    EXPECT_EQ(with.augmentations.size(), with.samples.size() * 11);
    EXPECT_TRUE(with.secondLabels.empty());  // no mixing asked for
}

TEST(BatchLoader, StartEpochMidEpochDropsTheOldBatches) {
    const Dataset data = randomDataset(64, 100);
    BatchLoaderOptions options;
    options.batchSize = 5;
    BatchLoader loader(data, options);
    loader.startEpoch(0);
    BatchLease first = loader.next();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->index, 0u);
    const std::vector<std::size_t> heldSamples(first->sampleIndices.begin(), first->sampleIndices.end());
    loader.startEpoch(1);
    BatchLease other = loader.next();
    ASSERT_TRUE(other);
    EXPECT_EQ(other->epoch, 1u);
    EXPECT_EQ(other->index, 0u);
    // The lease from the old epoch is untouched by the restart.
    EXPECT_EQ(std::vector<std::size_t>(first->sampleIndices.begin(), first->sampleIndices.end()), heldSamples);
}

TEST(BatchLoader, DestructionMidEpochDoesNotHangAndLeasesOutliveTheLoader) {
    const Dataset data = randomDataset(65, 3000, 3, 32);
    BatchLease kept;
    {
        BatchLoaderOptions options;
        options.batchSize = 16;
        options.workerThreads = 3;
        options.augmentation = parseAugmentation("default");
        BatchLoader loader(data, options);
        loader.startEpoch(0);
        kept = loader.next();
        BatchLease second = loader.next();
        ASSERT_TRUE(second);
    }  // the workers are still preparing batches when the loader goes
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->size, 16u);
    EXPECT_TRUE(std::isfinite(kept->images[0]));
}

TEST(BatchLoader, BatchBuffersComeFromTheCallersAllocator) {
    auto allocated = std::make_shared<std::atomic<int>>(0);
    auto released = std::make_shared<std::atomic<int>>(0);
    const Dataset data = randomDataset(66, 30);
    BatchLoaderOptions options;
    options.batchSize = 4;
    options.prefetchDepth = 3;
    options.memory.allocate = [allocated](std::size_t bytes) {
        ++*allocated;
        return ::operator new(bytes);
    };
    options.memory.release = [released](void* memory, std::size_t) {
        ++*released;
        ::operator delete(memory);
    };
    BatchLease lease;
    {
        BatchLoader loader(data, options);
        EXPECT_EQ(*allocated, 2 * (3 + 2));  // images + labels for prefetchDepth + 2 buffers
        runEpoch(loader, 0);
        loader.startEpoch(1);
        lease = loader.next();
    }
    EXPECT_EQ(*released, 0);  // the lease still holds a buffer of the pool
    lease.release();
    EXPECT_EQ(*released, *allocated);
}

TEST(BatchLoader, HoldingEveryBufferIsAnErrorNotAHang) {
    const Dataset data = randomDataset(67, 40);
    BatchLoaderOptions options;
    options.batchSize = 2;
    options.prefetchDepth = 1;  // 3 buffers
    BatchLoader loader(data, options);
    loader.startEpoch(0);
    std::vector<BatchLease> held;
    for (int i = 0; i < 3; ++i) held.push_back(loader.next());
    EXPECT_THROW(loader.next(), Error);
    held.clear();
}

TEST(BatchLoader, ImpossibleOptionsAreErrors) {
    const Dataset data = randomDataset(68, 10, 3);
    BatchLoaderOptions options;
    options.batchSize = 4;
    options.rank = 2;
    options.ranks = 2;
    EXPECT_THROW(BatchLoader(data, options), Error);
    options.rank = 0;
    options.batchSize = 8;
    options.dropLast = true;
    try {
        BatchLoader loader(data, options);
        ADD_FAILURE() << "10 samples make no full batch of 8 x 2";
    } catch (const Error& error) {
        EXPECT_NE(error.hint().find("--batch"), std::string::npos) << "the hint names the flags: " << error.hint();
    }
    options.dropLast = false;
    options.normalization = Normalization::unit(1);
    EXPECT_THROW(BatchLoader(data, options), Error);  // images have 3 channels
    options.normalization = {};
    BatchLoader loader(data, options);
    EXPECT_THROW(loader.next(), Error);               // no epoch started
    EXPECT_THROW(loader.startEpoch(0, 5), Error);     // past the epoch's batches
}

}  // namespace
}  // namespace cnnstudio::datasets
