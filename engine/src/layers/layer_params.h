// Typed reads of a node's params, for layers built from a spec that shape inference accepted.
// Defaults are the layer catalogue's (spec.h).
#pragma once

#include <nlohmann/json.hpp>

namespace cnnstudio {

struct HeightWidth {
    int height = 0, width = 0;
};

int intParam(const nlohmann::json& params, const char* name, int fallback);
float floatParam(const nlohmann::json& params, const char* name, float fallback);
bool boolParam(const nlohmann::json& params, const char* name, bool fallback);
// n or [h, w]
HeightWidth pairParam(const nlohmann::json& params, const char* name, HeightWidth fallback);
// "valid" -> 0, "same" -> (k - 1) / 2, n or [h, w] -> as given
HeightWidth paddingParam(const nlohmann::json& params, HeightWidth kernel);

}  // namespace cnnstudio
