// Safe handling of JSON a user wrote: error messages describe a bad value by its type and a
// bounded excerpt (never a full dump, which copies the whole value and recurses once per level
// of nesting), and documents nested deeper than any CNN Studio file needs are refused before
// they are parsed (nlohmann's parser is iterative, but copying and comparing values recurse).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cnnstudio {

// Deeper than any CNN Studio document needs (a spec is 4 levels deep) and far below what
// recursion over a value can take on an 8 MB stack.
constexpr int kMaxJsonNestingDepth = 64;

// The value as dump() writes it when that is short ("[3,-1]", "\"64\""); otherwise its kind and
// the first 60 or so characters ("a list of 1 item beginning [[[…]]]"), never the whole value.
std::string describeJsonValue(const nlohmann::json& value);

// Throws Error naming `source`:line when `text` opens more than kMaxJsonNestingDepth lists or
// objects inside one another.
void rejectDeepJsonNesting(std::string_view text, const std::string& source);

}  // namespace cnnstudio
