// NetworkSpec as JSON and as a file: structure errors name the file and node, saving is exact
// and atomic.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "cnnstudio/error.h"
#include "cnnstudio/presets.h"
#include "cnnstudio/spec.h"
#include "engine/expect_error.h"
#include "engine/spec_builders.h"

namespace cnnstudio {
namespace {

using nlohmann::json;
using testing::expectError;
using spec_testing::input;
using spec_testing::network;
using spec_testing::node;

namespace fs = std::filesystem;

class SpecFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        static std::atomic<int> counter{0};
        folder_ = fs::temp_directory_path() /
                  ("cnnstudio-spec-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::create_directories(folder_);
    }
    void TearDown() override { fs::remove_all(folder_); }

    fs::path write(const std::string& fileName, const std::string& text) {
        fs::path file = folder_ / fileName;
        std::ofstream(file, std::ios::binary) << text;
        return file;
    }
    std::vector<std::string> filesInFolder() const {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(folder_)) names.push_back(entry.path().filename());
        return names;
    }

    fs::path folder_;
};

std::string readText(const fs::path& file) {
    std::ifstream stream(file, std::ios::binary);
    std::stringstream buffer;
    buffer << stream.rdbuf();
    return buffer.str();
}

NetworkSpec smallNetwork() {
    NetworkSpec spec = network({input(1, 8, 8),
                                node("conv", "Conv2D", {"input"}, {{"filters", 4}, {"kernel", 3}}),
                                node("bn", "BatchNorm2D", {"conv"}, {{"epsilon", 1e-5}, {"momentum", 0.1}}),
                                node("relu", "ReLU", {"bn"}),
                                node("logits", "Dense", {"relu"}, {{"units", 3}})},
                               "small");
    spec.description = "A small net: ×, \"quotes\" and ünïcode survive.";
    spec.layout = {{"input", {0.0, 0.0}}, {"conv", {12.345, 100.0}}, {"logits", {-240.5, 1e6}}};
    return spec;
}

TEST_F(SpecFileTest, SaveThenLoadGivesTheSameSpec) {
    NetworkSpec spec = smallNetwork();
    fs::path file = folder_ / "small.json";
    spec.save(file);
    EXPECT_EQ(NetworkSpec::load(file), spec);
    EXPECT_EQ(NetworkSpec::fromJson(spec.toJson()), spec);
}

TEST_F(SpecFileTest, EveryPresetSurvivesSaveAndLoad) {
    for (const auto& name : presetNames()) {
        NetworkSpec preset = loadPreset(name);
        fs::path file = folder_ / (name + ".json");
        preset.save(file);
        EXPECT_EQ(NetworkSpec::load(file), preset) << name;
        // The resource files are written in the saved layout, so saving one changes nothing.
        EXPECT_EQ(readText(file), readText(fs::path(CNNSTUDIO_SOURCE_DIR) / "resources/presets" / (name + ".json")))
            << name;
    }
}

TEST_F(SpecFileTest, SaveLeavesNoTemporaryFile) {
    fs::path file = folder_ / "net.json";
    smallNetwork().save(file);
    NetworkSpec changed = smallNetwork();
    changed.nodes.back().params["units"] = 5;
    changed.save(file);  // replaces the first version
    EXPECT_EQ(filesInFolder(), std::vector<std::string>{"net.json"});
    EXPECT_EQ(NetworkSpec::load(file), changed);
}

TEST_F(SpecFileTest, SaveIntoMissingFolderNamesTheFileAndLeavesNothing) {
    fs::path file = folder_ / "no-such-folder" / "net.json";
    expectError([&] { smallNetwork().save(file); }, file.string(), {"temporary file"});
    EXPECT_TRUE(filesInFolder().empty());
}

TEST_F(SpecFileTest, SaveOverAFolderFailsAndRemovesTheTemporaryFile) {
    fs::create_directory(folder_ / "net.json");
    expectError([&] { smallNetwork().save(folder_ / "net.json"); }, "net.json", {"cannot replace"});
    EXPECT_EQ(filesInFolder(), std::vector<std::string>{"net.json"});
}

