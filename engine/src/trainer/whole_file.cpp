#include "trainer/whole_file.h"

#include <fstream>
#include <sstream>

#include "cnnstudio/error.h"

namespace cnnstudio {

std::string readWholeFile(const std::filesystem::path& file) {
    std::ifstream stream(file, std::ios::binary);
    if (!stream) throw Error("cannot open the file", file.string(), "check that it exists and is readable");
    std::ostringstream contents;
    contents << stream.rdbuf();
    if (stream.bad()) throw Error("cannot read the file", file.string());
    return std::move(contents).str();
}

}  // namespace cnnstudio
