// Dataset helpers: append, select, hold-out and limit.
#include "cnnstudio/datasets/dataset.h"

#include "cnnstudio/error.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace cnnstudio::datasets {
namespace {

// n samples of 1x1x2 whose pixels are (i, i) and label i % 3.
Dataset numbered(std::size_t n) {
    Dataset data{1, 1, 2, {}, {}};
    for (std::size_t i = 0; i < n; ++i)
        data.append(std::vector<std::uint8_t>{std::uint8_t(i), std::uint8_t(i)}, std::int32_t(i % 3));
    return data;
}

TEST(Dataset, AppendSelectAndClassCounts) {
    const Dataset data = numbered(10);
    EXPECT_EQ(data.classCounts(3), (std::vector<std::size_t>{4, 3, 3}));
    const std::vector<std::size_t> picked = {7, 2, 7};
    const Dataset chosen = data.select(picked);
    EXPECT_EQ(chosen.images, (std::vector<std::uint8_t>{7, 7, 2, 2, 7, 7}));
    EXPECT_EQ(chosen.labels, (std::vector<std::int32_t>{1, 2, 1}));
    const std::vector<std::size_t> past = {10};
    EXPECT_THROW(data.select(past), Error);
    Dataset copy = data;
    EXPECT_THROW(copy.append(std::vector<std::uint8_t>{1, 2, 3}, 0), Error);
}

TEST(Dataset, HoldOutSplitsDisjointlyKeepingOrder) {
    Dataset train = numbered(200);
    const Dataset held = holdOut(train, 0.1, 4);
    EXPECT_EQ(held.size(), 20u);
    EXPECT_EQ(train.size(), 180u);
    EXPECT_TRUE(std::is_sorted(held.images.begin(), held.images.end()));
    EXPECT_TRUE(std::is_sorted(train.images.begin(), train.images.end()));
    std::vector<std::uint8_t> all = train.images;
    all.insert(all.end(), held.images.begin(), held.images.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, numbered(200).images);
    EXPECT_EQ(held.channels, 1);
    EXPECT_EQ(held.width, 2);
}

TEST(Dataset, HoldOutOfNothingAndBadFractions) {
    Dataset train = numbered(5);
    EXPECT_EQ(holdOut(train, 0.0, 1).size(), 0u);
    EXPECT_EQ(train.size(), 5u);
    EXPECT_THROW(holdOut(train, 1.0, 1), Error);
    EXPECT_THROW(holdOut(train, -0.1, 1), Error);
}

TEST(Dataset, LimitKeepsTheFirstTrainingSamples) {
    DatasetSplits splits;
    splits.train = numbered(10);
    applyLimit(splits, 4);
    EXPECT_EQ(splits.train.images, (std::vector<std::uint8_t>{0, 0, 1, 1, 2, 2, 3, 3}));
    applyLimit(splits, 0);  // 0: no limit
    EXPECT_EQ(splits.train.size(), 4u);
}

}  // namespace
}  // namespace cnnstudio::datasets
