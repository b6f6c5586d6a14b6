#include "cnnstudio/model_library.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "cnnstudio/error.h"
#include "cnnstudio/run_folder.h"

namespace cnnstudio {

namespace {

namespace fs = std::filesystem;

void addIfFolder(std::vector<fs::path>& folders, const fs::path& folder) {
    std::error_code error;
    if (!folder.empty() && fs::is_directory(folder, error) &&
        std::find(folders.begin(), folders.end(), folder) == folders.end())
        folders.push_back(folder);
}

bool isModelFolder(const fs::path& folder) {
    std::error_code error;
    return fs::is_regular_file(folder / RunFolder::kModelInfoFileName, error);
}

}  // namespace

std::vector<fs::path> modelLibraryFolders() {
    std::vector<fs::path> folders;
    if (const char* list = std::getenv("CNNSTUDIO_MODELS_DIR")) {
        std::string text = list;
        for (std::size_t start = 0; start <= text.size();) {
            const std::size_t end = std::min(text.find(':', start), text.size());
            addIfFolder(folders, text.substr(start, end - start));
            start = end + 1;
        }
    }
    std::error_code error;
    const fs::path program = fs::read_symlink("/proc/self/exe", error);
    if (!error) addIfFolder(folders, program.parent_path().parent_path() / "share" / "cnnstudio" / "models");
    addIfFolder(folders, CNNSTUDIO_SOURCE_MODELS_DIR);
    return folders;
}

std::vector<std::string> installedModelNames() {
    std::set<std::string> names;
    for (const fs::path& folder : modelLibraryFolders()) {
        std::error_code error;
        for (const auto& entry : fs::directory_iterator(folder, error))
            if (isModelFolder(entry.path())) names.insert(entry.path().filename().string());
    }
    return {names.begin(), names.end()};
}

fs::path resolveModel(const std::string& nameOrPath) {
    std::error_code error;
    if (fs::is_directory(nameOrPath, error)) return nameOrPath;
    const std::vector<fs::path> folders = modelLibraryFolders();
    const bool plainName = nameOrPath.find('/') == std::string::npos && !nameOrPath.empty();
    if (plainName)
        for (const fs::path& folder : folders)
            if (isModelFolder(folder / nameOrPath)) return folder / nameOrPath;
    std::string searched, known;
    for (const fs::path& folder : folders) searched += (searched.empty() ? "" : ", ") + folder.string();
    for (const std::string& name : installedModelNames()) known += (known.empty() ? "" : ", ") + name;
    throw Error("'" + nameOrPath + "' is neither a folder nor the name of an installed model", "--model",
                "the models are " + (known.empty() ? std::string("none") : known) + " (searched " +
                    (searched.empty() ? std::string("no folder") : searched) +
                    "); $CNNSTUDIO_MODELS_DIR adds folders");
}

}  // namespace cnnstudio
