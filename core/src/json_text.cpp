#include "cnnstudio/json_text.h"

#include "cnnstudio/error.h"

namespace cnnstudio {
namespace {

using nlohmann::json;

constexpr std::size_t kExcerptChars = 60;
constexpr int kExcerptDepth = 3;

std::string scalarText(const json& value) {
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Appends `value`'s JSON text (as dump() writes it) to `out`, cutting it with "…" once `out`
// reaches kExcerptChars or the nesting reaches kExcerptDepth, so that the work done is bounded
// whatever the value holds. Returns false when it cut something.
bool appendExcerpt(const json& value, int depth, std::string& out) {
    if (value.is_string() && value.get_ref<const std::string&>().size() > kExcerptChars) {
        out += scalarText(json(value.get_ref<const std::string&>().substr(0, kExcerptChars))) + "…";
        return false;
    }
    if (!value.is_structured()) {
        out += scalarText(value);
        return true;
    }
    const bool isArray = value.is_array();
    out += isArray ? "[" : "{";
    bool whole = true;
    if (depth >= kExcerptDepth && !value.empty()) {
        out += "…";
        whole = false;
    } else {
        for (auto item = value.begin(); item != value.end() && whole; ++item) {
            if (item != value.begin()) out += ",";
            if (out.size() >= kExcerptChars) {
                out += "…";
                whole = false;
                break;
            }
            if (!isArray) out += scalarText(json(item.key())) + ":";
            whole = appendExcerpt(*item, depth + 1, out);
        }
    }
    out += isArray ? "]" : "}";
    return whole;
}

std::string kindOf(const json& value) {
    const std::string count = std::to_string(value.size());
    if (value.is_array()) return "a list of " + count + (value.size() == 1 ? " item" : " items");
    if (value.is_object()) return "an object of " + count + (value.size() == 1 ? " key" : " keys");
    return "a string";
}

}  // namespace

std::string describeJsonValue(const json& value) {
    std::string excerpt;
    if (appendExcerpt(value, 0, excerpt)) return excerpt;
    return kindOf(value) + " beginning " + excerpt;
}

void rejectDeepJsonNesting(std::string_view text, const std::string& source) {
    int depth = 0;
    std::size_t line = 1;
    bool inString = false, escaped = false;
    for (const char c : text) {
        if (c == '\n') ++line;
        if (inString) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') inString = false;
            continue;
        }
        if (c == '"') inString = true;
        else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonNestingDepth)
                throw Error("JSON nested more than " + std::to_string(kMaxJsonNestingDepth) +
                                " lists or objects deep",
                            source + ":" + std::to_string(line),
                            "the file is damaged or not a CNN Studio document; fix that value in a text editor");
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

}  // namespace cnnstudio