TEST_F(SpecFileTest, LoadMissingFileNamesIt) {
    fs::path file = folder_ / "absent.json";
    expectError([&] { NetworkSpec::load(file); }, file.string(), {"cannot open"});
}

TEST_F(SpecFileTest, InvalidJsonNamesFileAndLine) {
    fs::path file = write("broken.json", "{\n  \"nodes\": [\n    {\"name\": \"a\",, \"type\": \"ReLU\"}\n  ]\n}\n");
    expectError([&] { NetworkSpec::load(file); }, file.string() + ":3", {"not valid JSON"});
}

// Found by tests/fuzz/checkpoint_fuzz (in a safetensors header, then tried here): a number past
// a double is nlohmann's out_of_range, not a parse_error, and escaped as an uncaught exception.
TEST_F(SpecFileTest, NumberPastADoubleNamesTheFile) {
    fs::path file = write("huge-number.json", R"({"format": "cnnstudio-network", "version": 1, "nodes": [],
                                                  "description": 1e99999})");
    expectError([&] { NetworkSpec::load(file); }, file.string(), {"not valid JSON", "number overflow parsing '1e99999'"});
}

TEST_F(SpecFileTest, StructureErrorNamesFileAndNode) {
    fs::path file = write("dup.json", R"({"nodes": [{"name": "conv1", "type": "ReLU"},
                                                    {"name": "conv1", "type": "ReLU"}]})");
    expectError([&] { NetworkSpec::load(file); }, file.string() + ", node 'conv1'", {"two nodes", "conv1"});
}

// 500,000 lists inside one another: copying or dumping such a value recursed once per level and
// overflowed the stack; the file is refused before it is parsed.
TEST_F(SpecFileTest, DeeplyNestedValueIsRefusedNamingFileAndLine) {
    const std::string nested = std::string(500000, '[') + std::string(500000, ']');
    fs::path file = write("deep.json", "{\"nodes\": [\n  {\"name\": \"c\", \"type\": \"Conv2D\",\n"
                                       "   \"params\": {\"filters\": " + nested + "}}]}");
    expectError([&] { NetworkSpec::load(file); }, file.string() + ":3", {"nested more than 64"});
}

TEST_F(SpecFileTest, NestingUpToTheLimitStillLoads) {
    const std::string nested = std::string(60, '[') + std::string(60, ']');
    fs::path file = write("nested.json", "{\"nodes\": [{\"name\": \"c\", \"type\": \"Conv2D\", "
                                         "\"params\": {\"filters\": " + nested + "}}]}");
    EXPECT_EQ(NetworkSpec::load(file).nodes.size(), 1u);
}

// A bad value is described by its kind and an excerpt, not copied whole into the message.
TEST(SpecJson, HugeBadValueIsDescribedByAnExcerpt) {
    const json hugeList(std::vector<int>(100000, 7));
    try {
        NetworkSpec::fromJson({{"nodes", json::array({{{"name", "r"}, {"type", "ReLU"}, {"inputs", hugeList}}})}});
        FAIL() << "expected an Error";
    } catch (const Error& error) {
        EXPECT_LT(std::string(error.what()).size(), 300u) << error.what();
        EXPECT_NE(std::string(error.what()).find("a list of 100000 items beginning [7,7,"), std::string::npos)
            << error.what();
    }
}

TEST(SpecJson, DocumentThatIsNotAnObjectIsRejected) {
    expectError([] { NetworkSpec::fromJson(json::array({1, 2})); }, "", {"JSON object", "array"});
}

TEST(SpecJson, MissingNodesIsRejected) {
    expectError([] { NetworkSpec::fromJson({{"name", "x"}}); }, "", {"\"nodes\""});
}

TEST(SpecJson, NodeWithoutNameNamesItsPosition) {
    json document = {{"nodes", json::array({{{"name", "input"}, {"type", "Input"}}, {{"type", "ReLU"}}})}};
    expectError([&] { NetworkSpec::fromJson(document); }, "node #2", {"no name"});
}

TEST(SpecJson, NodeWithoutTypeNamesTheNode) {
    json document = {{"nodes", json::array({{{"name", "relu9"}}})}};
    expectError([&] { NetworkSpec::fromJson(document); }, "node 'relu9'", {"no type"});
}

