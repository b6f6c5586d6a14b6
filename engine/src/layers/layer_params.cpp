#include "layers/layer_params.h"

namespace cnnstudio {

int intParam(const nlohmann::json& params, const char* name, int fallback) {
    auto it = params.find(name);
    return it == params.end() || it->is_null() ? fallback : it->get<int>();
}

float floatParam(const nlohmann::json& params, const char* name, float fallback) {
    auto it = params.find(name);
    return it == params.end() || it->is_null() ? fallback : it->get<float>();
}

bool boolParam(const nlohmann::json& params, const char* name, bool fallback) {
    auto it = params.find(name);
    return it == params.end() || it->is_null() ? fallback : it->get<bool>();
}

HeightWidth pairParam(const nlohmann::json& params, const char* name, HeightWidth fallback) {
    auto it = params.find(name);
    if (it == params.end() || it->is_null()) return fallback;
    if (it->is_array()) return {(*it)[0].get<int>(), (*it)[1].get<int>()};
    int n = it->get<int>();
    return {n, n};
}

HeightWidth paddingParam(const nlohmann::json& params, HeightWidth kernel) {
    auto it = params.find("padding");
    if (it == params.end() || it->is_null()) return {0, 0};
    if (it->is_string())
        return *it == "same" ? HeightWidth{(kernel.height - 1) / 2, (kernel.width - 1) / 2}
                             : HeightWidth{0, 0};
    return pairParam(params, "padding", {0, 0});
}

}  // namespace cnnstudio
