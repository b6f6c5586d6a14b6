// Test helpers for the trainer: a tiny learnable image set made from a seed, a BatchSource over
// it (a seeded shuffle per epoch, as the datasets library's loader does), a tiny network that
// has every kind of state a checkpoint must carry (batch norm, dropout), and temporary folders.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cnnstudio/spec.h"
#include "cnnstudio/trainer.h"

namespace cnnstudio::testing {

struct SyntheticImages {
    int channels = 1, height = 8, width = 8, classes = 3;
    std::vector<float> images;  // size() x (channels, height, width)
    std::vector<std::int32_t> labels;
    std::size_t size() const { return labels.size(); }
    std::size_t valuesPerImage() const { return std::size_t(channels) * height * width; }
};

// Class c is a bright 3x3 square at a class-specific place on Gaussian noise.
inline SyntheticImages makeSyntheticImages(int count, std::uint64_t seed, int classes = 3) {
    SyntheticImages data;
    data.classes = classes;
    std::mt19937_64 random(seed);
    std::normal_distribution<float> noise(0.0f, 0.3f);
    for (int i = 0; i < count; ++i) {
        const int label = int(random() % std::uint64_t(classes));
        const int top = (label * 3) % (data.height - 2), left = (label * 5) % (data.width - 2);
        for (int y = 0; y < data.height; ++y)
            for (int x = 0; x < data.width; ++x) {
                const bool inside = y >= top && y < top + 3 && x >= left && x < left + 3;
                data.images.push_back((inside ? 1.0f : 0.0f) + noise(random));
            }
        data.labels.push_back(label);
    }
    return data;
}

class InMemoryBatchSource : public BatchSource {
public:
    // shuffle: a new order every epoch from (seed, epoch); training sources also drop the last
    // partial batch.
    InMemoryBatchSource(const SyntheticImages& data, int batch, bool training, std::uint64_t seed)
        : data_(data), batch_(batch), training_(training), seed_(seed) {}

    std::int64_t samples() const override { return std::int64_t(data_.size()); }
    std::int64_t batchesPerEpoch() const override {
        const std::int64_t n = samples();
        return training_ ? n / batch_ : (n + batch_ - 1) / batch_;
    }
    void startEpoch(int epoch, std::int64_t firstBatch) override {
        order_.resize(data_.size());
        std::iota(order_.begin(), order_.end(), std::size_t(0));
        if (training_) {
            std::mt19937_64 random(seed_ * 1000003ULL + std::uint64_t(epoch));
            std::shuffle(order_.begin(), order_.end(), random);
        }
        epoch_ = epoch;
        batchIndex_ = firstBatch;
    }
    bool next(Batch& batch) override {
        if (batchIndex_ >= batchesPerEpoch()) return false;
        const std::size_t begin = std::size_t(batchIndex_ * batch_);
        const std::size_t end = std::min(begin + std::size_t(batch_), data_.size());
        batch.count = int(end - begin);
        batch.images.clear();
        batch.labels.clear();
        for (std::size_t i = begin; i < end; ++i) {
            const std::size_t sample = order_[i];
            const float* image = data_.images.data() + sample * data_.valuesPerImage();
            batch.images.insert(batch.images.end(), image, image + data_.valuesPerImage());
            batch.labels.push_back(data_.labels[sample]);
        }
        ++batchIndex_;
        if (onBatch) onBatch(epoch_, batchIndex_);
        return true;
    }

    // Called after each batch is handed out with the epoch and how many batches of it are out.
    std::function<void(int epoch, std::int64_t batchesDelivered)> onBatch;

private:
    const SyntheticImages& data_;
    int batch_;
    bool training_;
    std::uint64_t seed_;
    std::vector<std::size_t> order_;
    int epoch_ = 0;
    std::int64_t batchIndex_ = 0;
};

// input (1, 8, 8) -> conv 4 -> batch norm -> relu -> max pool -> flatten -> dropout -> dense 3
inline NetworkSpec tinyNetworkSpec() {
    return NetworkSpec::fromJson(nlohmann::json::parse(R"({
      "format": "cnnstudio-network", "version": 1, "name": "tiny",
      "nodes": [
        {"name": "input", "type": "Input", "params": {"channels": 1, "height": 8, "width": 8}},
        {"name": "conv", "type": "Conv2D", "inputs": ["input"], "params": {"filters": 4, "kernel": 3, "padding": "same"}},
        {"name": "bn", "type": "BatchNorm2D", "inputs": ["conv"]},
        {"name": "relu", "type": "ReLU", "inputs": ["bn"]},
        {"name": "pool", "type": "MaxPool2D", "inputs": ["relu"], "params": {"kernel": 2}},
        {"name": "flatten", "type": "Flatten", "inputs": ["pool"]},
        {"name": "drop", "type": "Dropout", "inputs": ["flatten"], "params": {"rate": 0.25}},
        {"name": "logits", "type": "Dense", "inputs": ["drop"], "params": {"units": 3}}
      ]})"));
}

inline DatasetDescription describe(const SyntheticImages& train, const SyntheticImages& validation) {
    DatasetDescription dataset;
    dataset.name = "synthetic";
    for (int c = 0; c < train.classes; ++c) dataset.classNames.push_back("class" + std::to_string(c));
    dataset.channels = train.channels;
    dataset.height = train.height;
    dataset.width = train.width;
    dataset.trainSize = std::int64_t(train.size());
    dataset.validationSize = std::int64_t(validation.size());
    return dataset;
}

// A fresh, empty folder under the test temp dir, named for the running test.
inline std::filesystem::path freshFolder(const std::string& suffix = "") {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::filesystem::path folder = std::filesystem::path(::testing::TempDir()) / "cnnstudio-tests" /
                                   (std::string(test->test_suite_name()) + "." + test->name() + suffix);
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    return folder;
}

}  // namespace cnnstudio::testing
