// Named training recipes: resources/recipes/NAME.json, compiled into cnnstudio-train. A recipe
// fixes a network, the kind of data set it is for, every trainer option and the seed, so that
// `cnnstudio-train --recipe NAME --dataset KIND:PATH` reproduces a run; options given on the
// command line override the recipe's.
//
// File format (version 1):
//   {"format": "cnnstudio-recipe", "version": 1, "name": "fer-cnn", "description": "...",
//    "network": "preset:fer-cnn", "dataset_kind": "fer2013",
//    "settings": {"epochs": 60, "batch": 128, "optimizer": "sgd", "lr": 0.05, ...}}
// Each key of "settings" is the name of a cnnstudio-train option without its dashes
// (kRecipeSettings lists them); its value has the option's type.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cnnstudio::app {

// The options a recipe may set, by their command-line names without the leading "--".
extern const std::vector<std::string> kRecipeSettings;

struct Recipe {
    std::string name, description;
    std::string network;      // "preset:NAME"
    std::string datasetKind;  // "fer2013", "fashion-mnist", "idx", "folder"
    nlohmann::json settings;  // option name -> value, every key one of kRecipeSettings
};

// Throws Error naming `source` and the field at fault.
Recipe parseRecipe(const nlohmann::json& json, const std::string& source);
std::vector<std::string> recipeNames();
// Throws Error listing the recipes when `name` is none of them.
Recipe loadRecipe(const std::string& name);

}  // namespace cnnstudio::app
