// NetworkSpec <-> JSON document <-> file. fromJson checks the structure only (objects, keys,
// JSON types, unique names); whether the graph makes sense is analyseSpec's job, so that the
// designer can open and show a half-finished network.
#include <fstream>
#include <set>
#include <sstream>

#include "cnnstudio/atomic_file.h"
#include "cnnstudio/error.h"
#include "cnnstudio/json_text.h"
#include "cnnstudio/spec.h"

namespace cnnstudio {
namespace {

using nlohmann::json;

constexpr const char* formatName = "cnnstudio-network";
constexpr int formatVersion = 1;

void rejectUnknownKeys(const json& object, const std::set<std::string>& allowed,
                       const std::string& what, const std::string& where) {
    for (const auto& [key, value] : object.items()) {
        if (allowed.count(key)) continue;
        std::string known;
        for (const auto& name : allowed) known += (known.empty() ? "" : ", ") + name;
        throw Error("unknown key '" + key + "' in " + what, where, "a " + what + " has " + known);
    }
}

std::string optionalString(const json& object, const std::string& key, const std::string& where) {
    auto found = object.find(key);
    if (found == object.end()) return {};
    if (!found->is_string())
        throw Error("\"" + key + "\" must be a string, got " + describeJsonValue(*found), where);
    return found->get<std::string>();
}

NodeSpec nodeFromJson(const json& entry, std::size_t position) {
    const std::string numbered = "node #" + std::to_string(position + 1);
    if (!entry.is_object())
        throw Error("a node must be a JSON object, got " + describeJsonValue(entry), numbered,
                    "write {\"name\": ..., \"type\": ..., \"inputs\": [...], \"params\": {...}}");
    NodeSpec node;
    auto name = entry.find("name");
    if (name == entry.end() || !name->is_string() || name->get<std::string>().empty())
        throw Error("the node has no name (a non-empty string)", numbered, "give every node a unique name");
    node.name = name->get<std::string>();
    const std::string where = "node '" + node.name + "'";
    rejectUnknownKeys(entry, {"name", "type", "inputs", "params"}, "node", where);

    auto type = entry.find("type");
    if (type == entry.end() || !type->is_string() || type->get<std::string>().empty())
        throw Error("the node has no type (a non-empty string such as \"Conv2D\")", where);
    node.type = type->get<std::string>();

    if (auto inputs = entry.find("inputs"); inputs != entry.end()) {
        if (!inputs->is_array())
            throw Error("\"inputs\" must be a list of node names, got " + describeJsonValue(*inputs), where);
        for (const auto& input : *inputs) {
            if (!input.is_string())
                throw Error("\"inputs\" must be a list of node names, got " + describeJsonValue(*inputs), where);
            node.inputs.push_back(input.get<std::string>());
        }
    }
    if (auto params = entry.find("params"); params != entry.end()) {
        if (!params->is_object())
            throw Error("\"params\" must be a JSON object, got " + describeJsonValue(*params), where);
        node.params = *params;
    }
    return node;
}

std::pair<double, double> positionFromJson(const std::string& nodeName, const json& value) {
    if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_number())
        throw Error("a layout position must be [x, y], got " + describeJsonValue(value),
                    "layout of node '" + nodeName + "'");
    return {value[0].get<double>(), value[1].get<double>()};
}

// One line per JSON value, with a space after ':' and ',' as a person would write it.
std::string compact(const json& value) {
    std::string text;
    if (value.is_object()) {
        for (const auto& [key, item] : value.items())
            text += (text.empty() ? "" : ", ") + json(key).dump() + ": " + compact(item);
        return "{" + text + "}";
    }
    if (value.is_array()) {
        for (const auto& item : value) text += (text.empty() ? "" : ", ") + compact(item);
        return "[" + text + "]";
    }
    return value.dump();
}

// The document as saved: top-level keys in reading order, one node per line, one layout
// position per line, so that specs diff well under version control.
std::string documentText(const NetworkSpec& spec) {
    std::string text = "{\n";
    text += "  \"format\": " + json(formatName).dump() + ",\n";
    text += "  \"version\": " + std::to_string(formatVersion) + ",\n";
    text += "  \"name\": " + json(spec.name).dump() + ",\n";
    text += "  \"description\": " + json(spec.description).dump() + ",\n";
    text += "  \"nodes\": [";
    for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
        const NodeSpec& node = spec.nodes[i];
        text += (i == 0 ? "\n    {" : ",\n    {");
        text += "\"name\": " + json(node.name).dump() + ", \"type\": " + json(node.type).dump();
        if (!node.inputs.empty()) text += ", \"inputs\": " + compact(json(node.inputs));
        if (!node.params.empty()) text += ", \"params\": " + compact(node.params);
        text += "}";
    }
    text += spec.nodes.empty() ? "]" : "\n  ]";
    if (!spec.layout.empty()) {
        text += ",\n  \"layout\": {";
        bool first = true;
        for (const auto& [name, position] : spec.layout) {
            text += (first ? "\n    " : ",\n    ") + json(name).dump() + ": " +
                    compact(json::array({position.first, position.second}));
            first = false;
        }
        text += "\n  }";
    }
    return text + "\n}\n";
}

}  // namespace

const NodeSpec* NetworkSpec::find(const std::string& nodeName) const {
    for (const auto& node : nodes)
        if (node.name == nodeName) return &node;
    return nullptr;
}

