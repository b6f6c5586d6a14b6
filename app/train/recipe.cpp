#include "train/recipe.h"

#include <algorithm>

#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"

namespace cnnstudio {
// Defined in the build folder's embedded_recipes.cpp, written by cmake/EmbedPresets.cmake from
// resources/recipes/*.json.
const std::map<std::string, std::string>& embeddedRecipes();
}  // namespace cnnstudio

namespace cnnstudio::app {

const std::vector<std::string> kRecipeSettings = {
    "backend",  "precision",    "epochs",        "batch",           "optimizer",     "lr",
    "momentum", "nesterov",     "weight-decay",  "schedule",        "warmup-epochs", "augment",
    "label-smoothing", "class-weights", "early-stop", "seed",       "log-every", "target-accuracy",
    "teachers", "distill-weight", "distill-temperature"};

Recipe parseRecipe(const nlohmann::json& json, const std::string& source) {
    if (!json.is_object() || json.value("format", "") != "cnnstudio-recipe" || json.value("version", 0) != 1)
        throw Error("not a version 1 CNN Studio recipe", source,
                    "a recipe has \"format\": \"cnnstudio-recipe\" and \"version\": 1");
    Recipe recipe;
    try {
        recipe.name = json.at("name").get<std::string>();
        recipe.description = json.value("description", "");
        recipe.network = json.at("network").get<std::string>();
        recipe.datasetKind = json.at("dataset_kind").get<std::string>();
        recipe.settings = json.at("settings");
    } catch (const nlohmann::json::exception& error) {
        throw Error(std::string("the recipe is incomplete: ") + error.what(), source,
                    "it needs name, network, dataset_kind and settings");
    }
    if (recipe.network.rfind("preset:", 0) != 0)
        throw Error("network '" + recipe.network + "' is not of the form preset:NAME", source);
    const std::string preset = recipe.network.substr(7);
    const std::vector<std::string> presets = presetNames();
    if (std::find(presets.begin(), presets.end(), preset) == presets.end())
        throw Error("network '" + recipe.network + "' names no built-in preset", source);
    if (!recipe.settings.is_object()) throw Error("settings is not an object", source);
    for (const auto& [key, value] : recipe.settings.items())
        if (std::find(kRecipeSettings.begin(), kRecipeSettings.end(), key) == kRecipeSettings.end())
            throw Error("setting '" + key + "' is not an option a recipe may set", source,
                        "use the option names of cnnstudio-train --help without their dashes");
    return recipe;
}

std::vector<std::string> recipeNames() {
    std::vector<std::string> names;
    for (const auto& [name, text] : embeddedRecipes()) names.push_back(name);
    return names;
}

Recipe loadRecipe(const std::string& name) {
    const auto& recipes = embeddedRecipes();
    const auto found = recipes.find(name);
    if (found == recipes.end()) {
        std::string known;
        for (const auto& [recipeName, text] : recipes) known += (known.empty() ? "" : ", ") + recipeName;
        throw Error("no recipe named '" + name + "'", "--recipe", "the recipes are: " + known);
    }
    const std::string source = "recipe " + name;
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(found->second);
    } catch (const nlohmann::json::parse_error& error) {
        throw Error(std::string("the recipe is not valid JSON: ") + error.what(), source);
    }
    return parseRecipe(json, source);
}

}  // namespace cnnstudio::app
