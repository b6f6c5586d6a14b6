// Classification metrics: a confusion matrix and what follows from it (accuracy, per-class
// precision, recall, F1 and support), as the `epoch` and `finished` events report them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cnnstudio {

struct ClassMetrics {
    double precision = 0;  // of the images predicted as this class, the share that are; 0 when none are
    double recall = 0;     // of the images of this class, the share predicted as it; 0 when there are none
    double f1 = 0;         // harmonic mean of precision and recall; 0 when both are 0
    std::int64_t support = 0;  // images of this class
};

class ConfusionMatrix {
public:
    explicit ConfusionMatrix(int classes = 0);

    // Throws Error when a class is outside 0..classes-1. `times` > 1 merges counts made
    // elsewhere (another rank's shard).
    void add(int trueClass, int predictedClass, std::int64_t times = 1);

    int classes() const { return classes_; }
    std::int64_t count(int trueClass, int predictedClass) const;
    std::int64_t total() const;
    std::int64_t correct() const;
    double accuracy() const;  // 0 for an empty matrix
    ClassMetrics classMetrics(int classIndex) const;

    // Rows = true class, columns = predicted (docs/architecture.md, "Events").
    nlohmann::json toJson() const;
    // [{"class": name, "precision", "recall", "f1", "support"}]; names may be empty (then "0", "1", ...).
    nlohmann::json perClassJson(const std::vector<std::string>& classNames) const;
    // The matrix and the per-class table as text for the terminal.
    std::string formatTable(const std::vector<std::string>& classNames) const;

private:
    int classes_;
    std::vector<std::int64_t> counts_;  // classes x classes, row = true class
};

}  // namespace cnnstudio
