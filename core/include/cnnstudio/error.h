// The one error type of CNN Studio: what failed, where, and what to do about it.
// Thrown at the point of detection, caught at the edge (CLI, worker, GUI).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace cnnstudio {

// Messages quote user text (node names, file names, CSV cells): a NUL byte would cut the message
// where C strings end, and escape sequences would reach the terminal raw. Every control byte but
// the newline becomes \xNN.
inline std::string escapeControlBytes(const std::string& text) {
    static constexpr char kHexDigits[] = "0123456789abcdef";
    std::string escaped;
    escaped.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte >= 0x20 && byte != 0x7f) || c == '\n') {
            escaped += c;
        } else {
            escaped += "\\x";
            escaped += kHexDigits[byte >> 4];
            escaped += kHexDigits[byte & 0xf];
        }
    }
    return escaped;
}

class Error : public std::runtime_error {
public:
    // what:  what failed ("pixel count is 2303, expected 2304")
    // where: file:line, node name, rank or layer ("fer2013.csv:118", "node 'conv3'")
    // hint:  what the user can do ("check the export", "lower the batch size to 128")
    Error(std::string what, std::string where = {}, std::string hint = {})
        : std::runtime_error(compose(what, where, hint)),
          what_(std::move(what)), where_(std::move(where)), hint_(std::move(hint)) {}

    const std::string& reason() const noexcept { return what_; }
    const std::string& where() const noexcept { return where_; }
    const std::string& hint() const noexcept { return hint_; }

private:
    static std::string compose(const std::string& what, const std::string& where,
                               const std::string& hint) {
        std::string text = where.empty() ? what : where + ": " + what;
        if (!hint.empty()) text += " (" + hint + ")";
        return escapeControlBytes(text);
    }
    std::string what_, where_, hint_;
};

}  // namespace cnnstudio
