#include "layers/layer_params.h"

#include <string>
#include <vector>

#include "cnnstudio/error.h"
#include "cnnstudio/json_text.h"
#include "layers/layer_type.h"

namespace cnnstudio {
namespace {

using nlohmann::json;

const ParamInfo* findParam(const LayerTypeInfo& type, const std::string& name) {
    for (const auto& param : type.params)
        if (param.name == name) return &param;
    return nullptr;
}

std::string formatBound(double value) {
    json number = value;
    if (value == double(std::int64_t(value))) number = std::int64_t(value);
    return number.dump();
}

std::string rangeText(const ParamInfo& param) {
    return "from " + formatBound(param.minimum) + " to " + formatBound(param.maximum);
}

bool outOfRange(const ParamInfo& param, double value) {
    return param.minimum != param.maximum && (value < param.minimum || value > param.maximum);
}

bool isPair(const json& value) {
    return value.is_array() && value.size() == 2 && value[0].is_number_integer() &&
           value[1].is_number_integer();
}

// The problem with one present value of an "int-pair" parameter, or "".
std::string checkPair(const ParamInfo& param, const json& value) {
    if (value.is_number_integer()) {
        if (outOfRange(param, value.get<double>()))
            return "parameter '" + param.name + "' is " + describeJsonValue(value) + "; it must be " +
                   rangeText(param);
        return {};
    }
    if (!isPair(value))
        return "parameter '" + param.name + "' must be a whole number n or a pair [height, width], got " +
               describeJsonValue(value);
    for (const auto& side : value)
        if (outOfRange(param, side.get<double>()))
            return "parameter '" + param.name + "' is " + describeJsonValue(value) + "; each size must be " +
                   rangeText(param);
    return {};
}

std::string checkValue(const ParamInfo& param, const json& value) {
    const std::string quoted = "parameter '" + param.name + "'";
    if (param.kind == "int") {
        if (!value.is_number_integer())
            return quoted + " must be a whole number, got " + describeJsonValue(value);
        if (outOfRange(param, value.get<double>()))
            return quoted + " is " + describeJsonValue(value) + "; it must be " + rangeText(param);
        return {};
    }
    if (param.kind == "float") {
        if (!value.is_number()) return quoted + " must be a number, got " + describeJsonValue(value);
        if (outOfRange(param, value.get<double>()))
            return quoted + " is " + describeJsonValue(value) + "; it must be " + rangeText(param);
        return {};
    }
    if (param.kind == "bool") {
        if (!value.is_boolean()) return quoted + " must be true or false, got " + describeJsonValue(value);
        return {};
    }
    if (param.kind == "padding") {
        if (value.is_string()) {
            if (value == "valid" || value == "same") return {};
            return quoted + " must be \"valid\", \"same\", n or [height, width], got " + describeJsonValue(value);
        }
        return checkPair(param, value);
    }
    return checkPair(param, value);  // "int-pair"
}

SpatialPair toPair(const json& value) {
    if (value.is_array()) return {value[0].get<int>(), value[1].get<int>()};
    return {value.get<int>(), value.get<int>()};
}

}  // namespace

ParamInfo channelsParam(std::string name, std::string help) {
    return {std::move(name), "int", json(), "", 1, maxChannels, std::move(help)};
}

ParamInfo kernelParam(json defaultValue) {
    return {"kernel", "int-pair", std::move(defaultValue), "", 1, maxWindow,
            "window size: n for n×n, or [height, width]"};
}

ParamInfo biasParam() { return {"bias", "bool", true, "", 0, 0, "add a learned bias per output"}; }

std::string formatPair(SpatialPair pair) {
    return std::to_string(pair.height) + "x" + std::to_string(pair.width);
}

std::string checkParams(const NodeSpec& node, const LayerType& type) {
    const LayerTypeInfo& info = type.info;
    if (!node.params.is_object()) return "params must be a JSON object, got " + describeJsonValue(node.params);
    for (const auto& [name, value] : node.params.items()) {
        if (findParam(info, name)) continue;
        std::string known;
        for (const auto& param : info.params) known += (known.empty() ? "" : ", ") + param.name;
        return "unknown parameter '" + name + "' (" + info.type +
               (known.empty() ? " takes no parameters)" : " takes " + known + ")");
    }
    // Every missing parameter is named at once, so a fresh node's problem lists all the user has to set.
    std::vector<std::string> missing;
    std::string valueProblem;
    for (const auto& param : info.params) {
        auto found = node.params.find(param.name);
        if (found == node.params.end()) {
            if (param.defaultValue.is_null() && param.defaultsTo.empty())
                missing.push_back("'" + param.name + "' (" + param.help + ")");
            continue;
        }
        if (valueProblem.empty()) valueProblem = checkValue(param, *found);
    }
    if (missing.size() == 1) return "missing parameter " + missing.front();
    if (!missing.empty()) {
        std::string list;
        for (const std::string& entry : missing) list += (list.empty() ? "" : ", ") + entry;
        return "missing parameters " + list;
    }
    if (!valueProblem.empty()) return valueProblem;
    return type.checkParams ? type.checkParams(node) : std::string();
}

const json& paramValue(const NodeSpec& node, const std::string& name) {
    if (auto found = node.params.find(name); found != node.params.end()) return *found;
    const LayerType* type = findRegisteredLayerType(node.type);
    const ParamInfo* param = type ? findParam(type->info, name) : nullptr;
    if (!param)
        throw Error("layer type '" + node.type + "' has no parameter '" + name + "'",
                    "node '" + node.name + "'", "this is a bug in CNN Studio; please report it");
    if (!param->defaultsTo.empty()) return paramValue(node, param->defaultsTo);
    if (param->defaultValue.is_null())
        throw Error("missing parameter '" + name + "'", "node '" + node.name + "'",
                    "check the spec with analyseSpec before building layers from it");
    return param->defaultValue;
}

int intParam(const NodeSpec& node, const std::string& name) {
    return paramValue(node, name).get<int>();
}

double floatParam(const NodeSpec& node, const std::string& name) {
    return paramValue(node, name).get<double>();
}

bool boolParam(const NodeSpec& node, const std::string& name) {
    return paramValue(node, name).get<bool>();
}

SpatialPair pairParam(const NodeSpec& node, const std::string& name) {
    return toPair(paramValue(node, name));
}

}  // namespace cnnstudio
