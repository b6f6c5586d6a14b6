// Shape inference over the whole graph: topological order, per-node checks, cycles, the one
// input and the one output. What each layer does to a shape is its registry record's shape
// rule, in the family's file under engine/src/layers/.
//
// A node's problems come in this order, the first one found being the one reported: its own
// (no name, duplicate name, unknown type, a missing input node, wrong number of inputs, bad
// params), then being part of a cycle, then a shape that does not fit its inputs. A node fed
// by a broken node is not reported again: its own checks still run, but its shape stays unknown.
#include <algorithm>
#include <functional>
#include <map>
#include <queue>

#include "cnnstudio/error.h"
#include "cnnstudio/shape_inference.h"
#include "layers/layer_params.h"
#include "layers/layer_type.h"

namespace cnnstudio {
namespace {

constexpr std::size_t noNode = std::size_t(-1);

std::string quotedList(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
    return text;
}

std::string knownTypesText() {
    std::string text;
    for (const auto& type : registeredLayerTypes()) text += (text.empty() ? "" : ", ") + type.info.type;
    return text;
}

// The edges of the spec, by node index. Inputs naming no node are left out (the node reports
// them); a name used twice refers to its first node.
struct Graph {
    std::vector<std::vector<std::size_t>> inputs;     // per node, resolved inputs in order
    std::vector<std::vector<std::size_t>> consumers;  // per node, nodes it feeds
    std::map<std::string, std::size_t> indexOf;

    explicit Graph(const NetworkSpec& spec)
        : inputs(spec.nodes.size()), consumers(spec.nodes.size()) {
        for (std::size_t i = 0; i < spec.nodes.size(); ++i) indexOf.emplace(spec.nodes[i].name, i);
        for (std::size_t i = 0; i < spec.nodes.size(); ++i)
            for (const auto& name : spec.nodes[i].inputs)
                if (auto found = indexOf.find(name); found != indexOf.end()) {
                    inputs[i].push_back(found->second);
                    consumers[found->second].push_back(i);
                }
    }
};

std::string inputCountProblem(const NodeSpec& node, const LayerTypeInfo& type) {
    const int count = int(node.inputs.size());
    if (count >= type.minInputs && (type.maxInputs < 0 || count <= type.maxInputs)) return {};
    std::string takes;
    if (type.maxInputs == 0) takes = "takes no inputs";
    else if (type.maxInputs < 0) takes = "takes at least " + std::to_string(type.minInputs) + " inputs";
    else takes = "takes " + std::to_string(type.minInputs) +
                 (type.minInputs == 1 ? " input" : " inputs");
    std::string has = count == 0 ? "has none; connect one" :
                      "has " + std::to_string(count) + " (" + quotedList(node.inputs) + ")";
    return "wrong number of inputs: " + type.type + " " + takes + ", " + has;
}

// The problems a node has on its own, before any shape is known.
std::string ownProblem(const NetworkSpec& spec, std::size_t index, const Graph& graph) {
    const NodeSpec& node = spec.nodes[index];
    if (node.name.empty()) return "a " + node.type + " node has no name; give it one";
    if (graph.indexOf.at(node.name) != index)
        return "another node is also named '" + node.name + "'; node names must be unique";
    const LayerType* type = findRegisteredLayerType(node.type);
    if (!type) return "unknown layer type '" + node.type + "' (known types: " + knownTypesText() + ")";
    for (const auto& input : node.inputs)
        if (!graph.indexOf.count(input))
            return "input '" + input + "' does not exist: no node has that name";
    if (std::string problem = inputCountProblem(node, type->info); !problem.empty()) return problem;
    return checkParams(node, *type);
}

// Kahn's algorithm, taking among the ready nodes always the one first in the spec, so the order
// is stable and follows the file where it can. Nodes on or after a cycle are not in the result.
std::vector<std::size_t> topologicalOrder(const Graph& graph) {
    const std::size_t count = graph.inputs.size();
    std::vector<std::size_t> waitingFor(count);
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < count; ++i) {
        waitingFor[i] = graph.inputs[i].size();
        if (waitingFor[i] == 0) ready.push(i);
    }
    std::vector<std::size_t> order;
    while (!ready.empty()) {
        std::size_t node = ready.top();
        ready.pop();
        order.push_back(node);
        for (std::size_t consumer : graph.consumers[node])
            if (--waitingFor[consumer] == 0) ready.push(consumer);
    }
    return order;
}

// The shortest cycle through `start` following the data flow, as node indices ending where they
// start, or empty when `start` is not on a cycle (it merely sits downstream of one).
std::vector<std::size_t> cycleThrough(std::size_t start, const Graph& graph) {
    std::vector<std::size_t> reachedFrom(graph.inputs.size(), noNode);
    std::queue<std::size_t> frontier;
    frontier.push(start);
    while (!frontier.empty()) {
        std::size_t node = frontier.front();
        frontier.pop();
        for (std::size_t consumer : graph.consumers[node]) {
            if (reachedFrom[consumer] != noNode) continue;
            reachedFrom[consumer] = node;
            if (consumer == start) {
                std::vector<std::size_t> cycle{start};
                for (std::size_t at = node; at != start; at = reachedFrom[at]) cycle.push_back(at);
                cycle.push_back(start);
                std::reverse(cycle.begin(), cycle.end());
                return cycle;
            }
            frontier.push(consumer);
        }
    }
    return {};
}

bool isNetworkInput(const NodeSpec& node) {
    const LayerType* type = findRegisteredLayerType(node.type);
    return type && type->traits.isNetworkInput;
}

std::string cycleProblem(const NetworkSpec& spec, const std::vector<std::size_t>& cycle) {
    std::string path;
    for (std::size_t node : cycle) path += (path.empty() ? "" : " -> ") + spec.nodes[node].name;
    return "part of a cycle: " + path + "; data must flow one way, so remove one of these connections";
}

}  // namespace

