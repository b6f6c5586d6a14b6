// The trained models that ship with CNN Studio: resources/models/NAME/ in the source tree,
// share/cnnstudio/models/NAME/ once installed. Each is a model folder (model.json, spec.json,
// model.safetensors, as a run's model/ holds) with its recipe.json and MODEL_CARD.md beside.
// `predict`, `evaluate` and the app find one by NAME.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cnnstudio {

// The folders searched for models, in order: every folder of $CNNSTUDIO_MODELS_DIR (a ':'
// list), share/cnnstudio/models beside the running program's bin/, and the source tree's
// resources/models (for programs run from the build folder). Folders that do not exist are left out.
std::vector<std::filesystem::path> modelLibraryFolders();

// The names of the models found there (the first of a name wins), sorted.
std::vector<std::string> installedModelNames();

// `nameOrPath` as given: an existing folder is itself; otherwise the installed model of that
// name. Throws Error naming the folders searched and the models there.
std::filesystem::path resolveModel(const std::string& nameOrPath);

}  // namespace cnnstudio
