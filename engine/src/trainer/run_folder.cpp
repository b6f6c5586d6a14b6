#include "cnnstudio/run_folder.h"

#include <fstream>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"

namespace cnnstudio {

RunFolder RunFolder::create(const std::filesystem::path& path) {
    std::error_code error;
    if (std::filesystem::exists(path, error)) {
        if (!std::filesystem::is_directory(path, error))
            throw Error("exists and is not a folder", path.string(), "choose another --run-dir");
        if (!std::filesystem::is_empty(path, error))
            throw Error("the run folder holds files already", path.string(),
                        "choose another --run-dir, or continue that run with --resume");
    }
    std::filesystem::create_directories(path / kCheckpointsFolderName, error);
    if (error)
        throw Error("cannot create the run folder: " + error.message(), path.string(),
                    "check that the parent folder is writable");
    return RunFolder(path);
}

RunFolder RunFolder::open(const std::filesystem::path& path) {
    if (!std::filesystem::is_directory(path))
        throw Error("no such run folder", path.string(), "pass the --run-dir of an earlier run");
    RunFolder folder(path);
    for (const auto& file : {folder.specFile(), folder.configFile()})
        if (!std::filesystem::exists(file))
            throw Error("not a run folder: " + file.filename().string() + " is missing", path.string(),
                        "pass the --run-dir of an earlier run");
    std::error_code error;
    std::filesystem::create_directories(path / kCheckpointsFolderName, error);
    return folder;
}

void RunFolder::writeSpec(const NetworkSpec& spec) const { spec.save(specFile()); }

void RunFolder::writeConfig(const nlohmann::json& config) const {
    writeFileAtomically(configFile(), config.dump(2) + "\n");
}

NetworkSpec RunFolder::readSpec() const { return NetworkSpec::load(specFile()); }

nlohmann::json RunFolder::readConfig() const {
    std::ifstream stream(configFile());
    if (!stream) throw Error("cannot open the file", configFile().string());
    try {
        return nlohmann::json::parse(stream);
    } catch (const nlohmann::json::exception& error) {
        throw Error(std::string("not valid JSON: ") + error.what(), configFile().string(),
                    "the file is damaged; start a new run");
    }
}

}  // namespace cnnstudio