TEST(SpecJson, DuplicateNodeNameIsRejected) {
    json document = {{"nodes", json::array({{{"name", "a"}, {"type", "ReLU"}}, {{"name", "a"}, {"type", "ELU"}}})}};
    expectError([&] { NetworkSpec::fromJson(document); }, "node 'a'", {"two nodes are named 'a'"});
}

TEST(SpecJson, WrongJsonTypesAreRejectedWithTheNode) {
    auto withNode = [](json entry) { return json{{"nodes", json::array({entry})}}; };
    expectError([&] { NetworkSpec::fromJson(withNode({{"name", 5}, {"type", "ReLU"}})); }, "node #1", {"name"});
    expectError([&] { NetworkSpec::fromJson(withNode({{"name", "r"}, {"type", true}})); }, "node 'r'", {"type"});
    expectError([&] { NetworkSpec::fromJson(withNode({{"name", "r"}, {"type", "ReLU"}, {"inputs", "a"}})); },
                "node 'r'", {"\"inputs\""});
    expectError([&] { NetworkSpec::fromJson(withNode({{"name", "r"}, {"type", "ReLU"}, {"inputs", {1}}})); },
                "node 'r'", {"\"inputs\""});
    expectError([&] { NetworkSpec::fromJson(withNode({{"name", "r"}, {"type", "ReLU"}, {"params", {1, 2}}})); },
                "node 'r'", {"\"params\""});
    expectError([&] { NetworkSpec::fromJson(withNode("ReLU")); }, "node #1", {"JSON object"});
    expectError([] { NetworkSpec::fromJson({{"nodes", json::object()}}); }, "", {"\"nodes\" must be a list"});
    expectError([] { NetworkSpec::fromJson({{"nodes", json::array()}, {"name", 3}}); }, "", {"\"name\""});
    expectError([] { NetworkSpec::fromJson({{"nodes", json::array()}, {"description", false}}); }, "",
                {"\"description\""});
    expectError([] { NetworkSpec::fromJson({{"nodes", json::array()}, {"layout", {{"a", {1}}}}}); },
                "layout of node 'a'", {"[x, y]"});
}

TEST(SpecJson, MisspelledKeyIsRejectedNotIgnored) {
    json document = {{"nodes", json::array({{{"name", "c"}, {"type", "Conv2D"}, {"param", json::object()}}})}};
    expectError([&] { NetworkSpec::fromJson(document); }, "node 'c'", {"unknown key 'param'"});
    expectError([] { NetworkSpec::fromJson({{"node", json::array()}}); }, "", {"unknown key 'node'"});
}

TEST(SpecJson, OtherFormatsAndNewerVersionsAreRejected) {
    expectError([] { NetworkSpec::fromJson({{"format", "keras"}, {"nodes", json::array()}}); }, "",
                {"not a CNN Studio network"});
    expectError([] { NetworkSpec::fromJson({{"version", 2}, {"nodes", json::array()}}); }, "", {"newer"});
}

TEST(SpecJson, ToJsonWritesTheDocumentedForm) {
    json document = smallNetwork().toJson();
    EXPECT_EQ(document["format"], "cnnstudio-network");
    EXPECT_EQ(document["version"], 1);
    EXPECT_EQ(document["nodes"][1]["inputs"], json::array({"input"}));
    EXPECT_EQ(document["nodes"][0].count("inputs"), 0u);  // an Input has none
    EXPECT_EQ(document["layout"]["conv"], json::array({12.345, 100.0}));
}

TEST(SpecJson, FindReturnsTheNodeOrNull) {
    NetworkSpec spec = smallNetwork();
    ASSERT_NE(spec.find("bn"), nullptr);
    EXPECT_EQ(spec.find("bn")->type, "BatchNorm2D");
    spec.find("bn")->params["epsilon"] = 1e-3;
    EXPECT_EQ(std::as_const(spec).find("bn")->params["epsilon"], 1e-3);
    EXPECT_EQ(spec.find("missing"), nullptr);
}

}  // namespace
}  // namespace cnnstudio
