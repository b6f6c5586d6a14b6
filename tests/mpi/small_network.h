// The small network the MPI suites train: conv, pool and dense, without batch norm or dropout
// (with those, per-rank batch statistics and masks differ from single-process ones by design).
#pragma once

#include "cnnstudio/spec.h"

namespace cnnstudio {

// Input (1, 10, 10), 5 classes.
inline NetworkSpec smallNetwork() {
    NetworkSpec spec;
    spec.name = "small";
    auto add = [&](std::string name, std::string type, std::vector<std::string> inputs, nlohmann::json params) {
        spec.nodes.push_back({std::move(name), std::move(type), std::move(params), std::move(inputs)});
    };
    add("input", "Input", {}, {{"channels", 1}, {"height", 10}, {"width", 10}});
    add("conv", "Conv2D", {"input"}, {{"filters", 4}, {"kernel", 3}});
    add("relu", "ReLU", {"conv"}, nlohmann::json::object());
    add("pool", "MaxPool2D", {"relu"}, {{"kernel", 2}});
    add("flat", "Flatten", {"pool"}, nlohmann::json::object());
    add("fc", "Dense", {"flat"}, {{"units", 5}});
    return spec;
}

}  // namespace cnnstudio
