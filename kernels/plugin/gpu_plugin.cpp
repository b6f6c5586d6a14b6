// The GPU wing's entry point: the one symbol the backend registry looks up after loading
// libcnngpu (kernels/registry/gpu_plugin_loader.cpp).
#include "cnnstudio/kernels/gpu_backends.h"

extern "C" const cnnstudio::kernels::GpuPlugin* cnnstudio_gpu_plugin() {
    using namespace cnnstudio::kernels;
    static const GpuPlugin plugin{
        CNNSTUDIO_VERSION_TEXT, createCudaBackend, createCudnnBackend, gpuUnavailableReason,
        createNcclTransport,    discoverGpus,
    };
    return &plugin;
}
