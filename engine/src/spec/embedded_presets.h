// The JSON text of every file in resources/presets, keyed by file name without ".json".
// Defined in the build folder's embedded_presets.cpp, written by cmake/EmbedPresets.cmake.
#pragma once

#include <map>
#include <string>

namespace cnnstudio {

const std::map<std::string, std::string>& embeddedPresets();

}  // namespace cnnstudio
