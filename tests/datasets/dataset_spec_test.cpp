// Dataset spec strings: the accepted forms, the errors for the rest, and dispatch to a loader.
#include "cnnstudio/datasets/dataset_spec.h"

#include "cnnstudio/error.h"
#include "test_files.h"

#include <gtest/gtest.h>
#include <opencv2/imgcodecs.hpp>

namespace cnnstudio::datasets {
namespace {

TEST(DatasetSpec, ParsesEveryFormAndPrintsItBack) {
    for (const char* text : {"fashion-mnist", "fer2013:/data/fer2013.csv.gz", "idx:/data/mnist", "folder:faces/"}) {
        EXPECT_EQ(toString(parseDatasetSpec(text)), text);
    }
    const DatasetSpec spec = parseDatasetSpec("fer2013:C:/odd:path.csv");
    EXPECT_EQ(spec.kind, DatasetKind::Fer2013);
    EXPECT_EQ(spec.path, "C:/odd:path.csv");  // only the first ':' separates
}

TEST(DatasetSpec, RelativePathIsMadeAbsoluteAgainstTheCurrentFolder) {
    const DatasetSpec spec = withAbsolutePath(parseDatasetSpec("idx:data/./mnist"));
    EXPECT_EQ(spec.path, (std::filesystem::current_path() / "data/mnist").string());
    EXPECT_EQ(toString(withAbsolutePath(parseDatasetSpec("fashion-mnist"))), "fashion-mnist");
    EXPECT_EQ(withAbsolutePath(parseDatasetSpec("fer2013:/srv/fer.csv")).path, "/srv/fer.csv");
}

TEST(DatasetSpec, UnknownKindListsTheAcceptedForms) {
    try {
        parseDatasetSpec("cifar10:/data");
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_NE(error.reason().find("unknown kind of data set 'cifar10'"), std::string::npos) << error.what();
        EXPECT_NE(error.hint().find("fer2013:PATH"), std::string::npos) << error.what();
    }
}

TEST(DatasetSpec, MissingPathAndStrayPathAreErrors) {
    EXPECT_THROW(parseDatasetSpec("fer2013:"), Error);
    EXPECT_THROW(parseDatasetSpec("folder"), Error);
    EXPECT_THROW(parseDatasetSpec("fashion-mnist:/x"), Error);
    EXPECT_THROW(parseDatasetSpec(""), Error);
}

TEST(DatasetSpec, LoadsAFolderWithTheGivenOptions) {
    testing::TempDir dir;
    for (const char* cls : {"a", "b", "c"})
        for (int i = 0; i < 4; ++i) {
            std::filesystem::create_directories(dir / cls);
            cv::imwrite((dir / cls / (std::to_string(i) + ".png")).string(), cv::Mat(5, 5, CV_8UC1, cv::Scalar(i)));
        }
    LoadOptions options;
    options.imageChannels = 1;
    options.imageHeight = 5;
    options.imageWidth = 5;
    options.testFraction = 0;
    options.validationFraction = 0.25;
    options.limit = 4;
    const DatasetSplits splits = loadDataset("folder:" + dir.path().string(), options);
    EXPECT_EQ(splits.classNames.size(), 3u);
    EXPECT_EQ(splits.validation.size(), 3u);
    EXPECT_EQ(splits.train.size(), 4u);  // the limit
}

}  // namespace
}  // namespace cnnstudio::datasets
