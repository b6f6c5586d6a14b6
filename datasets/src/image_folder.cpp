// Image-folder loader: list the files (sorted, so loads are reproducible), decode and resize
// them on all cores (OpenCV's thread pool) straight into the Dataset's memory, then report
// failures in file order.
#include "cnnstudio/datasets/image_folder.h"

#include "cnnstudio/datasets/image_file.h"
#include "cnnstudio/error.h"

#ifdef CNNSTUDIO_HAVE_OPENCV
#include <opencv2/core.hpp>
#endif

#include <algorithm>
#include <limits>
#include <optional>

namespace cnnstudio::datasets {

namespace {

namespace fs = std::filesystem;

struct ImageFile {
    fs::path path;
    std::int32_t label;
};

std::vector<std::string> sortedSubfolders(const fs::path& folder) {
    std::vector<std::string> names;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder))
        if (entry.is_directory() && entry.path().filename().string().front() != '.')
            names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// The image files anywhere under a class folder, sorted. Sub-folders belong to the class, as
// in torchvision's ImageFolder and Keras's image_dataset_from_directory, which users come
// from: a class split into batches (happy/2019/, happy/2020/) is still one class. Hidden
// folders (.thumbnails) are left out, and folder links are not followed (no cycles).
std::vector<fs::path> imagesUnder(const fs::path& classFolder) {
    std::vector<fs::path> images;
    for (auto entry = fs::recursive_directory_iterator(classFolder); entry != fs::recursive_directory_iterator();
         ++entry) {
        if (entry->is_directory() && entry->path().filename().string().front() == '.') {
            entry.disable_recursion_pending();
            continue;
        }
        if (entry->is_regular_file() && isImageFile(entry->path())) images.push_back(entry->path());
    }
    std::sort(images.begin(), images.end());
    return images;
}

// The image files of root/<class>/ for every class folder under root, labelled by classNames.
std::vector<ImageFile> listClassFolders(const fs::path& root, const std::vector<std::string>& classNames) {
    std::vector<ImageFile> files;
    for (const std::string& folder : sortedSubfolders(root)) {
        const auto known = std::find(classNames.begin(), classNames.end(), folder);
        if (known == classNames.end())
            throw Error("class folder '" + folder + "' is not among the training classes",
                        (root / folder).string(),
                        "every class folder of val/ and test/ must also exist under train/");
        const std::vector<fs::path> images = imagesUnder(root / folder);
        if (images.empty())
            throw Error("empty class folder: no image files", (root / folder).string(),
                        "add images to it or remove the folder");
        for (const fs::path& image : images) files.push_back({image, std::int32_t(known - classNames.begin())});
    }
    return files;
}

// Calls decode(i) for every file, on OpenCV's thread pool (TBB in Debian's build), whose
// threads live on between loads: a load starts no thread, and OpenCV's own parallel loops inside
// (cvtColor, resize) run serially within ours instead of nesting. (Threads started per load each
// left some OpenCV thread-local state behind, so libFuzzer took every run of the image targets
// for a leak and checked it, at a third of the speed.) A few files decode on the calling thread:
// handing them to the pool costs more than decoding them, and on a busy machine waits for a
// pool thread to be scheduled.
template <typename Decode>
void forEachFile(const std::vector<ImageFile>& files, const Decode& decode) {
#ifdef CNNSTUDIO_HAVE_OPENCV
    constexpr std::size_t kFilesToDecodeInParallel = 16;
    if (files.size() >= kFilesToDecodeInParallel) {
        if (files.size() > std::size_t(std::numeric_limits<int>::max()))
            throw Error("more than " + std::to_string(std::numeric_limits<int>::max()) + " images",
                        files.front().path.parent_path().string(), "split the data set into several folders");
        cv::parallel_for_(cv::Range(0, int(files.size())), [&](const cv::Range& range) {
            for (int i = range.start; i < range.end; ++i) decode(std::size_t(i));
        });
        return;
    }
#endif
    for (std::size_t i = 0; i < files.size(); ++i) decode(i);
}

// Decodes all files into a Dataset, dropping (with skipBad) or throwing on failures.
Dataset decodeAll(const std::vector<ImageFile>& files, const LoadOptions& options, SkippedInput& skipped) {
    Dataset data;
    data.channels = options.imageChannels;
    data.height = options.imageHeight;
    data.width = options.imageWidth;
    data.images.resize(files.size() * data.sampleBytes());
    data.labels.resize(files.size());
    std::vector<std::optional<std::string>> problems(files.size());
    const ImageSize size{options.imageChannels, options.imageHeight, options.imageWidth};
    forEachFile(files, [&](std::size_t i) {
        problems[i] = decodeImageFile(files[i].path, size, data.images.data() + i * data.sampleBytes());
        data.labels[i] = files[i].label;
    });

    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (!problems[i]) {
            kept.push_back(i);
            continue;
        }
        if (!options.skipBad)
            throw UnreadableInputError(*problems[i], files[i].path.string(), "remove or replace the file",
                                       "unreadable images");
        skipped.record(files[i].path.string() + ": " + *problems[i]);
    }
    return kept.size() == files.size() ? std::move(data) : data.select(kept);
}

