// The confusion matrix and the per-class figures derived from it, on a hand-worked example.
#include <gtest/gtest.h>

#include "cnnstudio/error.h"
#include "cnnstudio/metrics.h"

namespace cnnstudio {
namespace {

// 10 images of 3 classes. True/predicted pairs:
//   class 0: 0,0,0,1      class 1: 1,1,0      class 2: 2,1,2
// matrix rows = true:  [3 1 0] [1 2 0] [0 1 2]
ConfusionMatrix handExample() {
    ConfusionMatrix matrix(3);
    for (auto [t, p] : {std::pair{0, 0}, {0, 0}, {0, 0}, {0, 1}, {1, 1}, {1, 1}, {1, 0}, {2, 2}, {2, 1}, {2, 2}})
        matrix.add(t, p);
    return matrix;
}

TEST(ConfusionMatrix, CountsRowsAsTrueClassAndColumnsAsPredicted) {
    const ConfusionMatrix matrix = handExample();
    EXPECT_EQ(matrix.toJson(), nlohmann::json({{3, 1, 0}, {1, 2, 0}, {0, 1, 2}}));
    EXPECT_EQ(matrix.total(), 10);
    EXPECT_EQ(matrix.correct(), 7);
    EXPECT_DOUBLE_EQ(matrix.accuracy(), 0.7);
}

TEST(ConfusionMatrix, PrecisionRecallAndSupportPerClass) {
    const ConfusionMatrix matrix = handExample();
    // class 0: predicted 0 four times (3 right); 4 true images
    EXPECT_DOUBLE_EQ(matrix.classMetrics(0).precision, 3.0 / 4.0);
    EXPECT_DOUBLE_EQ(matrix.classMetrics(0).recall, 3.0 / 4.0);
    EXPECT_EQ(matrix.classMetrics(0).support, 4);
    // class 1: predicted 1 four times (2 right); 3 true images
    EXPECT_DOUBLE_EQ(matrix.classMetrics(1).precision, 2.0 / 4.0);
    EXPECT_DOUBLE_EQ(matrix.classMetrics(1).recall, 2.0 / 3.0);
    // class 2: predicted 2 twice (both right); 3 true images
    EXPECT_DOUBLE_EQ(matrix.classMetrics(2).precision, 1.0);
    EXPECT_DOUBLE_EQ(matrix.classMetrics(2).recall, 2.0 / 3.0);
    // F1 = 2 p r / (p + r): class 1 has p 1/2, r 2/3 -> 4/7; class 2 has p 1, r 2/3 -> 4/5
    EXPECT_DOUBLE_EQ(matrix.classMetrics(1).f1, 4.0 / 7.0);
    EXPECT_DOUBLE_EQ(matrix.classMetrics(2).f1, 4.0 / 5.0);

    const auto table = matrix.perClassJson({"cat", "dog", "owl"});
    EXPECT_EQ(table[1]["class"], "dog");
    EXPECT_DOUBLE_EQ(table[1]["recall"].get<double>(), 2.0 / 3.0);
    EXPECT_EQ(table[2]["support"], 3);
    EXPECT_DOUBLE_EQ(table[2]["f1"].get<double>(), 4.0 / 5.0);
}

TEST(ConfusionMatrix, ClassesNeverPredictedOrAbsentHaveZeroNotNaN) {
    ConfusionMatrix matrix(3);
    matrix.add(0, 0);
    matrix.add(1, 0);
    EXPECT_EQ(matrix.classMetrics(2).precision, 0.0);  // never predicted
    EXPECT_EQ(matrix.classMetrics(2).recall, 0.0);     // no images
    EXPECT_EQ(matrix.classMetrics(2).f1, 0.0);
    EXPECT_EQ(ConfusionMatrix(4).accuracy(), 0.0);
}

TEST(ConfusionMatrix, RejectsClassesOutOfRange) {
    ConfusionMatrix matrix(3);
    EXPECT_THROW(matrix.add(3, 0), Error);
    EXPECT_THROW(matrix.add(0, -1), Error);
}

TEST(ConfusionMatrix, TableShowsNamesFiguresAndMatrix) {
    const std::string table = handExample().formatTable({"cat", "dog", "owl"});
    EXPECT_NE(table.find("dog       0.5000  0.6667  0.5714        3"), std::string::npos) << table;
    EXPECT_NE(table.find("accuracy 0.7000 (7 of 10)"), std::string::npos) << table;
    EXPECT_NE(table.find("owl    2  0  1  2"), std::string::npos) << table;
}

}  // namespace
}  // namespace cnnstudio
