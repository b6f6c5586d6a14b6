// One string names a data set everywhere (CLI flag, run record, GUI field):
//   "fashion-mnist"      the Debian package's Fashion-MNIST (see findFashionMnist)
//   "fer2013:PATH"       a FER2013 CSV, plain or gzip
//   "idx:DIR"            a folder of MNIST-style IDX files
//   "folder:DIR"         a folder of class sub-folders of images
#pragma once

#include "cnnstudio/datasets/dataset.h"

#include <string>
#include <string_view>

namespace cnnstudio::datasets {

enum class DatasetKind { FashionMnist, Fer2013, Idx, ImageFolder };

struct DatasetSpec {
    DatasetKind kind = DatasetKind::FashionMnist;
    std::string path;  // empty for fashion-mnist
};

// Throws cnnstudio::Error listing the accepted forms for anything else.
DatasetSpec parseDatasetSpec(std::string_view text);
std::string toString(const DatasetSpec& spec);
// The spec with its path made absolute against the current folder: a run records this form, so
// that resuming it from another folder reads the same files, not whatever is there by that name.
DatasetSpec withAbsolutePath(DatasetSpec spec);

DatasetSplits loadDataset(const DatasetSpec& spec, const LoadOptions& options = {});
DatasetSplits loadDataset(std::string_view specText, const LoadOptions& options = {});

}  // namespace cnnstudio::datasets
