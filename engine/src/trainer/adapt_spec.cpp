// adaptSpecToDataset (trainer.h): a preset drawn for one data set trains on another.
#include <set>

#include "cnnstudio/error.h"
#include "cnnstudio/shape_inference.h"
#include "cnnstudio/trainer.h"
#include "layers/layer_type.h"

namespace cnnstudio {

namespace {

// The spec is not checked yet, so a node may name no registered type: it then has no traits.
const LayerTraits& traitsOf(const NodeSpec& node) {
    static const LayerTraits none;
    const LayerType* type = findRegisteredLayerType(node.type);
    return type ? type->traits : none;
}

std::string valueText(const nlohmann::json& params, const char* name) {
    auto it = params.find(name);
    return it == params.end() ? std::string("(unset)") : it->dump();
}

// Sets params[name] = value; returns "name old -> new" when that changed anything.
std::string setParam(nlohmann::json& params, const char* name, int value) {
    auto it = params.find(name);
    if (it != params.end() && it->is_number_integer() && it->get<int>() == value) return {};
    std::string change = std::string(name) + " " + valueText(params, name) + " -> " + std::to_string(value);
    params[name] = value;
    return change;
}

std::string joinChanges(const std::vector<std::string>& parts) {
    std::string text;
    for (const auto& part : parts) {
        if (part.empty()) continue;
        text += (text.empty() ? "" : ", ") + part;
    }
    return text;
}

const NodeSpec& outputNode(const NetworkSpec& spec) {
    std::set<std::string> consumed;
    for (const auto& node : spec.nodes)
        for (const auto& input : node.inputs) consumed.insert(input);
    std::vector<const NodeSpec*> outputs;
    for (const auto& node : spec.nodes)
        if (!consumed.count(node.name)) outputs.push_back(&node);
    if (outputs.size() != 1) {
        std::string names;
        for (const NodeSpec* node : outputs) names += (names.empty() ? "'" : ", '") + node->name + "'";
        throw Error("the network needs exactly one output node, it has " + std::to_string(outputs.size()) +
                        (names.empty() ? std::string() : " (" + names + ")"),
                    "spec '" + spec.name + "'", "connect every branch so that one node produces the class scores");
    }
    return *outputs.front();
}

}  // namespace

SpecAdaptation adaptSpecToDataset(const NetworkSpec& spec, int channels, int height, int width,
                                  int classes) {
    if (channels < 1 || height < 1 || width < 1 || classes < 2)
        throw Error("cannot fit a network to images of " + std::to_string(channels) + "x" +
                    std::to_string(height) + "x" + std::to_string(width) + " in " +
                    std::to_string(classes) + " classes", "data set",
                    "a data set needs images and at least two classes");
    SpecAdaptation result{spec, {}};
    NetworkSpec& adapted = result.spec;

    NodeSpec* input = nullptr;
    for (auto& node : adapted.nodes) {
        if (!traitsOf(node).isNetworkInput) continue;
        if (input)
            throw Error("the network has more than one Input node", "node '" + node.name + "'",
                        "keep exactly one Input node");
        input = &node;
    }
    if (!input) throw Error("the network has no Input node", "spec '" + spec.name + "'", "add an Input node");
    if (!input->params.is_object()) input->params = nlohmann::json::object();
    std::string inputChange = joinChanges({setParam(input->params, "channels", channels),
                                           setParam(input->params, "height", height),
                                           setParam(input->params, "width", width)});
    if (!inputChange.empty()) result.changes.push_back("node '" + input->name + "': " + inputChange);

    // Walk back from the output to the layer whose channels are the class scores.
    const NodeSpec* node = &outputNode(adapted);
    std::set<std::string> visited;
    while (traitsOf(*node).classCountParam.empty()) {
        if (!traitsOf(*node).passesClassScoresThrough || node->inputs.size() != 1 ||
            !visited.insert(node->name).second)
            throw Error("cannot find the layer that produces the class scores: the walk back from the "
                        "output stops at this " + node->type + " node",
                        "node '" + node->name + "'",
                        "end the network with a Dense layer, or a Conv2D followed by GlobalAvgPool or Flatten");
        const NodeSpec* previous = adapted.find(node->inputs.front());
        if (!previous)
            throw Error("input '" + node->inputs.front() + "' does not exist", "node '" + node->name + "'",
                        "connect the node to an existing one");
        node = previous;
    }
    NodeSpec* scores = adapted.find(node->name);
    if (!scores->params.is_object()) scores->params = nlohmann::json::object();
    std::string scoresChange =
        setParam(scores->params, traitsOf(*scores).classCountParam.c_str(), classes);
    if (!scoresChange.empty()) result.changes.push_back("node '" + scores->name + "': " + scoresChange);

    // The new input size must still fit every layer; the error names the node that breaks.
    inferShapes(adapted);
    return result;
}

}  // namespace cnnstudio
