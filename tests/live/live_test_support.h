// What the live tests build at test time: scratch folders, a FER-shaped model
// (fer_shaped_model.h) and videos of a real face (face_video.h).
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "live/face_video.h"
#include "live/fer_shaped_model.h"

namespace cnnstudio::live_testing {

// A fresh folder under the test's temporary directory.
inline std::filesystem::path scratchFolder(const std::string& name) {
    const std::filesystem::path folder = std::filesystem::path(::testing::TempDir()) / ("cnnstudio-live-" + name);
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    return folder;
}

}  // namespace cnnstudio::live_testing
