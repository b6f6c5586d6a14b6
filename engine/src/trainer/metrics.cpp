#include "cnnstudio/metrics.h"

#include <algorithm>
#include <cstdio>

#include "cnnstudio/error.h"

namespace cnnstudio {

namespace {

std::string className(const std::vector<std::string>& names, int index) {
    return std::size_t(index) < names.size() ? names[std::size_t(index)] : std::to_string(index);
}

std::string padLeft(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string padRight(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string fixed(double value) {  // four decimals
    char text[64];
    std::snprintf(text, sizeof text, "%.4f", value);
    return text;
}

}  // namespace

ConfusionMatrix::ConfusionMatrix(int classes)
    : classes_(classes), counts_(std::size_t(classes) * std::size_t(classes), 0) {
    if (classes < 0) throw Error("a confusion matrix needs a class count >= 0", "metrics");
}

void ConfusionMatrix::add(int trueClass, int predictedClass, std::int64_t times) {
    if (trueClass < 0 || trueClass >= classes_ || predictedClass < 0 || predictedClass >= classes_)
        throw Error("class pair (" + std::to_string(trueClass) + ", " + std::to_string(predictedClass) +
                    ") is outside the " + std::to_string(classes_) + " classes", "metrics",
                    "check that the labels of the data set match the network's output units");
    counts_[std::size_t(trueClass) * classes_ + predictedClass] += times;
}

std::int64_t ConfusionMatrix::count(int trueClass, int predictedClass) const {
    return counts_[std::size_t(trueClass) * classes_ + predictedClass];
}

std::int64_t ConfusionMatrix::total() const {
    std::int64_t sum = 0;
    for (auto value : counts_) sum += value;
    return sum;
}

std::int64_t ConfusionMatrix::correct() const {
    std::int64_t sum = 0;
    for (int c = 0; c < classes_; ++c) sum += count(c, c);
    return sum;
}

double ConfusionMatrix::accuracy() const {
    std::int64_t all = total();
    return all == 0 ? 0.0 : double(correct()) / double(all);
}

ClassMetrics ConfusionMatrix::classMetrics(int classIndex) const {
    std::int64_t predicted = 0, actual = 0;
    for (int other = 0; other < classes_; ++other) {
        predicted += count(other, classIndex);
        actual += count(classIndex, other);
    }
    std::int64_t hits = count(classIndex, classIndex);
    ClassMetrics metrics;
    metrics.precision = predicted == 0 ? 0.0 : double(hits) / double(predicted);
    metrics.recall = actual == 0 ? 0.0 : double(hits) / double(actual);
    metrics.support = actual;
    const double sum = metrics.precision + metrics.recall;
    metrics.f1 = sum == 0 ? 0.0 : 2 * metrics.precision * metrics.recall / sum;
    return metrics;
}

nlohmann::json ConfusionMatrix::toJson() const {
    nlohmann::json rows = nlohmann::json::array();
    for (int t = 0; t < classes_; ++t) {
        nlohmann::json row = nlohmann::json::array();
        for (int p = 0; p < classes_; ++p) row.push_back(count(t, p));
        rows.push_back(std::move(row));
    }
    return rows;
}

nlohmann::json ConfusionMatrix::perClassJson(const std::vector<std::string>& classNames) const {
    nlohmann::json table = nlohmann::json::array();
    for (int c = 0; c < classes_; ++c) {
        ClassMetrics metrics = classMetrics(c);
        table.push_back({{"class", className(classNames, c)},
                         {"precision", metrics.precision},
                         {"recall", metrics.recall},
                         {"f1", metrics.f1},
                         {"support", metrics.support}});
    }
    return table;
}

std::string ConfusionMatrix::formatTable(const std::vector<std::string>& classNames) const {
    std::size_t nameWidth = 5;  // "class"
    for (int c = 0; c < classes_; ++c) nameWidth = std::max(nameWidth, className(classNames, c).size());
    std::string text = padRight("class", nameWidth) + "  precision  recall      F1  support\n";
    for (int c = 0; c < classes_; ++c) {
        ClassMetrics metrics = classMetrics(c);
        text += padRight(className(classNames, c), nameWidth) + "  " + padLeft(fixed(metrics.precision), 9) +
                "  " + padLeft(fixed(metrics.recall), 6) + "  " + padLeft(fixed(metrics.f1), 6) + "  " +
                padLeft(std::to_string(metrics.support), 7) + "\n";
    }
    text += "accuracy " + fixed(accuracy()) + " (" + std::to_string(correct()) + " of " +
            std::to_string(total()) + ")\n\n";

    // Columns are numbered to keep the matrix narrow; the rows carry the names.
    std::int64_t largest = 0;
    for (auto value : counts_) largest = std::max(largest, value);
    const std::size_t cell = std::max<std::size_t>(3, std::to_string(largest).size() + 1);
    text += "confusion matrix (rows: true class, columns: predicted)\n" + std::string(nameWidth + 3, ' ');
    for (int p = 0; p < classes_; ++p) text += padLeft(std::to_string(p), cell);
    text += "\n";
    for (int t = 0; t < classes_; ++t) {
        text += padRight(className(classNames, t), nameWidth) + " " + padLeft(std::to_string(t), 2);
        for (int p = 0; p < classes_; ++p) text += padLeft(std::to_string(count(t, p)), cell);
        text += "\n";
    }
    return text;
}

}  // namespace cnnstudio
