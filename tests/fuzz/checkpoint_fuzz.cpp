// A checkpoint folder (progress.json, weights.safetensors, optimizer.safetensors: the three
// parts of the input) loaded into a small network and its Adam optimiser on cpu-ref: restored,
// or refused with an Error naming the file and tensor.
#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/error.h"
#include "cnnstudio/network.h"
#include "cnnstudio/optimizer.h"
#include "fuzz_input.h"

namespace {

// Every kind of saved state: conv and dense weights, batch-norm statistics, Adam's m and v.
constexpr const char* kSpec = R"({
  "format": "cnnstudio-network", "version": 1, "name": "fuzz",
  "nodes": [
    {"name": "input", "type": "Input", "params": {"channels": 1, "height": 4, "width": 4}},
    {"name": "conv", "type": "Conv2D", "inputs": ["input"], "params": {"filters": 2, "kernel": 3, "padding": "same"}},
    {"name": "bn", "type": "BatchNorm2D", "inputs": ["conv"]},
    {"name": "flatten", "type": "Flatten", "inputs": ["bn"]},
    {"name": "logits", "type": "Dense", "inputs": ["flatten"], "params": {"units": 2}}
  ]})";

struct Model {
    std::unique_ptr<cnnstudio::Backend> backend = cnnstudio::createBackend("cpu-ref");
    cnnstudio::Network network{cnnstudio::NetworkSpec::fromJson(nlohmann::json::parse(kSpec)), *backend, 1, 1};
    cnnstudio::Optimizer optimizer{cnnstudio::OptimizerConfig{"adam"}, *backend, network.parameterCount()};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Model model;
    const std::filesystem::path folder = cnnstudio::fuzz::scratchFolder() / "latest";
    std::filesystem::create_directories(folder);
    const auto parts = cnnstudio::fuzz::splitParts(cnnstudio::fuzz::asText(data, size), 3);
    cnnstudio::fuzz::writeFile(folder / "progress.json", parts[0]);
    cnnstudio::fuzz::writeFile(folder / "weights.safetensors", parts[1]);
    cnnstudio::fuzz::writeFile(folder / "optimizer.safetensors", parts[2]);
    try {
        cnnstudio::loadCheckpoint(folder, model.network, model.optimizer);
    } catch (const cnnstudio::Error&) {
    }
    return 0;
}
