// Finds and loads the GPU plugin (libcnngpu) with dlopen; see gpu_plugin_loader.h.
#include "gpu_plugin_loader.h"

#ifdef CNNSTUDIO_HAVE_CUDA
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#endif

namespace cnnstudio {

#ifdef CNNSTUDIO_HAVE_CUDA
namespace {

// The folder plugins are loaded from: $CNNSTUDIO_PLUGIN_DIR, else CNNSTUDIO_PLUGIN_SUBDIR
// (cnnstudio/plugins) beside the library this code is in, wherever the build tree or the package
// put it.
std::filesystem::path gpuPluginFolder() {
    if (const char* folder = std::getenv("CNNSTUDIO_PLUGIN_DIR"); folder && *folder)
        return folder;
    Dl_info self{};
    dladdr(reinterpret_cast<void*>(&loadGpuPlugin), &self);
    // lexically_normal: found through a RUNPATH, the library's name reads ".../bin/../lib/...".
    return (std::filesystem::absolute(self.dli_fname).parent_path() / CNNSTUDIO_PLUGIN_SUBDIR).lexically_normal();
}

bool mentionsCudaLibrary(std::string_view loaderMessage) {
    for (std::string_view library : {"libcuda", "libcublas", "libcudnn", "libnccl"})
        if (loaderMessage.find(library) != std::string_view::npos) return true;
    return false;
}

// dlopen's message for a plugin that exists but cannot be loaded. The usual cause is a machine
// without the CUDA libraries, which the package leaves to the system: name what is needed.
std::string explainLoadFailure(const std::filesystem::path& plugin, const std::string& loaderMessage) {
    if (mentionsCudaLibrary(loaderMessage))
        return "the GPU backends need " CNNSTUDIO_GPU_PLUGIN_NEEDS ": " + loaderMessage +
               " (install them, or add their folder to the loader's path with ldconfig or LD_LIBRARY_PATH)";
    return "the GPU backends cannot be loaded from " + plugin.string() + ": " + loaderMessage;
}

LoadedGpuPlugin load(const std::filesystem::path& plugin) {
    std::error_code error;
    if (!std::filesystem::exists(plugin, error))
        return {nullptr, "the GPU backends are not installed (" + plugin.string() +
                             " is missing; the cnnstudio-gpu package installs it)"};
    // RTLD_NOW: a missing CUDA symbol fails here, with a message, not at the first call.
    void* library = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) return {nullptr, explainLoadFailure(plugin, dlerror())};
    using EntryPoint = const kernels::GpuPlugin* (*)();
    auto entryPoint = reinterpret_cast<EntryPoint>(dlsym(library, kernels::kGpuPluginEntryPoint));
    if (!entryPoint)
        return {nullptr, plugin.string() + " is not a CNN Studio GPU plugin (it has no " +
                             kernels::kGpuPluginEntryPoint + ")"};
    const kernels::GpuPlugin* table = entryPoint();
    if (std::string_view(table->builtForVersion) != CNNSTUDIO_VERSION_TEXT)
        return {nullptr, plugin.string() + " belongs to CNN Studio " + table->builtForVersion +
                             ", not to this CNN Studio " CNNSTUDIO_VERSION_TEXT};
    return {table, {}};
}

}  // namespace

const LoadedGpuPlugin& loadGpuPlugin() {
    static const LoadedGpuPlugin loaded = load(gpuPluginFolder() / kernels::kGpuPluginFileName);
    return loaded;
}

#else

const LoadedGpuPlugin& loadGpuPlugin() {
    static const LoadedGpuPlugin none{nullptr, "this build of CNN Studio has no CUDA support"};
    return none;
}

#endif

}  // namespace cnnstudio