std::optional<fs::path> existingFolder(const fs::path& root, std::initializer_list<const char*> names) {
    for (const char* name : names)
        if (fs::is_directory(root / name)) return root / name;
    return std::nullopt;
}

// The classes and splits under root, decoded (root and options already checked).
DatasetSplits readSplits(const fs::path& root, const LoadOptions& options) {
    const std::string where = root.string();
    DatasetSplits splits;
    const std::optional<fs::path> trainFolder = existingFolder(root, {"train"});
    const fs::path classRoot = trainFolder ? *trainFolder : root;
    splits.classNames = sortedSubfolders(classRoot);
    if (splits.classNames.empty())
        throw Error("no class folders", classRoot.string(),
                    "put each class's images in a sub-folder named after the class");

    splits.train = decodeAll(listClassFolders(classRoot, splits.classNames), options, splits.skipped);
    splits.description = "image folder " + where;
    if (trainFolder) {
        if (auto folder = existingFolder(root, {"val", "validation"}))
            splits.validation = decodeAll(listClassFolders(*folder, splits.classNames), options, splits.skipped);
        else
            splits.validation = holdOut(splits.train, options.validationFraction, options.seed);
        if (auto folder = existingFolder(root, {"test"}))
            splits.test = decodeAll(listClassFolders(*folder, splits.classNames), options, splits.skipped);
        else
            splits.test = Dataset{options.imageChannels, options.imageHeight, options.imageWidth, {}, {}};
    } else {
        splits.test = holdOut(splits.train, options.testFraction, options.seed);
        // validationFraction is of all images, like testFraction: rescale to what is left.
        const double remaining = 1.0 - options.testFraction;
        splits.validation = holdOut(splits.train, options.validationFraction / remaining,
                                    options.seed + 1);
    }
    if (splits.train.empty())
        throw Error("no training images left", where,
                    options.skipBad ? "every image was skipped as unreadable" : "add more images");
    applyLimit(splits, options.limit);
    return splits;
}

}  // namespace

DatasetSplits loadImageFolder(const fs::path& root, const LoadOptions& options) {
    const std::string where = root.string();
#ifndef CNNSTUDIO_HAVE_OPENCV
    throw Error("image folders need OpenCV to decode images, and this build has none", where,
                "rebuild with libopencv-dev installed, or convert the images to IDX");
#endif
    if (options.imageChannels != 1 && options.imageChannels != 3)
        throw Error("image channels " + std::to_string(options.imageChannels) + " is not 1 or 3", where,
                    "use 1 for grey or 3 for RGB");
    if (options.imageHeight < 1 || options.imageWidth < 1 || options.imageHeight > 4096 ||
        options.imageWidth > 4096)
        throw Error("image size " + std::to_string(options.imageHeight) + "x" +
                        std::to_string(options.imageWidth) + " is outside 1..4096",
                    where, "pick the network's input height and width");
    if (!fs::is_directory(root))
        throw Error("not a directory", where, "give a folder with one sub-folder per class");

    // A folder that cannot be listed or a link that cannot be followed (no permission, a link to
    // itself, no file descriptors left) throws from std::filesystem: named as ours are.
    try {
        return readSplits(root, options);
    } catch (const fs::filesystem_error& error) {
        throw Error("cannot read it: " + error.code().message(),
                    (error.path1().empty() ? root : error.path1()).string(),
                    "check that it exists and that you may read it");
    }
}

}  // namespace cnnstudio::datasets
