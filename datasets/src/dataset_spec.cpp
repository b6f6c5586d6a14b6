// The dataset spec string: "<kind>[:<path>]" dispatched to the matching loader.
#include "cnnstudio/datasets/dataset_spec.h"

#include <filesystem>

#include "cnnstudio/datasets/fer2013.h"
#include "cnnstudio/datasets/idx.h"
#include "cnnstudio/datasets/image_folder.h"
#include "cnnstudio/error.h"

namespace cnnstudio::datasets {

namespace {
constexpr const char* kAcceptedForms =
    "use fashion-mnist, fer2013:PATH (a .csv or .csv.gz), idx:DIR (MNIST-style IDX files) or "
    "folder:DIR (one sub-folder per class)";
}

DatasetSpec parseDatasetSpec(std::string_view text) {
    const std::string where = "dataset '" + std::string(text) + "'";
    const std::size_t colon = text.find(':');
    const std::string_view kind = text.substr(0, colon);
    const std::string_view path = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
    if (kind == "fashion-mnist") {
        if (!path.empty())
            throw Error("fashion-mnist takes no path", where,
                        "for Fashion-MNIST files elsewhere use idx:DIR");
        return {DatasetKind::FashionMnist, {}};
    }
    DatasetKind parsed;
    if (kind == "fer2013") parsed = DatasetKind::Fer2013;
    else if (kind == "idx") parsed = DatasetKind::Idx;
    else if (kind == "folder") parsed = DatasetKind::ImageFolder;
    else throw Error("unknown kind of data set '" + std::string(kind) + "'", where, kAcceptedForms);
    if (path.empty())
        throw Error("missing the path after '" + std::string(kind) + ":'", where, kAcceptedForms);
    return {parsed, std::string(path)};
}

std::string toString(const DatasetSpec& spec) {
    switch (spec.kind) {
        case DatasetKind::FashionMnist: return "fashion-mnist";
        case DatasetKind::Fer2013: return "fer2013:" + spec.path;
        case DatasetKind::Idx: return "idx:" + spec.path;
        case DatasetKind::ImageFolder: return "folder:" + spec.path;
    }
    return {};
}

DatasetSpec withAbsolutePath(DatasetSpec spec) {
    if (!spec.path.empty()) spec.path = std::filesystem::absolute(spec.path).lexically_normal().string();
    return spec;
}

DatasetSplits loadDataset(const DatasetSpec& spec, const LoadOptions& options) {
    switch (spec.kind) {
        case DatasetKind::FashionMnist: return loadFashionMnist(options);
        case DatasetKind::Fer2013: return loadFer2013Csv(spec.path, options);
        case DatasetKind::Idx: return loadIdxDirectory(spec.path, options);
        case DatasetKind::ImageFolder: return loadImageFolder(spec.path, options);
    }
    throw Error("unhandled kind of data set", toString(spec));
}

DatasetSplits loadDataset(std::string_view specText, const LoadOptions& options) {
    return loadDataset(parseDatasetSpec(specText), options);
}

}  // namespace cnnstudio::datasets