NodeSpec* NetworkSpec::find(const std::string& nodeName) {
    for (auto& node : nodes)
        if (node.name == nodeName) return &node;
    return nullptr;
}

NetworkSpec NetworkSpec::fromJson(const json& document) {
    if (!document.is_object())
        throw Error(std::string("a network spec must be a JSON object, got ") + document.type_name(), "",
                    "start the file with { \"format\": \"cnnstudio-network\", \"nodes\": [...] }");
    rejectUnknownKeys(document, {"format", "version", "name", "description", "nodes", "layout"},
                      "network spec", "");
    if (auto format = document.find("format"); format != document.end() && *format != formatName)
        throw Error("not a CNN Studio network: \"format\" is " + describeJsonValue(*format), "",
                    "expected \"cnnstudio-network\"");
    if (auto version = document.find("version"); version != document.end()) {
        if (!version->is_number_integer() || version->get<std::int64_t>() < 1)
            throw Error("\"version\" must be a whole number from 1, got " + describeJsonValue(*version));
        if (version->get<std::int64_t>() > formatVersion)
            throw Error("spec version " + version->dump() + " is newer than this CNN Studio reads (" +
                        std::to_string(formatVersion) + ")", "", "update CNN Studio");
    }

    NetworkSpec spec;
    spec.name = optionalString(document, "name", "");
    spec.description = optionalString(document, "description", "");

    auto nodes = document.find("nodes");
    if (nodes == document.end())
        throw Error("the spec has no \"nodes\" list", "", "add \"nodes\": [ ... ] with at least an Input node");
    if (!nodes->is_array()) throw Error("\"nodes\" must be a list, got " + describeJsonValue(*nodes));
    std::set<std::string> seen;
    for (std::size_t i = 0; i < nodes->size(); ++i) {
        NodeSpec node = nodeFromJson((*nodes)[i], i);
        if (!seen.insert(node.name).second)
            throw Error("two nodes are named '" + node.name + "'", "node '" + node.name + "'",
                        "node names must be unique; rename one of them");
        spec.nodes.push_back(std::move(node));
    }

    if (auto layout = document.find("layout"); layout != document.end()) {
        if (!layout->is_object())
            throw Error("\"layout\" must be an object of node name -> [x, y], got " + describeJsonValue(*layout));
        for (const auto& [name, position] : layout->items())
            spec.layout[name] = positionFromJson(name, position);
    }
    return spec;
}

json NetworkSpec::toJson() const {
    json document = {{"format", formatName}, {"version", formatVersion},
                     {"name", name},         {"description", description}};
    json nodeList = json::array();
    for (const auto& node : nodes) {
        json entry = {{"name", node.name}, {"type", node.type}};
        if (!node.inputs.empty()) entry["inputs"] = node.inputs;
        if (!node.params.empty()) entry["params"] = node.params;
        nodeList.push_back(std::move(entry));
    }
    document["nodes"] = std::move(nodeList);
    if (!layout.empty()) {
        json positions = json::object();
        for (const auto& [nodeName, position] : layout)
            positions[nodeName] = json::array({position.first, position.second});
        document["layout"] = std::move(positions);
    }
    return document;
}

NetworkSpec NetworkSpec::load(const std::filesystem::path& file) {
    std::ifstream stream(file, std::ios::binary);
    if (!stream)
        throw Error("cannot open the network spec", file.string(), "check the path and its permissions");
    std::stringstream buffer;
    buffer << stream.rdbuf();
    const std::string text = buffer.str();

    rejectDeepJsonNesting(text, file.string());
    json document;
    try {
        document = json::parse(text);
    } catch (const json::parse_error& error) {
        // The library says "[json.exception.parse_error.101] parse error at line 3, column 5: why";
        // the file:line goes into where, the why into what.
        std::size_t line = 1;
        for (std::size_t i = 0; i < std::min<std::size_t>(error.byte, text.size()); ++i)
            line += text[i] == '\n';
        std::string why = error.what();
        if (auto colon = why.find(": "); colon != std::string::npos) why = why.substr(colon + 2);
        throw Error("not valid JSON: " + why, file.string() + ":" + std::to_string(line),
                    "fix the file in a text editor, or save the network again from the designer");
    } catch (const json::exception& error) {
        // A number past a double ("1e99999") is an out_of_range error, which carries no position.
        std::string why = error.what();
        if (auto bracket = why.find("] "); bracket != std::string::npos) why = why.substr(bracket + 2);
        throw Error("not valid JSON: " + why, file.string(),
                    "fix the file in a text editor, or save the network again from the designer");
    }
    try {
        return fromJson(document);
    } catch (const Error& error) {
        std::string where = error.where().empty() ? file.string() : file.string() + ", " + error.where();
        throw Error(error.reason(), where, error.hint());
    }
}

void NetworkSpec::save(const std::filesystem::path& file) const {
    std::string text;
    try {
        text = documentText(*this);
    } catch (const json::exception& error) {  // a name or param that is not valid UTF-8
        throw Error(std::string("cannot write the spec as JSON: ") + error.what(), file.string(),
                    "use only valid UTF-8 text in names, descriptions and params");
    }
    writeFileAtomically(file, text);
}

}  // namespace cnnstudio
