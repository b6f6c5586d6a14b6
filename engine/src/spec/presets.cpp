// The built-in networks of resources/presets, compiled into the engine.
#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "spec/embedded_presets.h"

namespace cnnstudio {

std::vector<std::string> presetNames() {
    std::vector<std::string> names;
    for (const auto& [name, text] : embeddedPresets()) names.push_back(name);
    return names;
}

NetworkSpec loadPreset(const std::string& name) {
    auto found = embeddedPresets().find(name);
    if (found == embeddedPresets().end()) {
        std::string known;
        for (const auto& preset : presetNames()) known += (known.empty() ? "" : ", ") + preset;
        throw Error("unknown preset '" + name + "'", "", "the presets are " + known);
    }
    // A preset that does not parse is a build defect; say which one rather than crash.
    try {
        return NetworkSpec::fromJson(nlohmann::json::parse(found->second));
    } catch (const nlohmann::json::parse_error& error) {
        throw Error(std::string("built-in preset is not valid JSON: ") + error.what(),
                    "resources/presets/" + name + ".json", "this is a bug in CNN Studio; please report it");
    } catch (const Error& error) {
        throw Error(error.reason(), "resources/presets/" + name + ".json" +
                    (error.where().empty() ? "" : ", " + error.where()), error.hint());
    }
}

}  // namespace cnnstudio