const NodeInfo* ShapeReport::find(const std::string& nodeName) const {
    for (const auto& node : nodes)
        if (node.name == nodeName) return &node;
    return nullptr;
}

ShapeReport analyseSpec(const NetworkSpec& spec) {
    ShapeReport report;
    const Graph graph(spec);
    const std::size_t count = spec.nodes.size();
    std::vector<NodeInfo> infos(count);
    std::vector<bool> known(count, false);  // output shape inferred without problems
    for (std::size_t i = 0; i < count; ++i) {
        infos[i].name = spec.nodes[i].name;
        infos[i].type = spec.nodes[i].type;
        infos[i].problem = ownProblem(spec, i, graph);
    }

    std::vector<std::size_t> inputNodes;
    for (std::size_t i = 0; i < count; ++i)
        if (isNetworkInput(spec.nodes[i])) inputNodes.push_back(i);
    if (inputNodes.size() > 1) {
        std::vector<std::string> names;
        for (std::size_t i : inputNodes) names.push_back(spec.nodes[i].name);
        for (std::size_t k = 1; k < inputNodes.size(); ++k)
            if (infos[inputNodes[k]].problem.empty())
                infos[inputNodes[k]].problem = "more than one Input node (" + quotedList(names) +
                                               "); a network has exactly one";
    }

    std::vector<std::size_t> order = topologicalOrder(graph);
    std::vector<bool> ordered(count, false), onCycle(count, false);
    for (std::size_t i : order) ordered[i] = true;
    for (std::size_t i = 0; i < count; ++i) {
        if (ordered[i]) continue;
        if (infos[i].problem.empty())
            if (auto cycle = cycleThrough(i, graph); !cycle.empty()) {
                infos[i].problem = cycleProblem(spec, cycle);
                onCycle[i] = true;
            }
        order.push_back(i);  // on a cycle or downstream of one: never gets a shape
    }

    for (std::size_t i : order) {
        if (!ordered[i] || !infos[i].problem.empty()) continue;
        std::vector<TensorShape> inputShapes;
        bool inputsKnown = true;
        for (std::size_t input : graph.inputs[i]) {
            inputsKnown = inputsKnown && known[input];
            inputShapes.push_back(infos[input].outputShape);
        }
        if (!inputsKnown) continue;  // the broken input carries the report
        // Its own checks passed: the type is registered and the params are valid.
        const NodeSpec& node = spec.nodes[i];
        LayerOutcome outcome = findRegisteredLayerType(node.type)->inferShape(node, inputShapes);
        if (!outcome.problem.empty()) {
            infos[i].problem = outcome.problem;
            continue;
        }
        infos[i].outputShape = outcome.outputShape;
        infos[i].parameters = outcome.parameters;
        infos[i].forwardFlops = outcome.forwardFlops;
        known[i] = true;
    }

    std::vector<std::size_t> sinks;
    for (std::size_t i = 0; i < count; ++i)
        if (graph.consumers[i].empty()) sinks.push_back(i);
    if (sinks.size() == 1) {
        report.outputNode = spec.nodes[sinks[0]].name;
        if (known[sinks[0]]) report.outputShape = infos[sinks[0]].outputShape;
    } else if (sinks.size() > 1) {
        std::vector<std::string> names;
        for (std::size_t i : sinks) names.push_back(spec.nodes[i].name);
        for (std::size_t i : sinks)
            if (infos[i].problem.empty()) {
                infos[i].problem = "more than one output: " + quotedList(names) +
                                   " feed no other node; keep one output (the logits) and "
                                   "connect or remove the others";
            }
    }

    if (count == 0) report.problems.emplace_back("", "the network has no nodes; add an Input node first");
    else if (inputNodes.empty())
        report.problems.emplace_back("", "the network has no Input node; add one (channels, height, width)");
    else if (known[inputNodes[0]]) report.inputShape = infos[inputNodes[0]].outputShape;

    // A cycle's problems come first: a cycle also cuts nodes off (an Input that feeds nothing
    // seems a second output), and inferShapes reports the first problem, which must be the cause.
    std::vector<std::pair<std::string, std::string>> laterProblems;
    for (std::size_t i : order) {
        if (known[i]) {
            const bool underLimit = report.totalParameters <= kMaxNetworkParameters;
            report.totalParameters += infos[i].parameters;
            report.totalForwardFlops += infos[i].forwardFlops;
            report.activationBytesPerImage +=
                infos[i].outputShape.countPerImage() * std::int64_t(sizeof(float));
            if (underLimit && report.totalParameters > kMaxNetworkParameters && infos[i].problem.empty())
                infos[i].problem = "its " + std::to_string(infos[i].parameters) +
                                   " parameters take the network's total to " +
                                   std::to_string(report.totalParameters) + ", more than the " +
                                   std::to_string(kMaxNetworkParameters) +
                                   " (2^31 - 1) one network can hold; make this layer or the ones before it smaller";
        }
        if (!infos[i].problem.empty())
            (onCycle[i] ? report.problems : laterProblems).emplace_back(infos[i].name, infos[i].problem);
        report.nodes.push_back(std::move(infos[i]));
    }
    report.problems.insert(report.problems.end(), laterProblems.begin(), laterProblems.end());
    return report;
}

ShapeReport inferShapes(const NetworkSpec& spec) {
    ShapeReport report = analyseSpec(spec);
    if (report.ok()) return report;
    const auto& [node, message] = report.problems.front();
    std::string where = !node.empty()       ? "node '" + node + "'"
                        : spec.name.empty() ? std::string("network")
                                            : "network '" + spec.name + "'";
    std::string hint;
    if (report.problems.size() > 1)
        hint = std::to_string(report.problems.size() - 1) + " more problem" +
               (report.problems.size() > 2 ? "s" : "") + " after this one";
    throw Error(message, where, hint);
}

}  // namespace cnnstudio
