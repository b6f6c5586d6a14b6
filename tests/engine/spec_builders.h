// Small helpers for writing network specs in tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cnnstudio/shape_inference.h"
#include "cnnstudio/spec.h"

namespace cnnstudio::spec_testing {

inline NodeSpec node(std::string name, std::string type, std::vector<std::string> inputs = {},
                     nlohmann::json params = nlohmann::json::object()) {
    return {std::move(name), std::move(type), std::move(params), std::move(inputs)};
}

inline NodeSpec input(int channels, int height, int width, std::string name = "input") {
    return node(std::move(name), "Input", {},
                {{"channels", channels}, {"height", height}, {"width", width}});
}

inline NetworkSpec network(std::vector<NodeSpec> nodes, std::string name = "test-net") {
    NetworkSpec spec;
    spec.name = std::move(name);
    spec.nodes = std::move(nodes);
    return spec;
}

// The problem reported against `nodeName`, or "" when there is none.
inline std::string problemOf(const ShapeReport& report, const std::string& nodeName) {
    for (const auto& [name, message] : report.problems)
        if (name == nodeName) return message;
    return {};
}

}  // namespace cnnstudio::spec_testing
