// An assertion for the errors the engine throws: the Error names where it happened and says what.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cnnstudio/error.h"

namespace cnnstudio::testing {

// Runs `action`, expecting an Error whose where() and what() contain the given pieces.
template <typename Action>
void expectError(Action action, const std::string& whereHas, const std::vector<std::string>& whatHas) {
    try {
        action();
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_NE(error.where().find(whereHas), std::string::npos) << "where: " << error.where();
        for (const auto& piece : whatHas)
            EXPECT_NE(std::string(error.what()).find(piece), std::string::npos)
                << "'" << piece << "' missing from: " << error.what();
    }
}

}  // namespace cnnstudio::testing
