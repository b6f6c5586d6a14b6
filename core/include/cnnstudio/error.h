// The one error type of CNN Studio: what failed, where, and what to do about it.
// Thrown at the point of detection, caught at the edge (CLI, worker, GUI).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace cnnstudio {

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
        return text;
    }
    std::string what_, where_, hint_;
};

}  // namespace cnnstudio
