// The built-in networks of resources/presets, compiled into the engine.
#pragma once

#include <string>
#include <vector>

#include "cnnstudio/spec.h"

namespace cnnstudio {

std::vector<std::string> presetNames();
NetworkSpec loadPreset(const std::string& name);  // throws Error listing the presets

}  // namespace cnnstudio
