// How the headless programs read their command lines: bad usage exits 2, as each program's help
// says (CLI11's own codes, 105 and up, mean nothing to a script), and bounds read as a person
// would say them.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace cnnstudio {

inline constexpr int kExitUsage = 2;

// Parses the command line; nothing when the program should go on, otherwise its exit code:
// 0 after --help, kExitUsage after a message saying what was wrong.
inline std::optional<int> parseCommandLine(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
        return std::nullopt;
    } catch (const CLI::ParseError& error) {
        const int code = app.exit(error);  // prints the help or the message
        return code == 0 ? 0 : kExitUsage;
    }
}

// A whole number of at least `minimum`: "must be at least 1, not 0", where CLI::PositiveNumber
// says "Value 0 not in range 0.000000 to 1797693134862315708145274237317043567980...".
inline CLI::Validator atLeast(long long minimum) {
    return CLI::Validator(
        [minimum](std::string& text) -> std::string {
            long long value = 0;
            if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a whole number";
            if (value < minimum) return "must be at least " + std::to_string(minimum) + ", not " + text;
            return {};
        },
        "INT>=" + std::to_string(minimum));
}

}  // namespace cnnstudio
