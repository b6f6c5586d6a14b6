// fusion_bench: what cuDNN's runtime-fusion engines on this GPU charge for the batch-norm work
// issue #17 wants folded into fer-cnn's convolutions (bf16 channels-last, fp32 accumulation):
//   plain     y = conv(x, w)                                    what the cudnn backend runs today
//   stats     y = conv(x, w) and y's per-channel sum and sum of squares (BN statistics in the epilogue)
//   sbr-stats y = conv(relu(x * scale + bias), w) and y's statistics (the previous layer's BN+ReLU in the
//             prologue, so that its normalised output is never written)
// For each 3x3 layer: the fastest engine of each variant (cuDNN's heuristics, up to 8 candidates
// timed), or why cuDNN has none; the statistics are checked against y computed on the host.
// Usage: fusion_bench [--batch 256] [--candidates 8] [--runs 20]. Measured on one H200 with cuDNN 9.14
// (docs/measurements.md, "Batch-norm work fused into cuDNN's convolutions"): the statistics cost 2.5 to 2.9
// times the plain convolution, and no engine takes the prologue.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "cnnstudio/error.h"
#include "cudnn/backend_descriptor.h"

namespace {

// ---- checks --------------------------------------------------------------------------------

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "fusion_bench: %s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

void check(cudnnStatus_t status, const char* what) {
    if (status != CUDNN_STATUS_SUCCESS) {
        std::fprintf(stderr, "fusion_bench: %s: %s\n", what, cudnnGetErrorString(status));
        std::exit(1);
    }
}

// A graph cuDNN refuses is a result here, not an error: it says which step and why.
struct Refusal {
    std::string step;
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
};

// ---- backend descriptors: the backend's own (kernels/cudnn/backend_descriptor.h) -----------

using Descriptor = cnnstudio::kernels::BackendDescriptor;
using cnnstudio::kernels::raw;
using cnnstudio::kernels::set;
using cnnstudio::kernels::setDescriptor;
using cnnstudio::kernels::makeDescriptor;

// Finalizes `descriptor`; a refusal is recorded under `step` (the first one is kept).
bool finalize(const Descriptor& descriptor, const char* step, Refusal& refusal) {
    const cudnnStatus_t status = cudnnBackendFinalize(raw(descriptor));
    if (status != CUDNN_STATUS_SUCCESS && refusal.step.empty()) refusal = {step, status};
    return status == CUDNN_STATUS_SUCCESS;
}

// ---- the graphs ----------------------------------------------------------------------------

enum TensorId : std::int64_t { kX = 1, kW, kY, kSum, kSquares, kScale, kBias, kScaled = 101, kShifted, kActivated };

struct Geometry {
    const char* layer;
    int channels, filters, size;  // 3x3, stride 1, padding 1: the output is size x size too
};

// fer-cnn's 3x3 layers but the first (1 input channel: our own kernels run it).
constexpr std::array<Geometry, 5> kLayers{{{"conv1_2", 64, 64, 48},
                                           {"conv2_1", 64, 128, 24},
                                           {"conv2_2", 128, 128, 24},
                                           {"conv3_1", 128, 256, 12},
                                           {"conv3_2", 256, 256, 12}}};

enum class Variant { Plain, Stats, ScaleBiasReluStats };
const char* nameOf(Variant variant) {
    switch (variant) {
    case Variant::Plain: return "plain";
    case Variant::Stats: return "stats";
    default: return "sbr-stats";
    }
}

// A tensor of dims (N, C, H, W) stored channels last; per-channel vectors are (1, C, 1, 1).
Descriptor tensor(std::int64_t id, std::array<std::int64_t, 4> dims, cudnnDataType_t type, bool isVirtual,
                  Refusal& refusal) {
    const auto [n, c, h, w] = dims;
    const std::array<std::int64_t, 4> strides{c * h * w, 1, w * c, c};
    const std::int64_t alignment = 16;
    Descriptor descriptor = makeDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    set(descriptor, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type);
    set(descriptor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4);
    set(descriptor, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4);
    set(descriptor, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &id);
    set(descriptor, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment);
    set(descriptor, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &isVirtual);
    finalize(descriptor, "tensor", refusal);
    return descriptor;
}

// A pointwise node y = mode(x[, b]) in fp32.
Descriptor pointwise(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor* b, const Descriptor& y,
                     Refusal& refusal) {
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    Descriptor function = makeDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    set(function, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode);
    set(function, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision);
    finalize(function, "pointwise function", refusal);
    Descriptor node = makeDescriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    setDescriptor(node, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, function);
    setDescriptor(node, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) setDescriptor(node, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    setDescriptor(node, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    finalize(node, "pointwise node", refusal);
    return node;
}

Descriptor convolutionNode(const Descriptor& x, const Descriptor& w, const Descriptor& y, Refusal& refusal) {
    const cudnnDataType_t accumulate = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const std::int64_t spatialDims = 2;
    const std::array<std::int64_t, 2> ones{1, 1};
    Descriptor conv = makeDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &accumulate);
    set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode);
    set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatialDims);
    set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, ones.data(), 2);
    set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, ones.data(), 2);
    set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, ones.data(), 2);
    set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, ones.data(), 2);
    finalize(conv, "convolution descriptor", refusal);
    const float alpha = 1.0f, beta = 0.0f;
    Descriptor node = makeDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    setDescriptor(node, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
    setDescriptor(node, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
    setDescriptor(node, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
    setDescriptor(node, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
    set(node, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha);
    set(node, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta);
    finalize(node, "convolution node", refusal);
    return node;
}

Descriptor statisticsNode(const Descriptor& y, const Descriptor& sum, const Descriptor& squares, Refusal& refusal) {
    const cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    Descriptor node = makeDescriptor(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
    set(node, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, &mode);
    set(node, CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision);
    setDescriptor(node, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, y);
    setDescriptor(node, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, sum);
    setDescriptor(node, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, squares);
    finalize(node, "statistics node", refusal);
    return node;
}

// The operation graph of `variant` for layer `g` at batch `n`, or null with the refusal.
Descriptor buildGraph(cudnnHandle_t handle, const Geometry& g, int n, Variant variant, Refusal& refusal) {
    const std::int64_t c = g.channels, k = g.filters, s = g.size;
    const Descriptor x = tensor(kX, {n, c, s, s}, CUDNN_DATA_BFLOAT16, false, refusal);
    const Descriptor w = tensor(kW, {k, c, 3, 3}, CUDNN_DATA_BFLOAT16, false, refusal);
    const Descriptor y = tensor(kY, {n, k, s, s}, CUDNN_DATA_BFLOAT16, false, refusal);
    const Descriptor sum = tensor(kSum, {1, k, 1, 1}, CUDNN_DATA_FLOAT, false, refusal);
    const Descriptor squares = tensor(kSquares, {1, k, 1, 1}, CUDNN_DATA_FLOAT, false, refusal);
    const Descriptor scale = tensor(kScale, {1, c, 1, 1}, CUDNN_DATA_FLOAT, false, refusal);
    const Descriptor bias = tensor(kBias, {1, c, 1, 1}, CUDNN_DATA_FLOAT, false, refusal);
    const Descriptor scaled = tensor(kScaled, {n, c, s, s}, CUDNN_DATA_FLOAT, true, refusal);
    const Descriptor shifted = tensor(kShifted, {n, c, s, s}, CUDNN_DATA_FLOAT, true, refusal);
    const Descriptor activated = tensor(kActivated, {n, c, s, s}, CUDNN_DATA_FLOAT, true, refusal);

    std::vector<Descriptor> nodes;
    if (variant == Variant::ScaleBiasReluStats) {
        nodes.push_back(pointwise(CUDNN_POINTWISE_MUL, x, &scale, scaled, refusal));
        nodes.push_back(pointwise(CUDNN_POINTWISE_ADD, scaled, &bias, shifted, refusal));
        nodes.push_back(pointwise(CUDNN_POINTWISE_RELU_FWD, shifted, nullptr, activated, refusal));
        nodes.push_back(convolutionNode(activated, w, y, refusal));
    } else {
        nodes.push_back(convolutionNode(x, w, y, refusal));
    }
    if (variant != Variant::Plain) nodes.push_back(statisticsNode(y, sum, squares, refusal));
    if (!refusal.step.empty()) return nullptr;

    std::vector<cudnnBackendDescriptor_t> handles;
    for (const Descriptor& node : nodes) handles.push_back(raw(node));
    Descriptor graph = makeDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, handles.data(),
        std::int64_t(handles.size()));
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle);
    if (!finalize(graph, "operation graph", refusal)) return nullptr;
    return graph;
}

// ---- running -------------------------------------------------------------------------------

struct Buffers {
    void* x = nullptr;
    void* w = nullptr;
    void* y = nullptr;
    float* sum = nullptr;
    float* squares = nullptr;
    float* scale = nullptr;
    float* bias = nullptr;
    void* workspace = nullptr;
    std::size_t workspaceBytes = 0;
};

// The variant pack names exactly the graph's own tensors: x, w and y, the statistics, the prologue's
// scale and bias.
cudnnStatus_t execute(cudnnHandle_t handle, const Descriptor& plan, Variant variant, const Buffers& b) {
    std::vector<std::int64_t> ids{kX, kW, kY};
    std::vector<void*> pointers{b.x, b.w, b.y};
    if (variant != Variant::Plain) {
        ids.insert(ids.end(), {kSum, kSquares});
        pointers.insert(pointers.end(), {b.sum, b.squares});
    }
    if (variant == Variant::ScaleBiasReluStats) {
        ids.insert(ids.end(), {kScale, kBias});
        pointers.insert(pointers.end(), {b.scale, b.bias});
    }
    Descriptor pack = makeDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids.data(), std::int64_t(ids.size()));
    set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(),
        std::int64_t(pointers.size()));
    set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &b.workspace);
    check(cudnnBackendFinalize(raw(pack)), "variant pack");
    return cudnnBackendExecute(handle, raw(plan), raw(pack));
}

// Milliseconds per execution, the mean of `runs` after one warm-up; infinity when it fails.
float timePlan(cudnnHandle_t handle, const Descriptor& plan, Variant variant, const Buffers& b, int runs) {
    if (execute(handle, plan, variant, b) != CUDNN_STATUS_SUCCESS) return std::numeric_limits<float>::infinity();
    cudaEvent_t start = nullptr, stop = nullptr;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    check(cudaEventRecord(start), "cudaEventRecord");
    for (int run = 0; run < runs; ++run) check(execute(handle, plan, variant, b), "execute");
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float milliseconds = 0.0f;
    check(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return milliseconds / float(runs);
}

struct Best {
    float milliseconds = std::numeric_limits<float>::infinity();
    Descriptor plan;
    std::int64_t engine = -1;  // cuDNN's global index of the engine
    int candidates = 0, built = 0;
};

// Times up to `limit` of the heuristics' engine configurations (mode A, then the fallback list).
Best fastestPlan(cudnnHandle_t handle, const Descriptor& graph, Variant variant, const Buffers& b, int limit,
                 int runs) {
    Best best;
    for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
        Descriptor heuristics = makeDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        setDescriptor(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
        set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
        if (cudnnBackendFinalize(raw(heuristics)) != CUDNN_STATUS_SUCCESS) continue;
        std::vector<Descriptor> configs;
        std::vector<cudnnBackendDescriptor_t> handles;
        for (int i = 0; i < limit; ++i) {
            configs.push_back(makeDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
            handles.push_back(raw(configs.back()));
        }
        std::int64_t returned = 0;
        if (cudnnBackendGetAttribute(raw(heuristics), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     limit, &returned, handles.data()) != CUDNN_STATUS_SUCCESS)
            continue;
        best.candidates += int(returned);
        for (std::int64_t i = 0; i < returned; ++i) {
            Descriptor plan = makeDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
            set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle);
            setDescriptor(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[std::size_t(i)]);
            if (cudnnBackendFinalize(raw(plan)) != CUDNN_STATUS_SUCCESS) continue;
            std::int64_t bytes = 0, count = 0;
            check(cudnnBackendGetAttribute(raw(plan), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                           &count, &bytes),
                  "workspace size");
            if (std::size_t(bytes) > b.workspaceBytes) continue;
            ++best.built;
            const float milliseconds = timePlan(handle, plan, variant, b, runs);
            if (milliseconds >= best.milliseconds) continue;
            Descriptor engine = makeDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
            cudnnBackendDescriptor_t engineHandle = raw(engine);
            std::int64_t engineIndex = -1;
            check(cudnnBackendGetAttribute(raw(configs[std::size_t(i)]), CUDNN_ATTR_ENGINECFG_ENGINE,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &engineHandle),
                  "the configuration's engine");
            check(cudnnBackendGetAttribute(engineHandle, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count,
                                           &engineIndex),
                  "the engine's index");
            best = {milliseconds, std::move(plan), engineIndex, best.candidates, best.built};
        }
        if (best.plan) break;  // the fallback list only where mode A had nothing that runs
    }
    return best;
}

float toFloat(__nv_bfloat16 value) { return __bfloat162float(value); }

// The largest relative error of the fused statistics against y's, summed on the host.
double statisticsError(const Geometry& g, int n, const Buffers& b) {
    const std::size_t pixels = std::size_t(n) * g.size * g.size;
    std::vector<__nv_bfloat16> y(pixels * g.filters);
    std::vector<float> sum(g.filters), squares(g.filters);
    check(cudaMemcpy(y.data(), b.y, y.size() * sizeof(y[0]), cudaMemcpyDeviceToHost), "copy y");
    check(cudaMemcpy(sum.data(), b.sum, sum.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy sum");
    check(cudaMemcpy(squares.data(), b.squares, squares.size() * sizeof(float), cudaMemcpyDeviceToHost),
          "copy squares");
    std::vector<double> hostSum(g.filters), hostSquares(g.filters);
    for (std::size_t pixel = 0; pixel < pixels; ++pixel)
        for (int channel = 0; channel < g.filters; ++channel) {
            const double value = toFloat(y[pixel * g.filters + channel]);
            hostSum[channel] += value;
            hostSquares[channel] += value * value;
        }
    double worst = 0.0;
    for (int channel = 0; channel < g.filters; ++channel) {
        // The sum is compared on the scale of the values it adds, since it may be near 0.
        const double sumScale = std::sqrt(hostSquares[channel] * double(pixels)) + 1e-6;
        worst = std::max(worst, std::abs(sum[channel] - hostSum[channel]) / sumScale);
        worst = std::max(worst, std::abs(squares[channel] - hostSquares[channel]) / (hostSquares[channel] + 1e-6));
    }
    return worst;
}

template <typename T>
T* deviceArray(std::size_t count) {
    void* pointer = nullptr;
    check(cudaMalloc(&pointer, count * sizeof(T)), "cudaMalloc");
    return static_cast<T*>(pointer);
}

template <typename T>
void upload(T* device, const std::vector<T>& host) {
    check(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
}

// The table for every layer and variant; returns main's exit status.
int measure(int batch, int candidates, int runs) {

    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::fprintf(stderr, "fusion_bench: no CUDA device\n");
        return 1;
    }
    cudaDeviceProp properties{};
    check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
    cudnnHandle_t handle = nullptr;
    check(cudnnCreate(&handle), "cudnnCreate");
    std::printf("# %s, cuDNN %zu, batch %d, bf16 channels-last, fp32 accumulation and statistics\n", properties.name,
                cudnnGetVersion(), batch);
    std::printf("%-8s %-10s %10s %10s %8s %10s %7s\n", "layer", "variant", "ms", "vs plain", "engines", "stats err",
                "engine");

    std::mt19937 random(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (const Geometry& g : kLayers) {
        const std::size_t inputs = std::size_t(batch) * g.size * g.size * g.channels;
        const std::size_t outputs = std::size_t(batch) * g.size * g.size * g.filters;
        const std::size_t weights = std::size_t(g.filters) * g.channels * 9;
        Buffers b;
        auto* x = deviceArray<__nv_bfloat16>(inputs);
        auto* w = deviceArray<__nv_bfloat16>(weights);
        b.x = x, b.w = w, b.y = deviceArray<__nv_bfloat16>(outputs);
        b.sum = deviceArray<float>(g.filters), b.squares = deviceArray<float>(g.filters);
        b.scale = deviceArray<float>(g.channels), b.bias = deviceArray<float>(g.channels);
        b.workspaceBytes = std::size_t(256) << 20;
        b.workspace = deviceArray<char>(b.workspaceBytes);
        std::vector<__nv_bfloat16> hostX(inputs), hostW(weights);
        for (auto& value : hostX) value = __float2bfloat16(normal(random));
        for (auto& value : hostW) value = __float2bfloat16(normal(random) / std::sqrt(9.0f * g.channels));
        upload(x, hostX);
        upload(w, hostW);
        upload(b.scale, std::vector<float>(g.channels, 0.8f));
        upload(b.bias, std::vector<float>(g.channels, 0.1f));

        float plainMilliseconds = 0.0f;
        for (Variant variant : {Variant::Plain, Variant::Stats, Variant::ScaleBiasReluStats}) {
            Refusal refusal;
            const Descriptor graph = buildGraph(handle, g, batch, variant, refusal);
            if (!graph) {
                std::printf("%-8s %-10s refused at the %s: %s\n", g.layer, nameOf(variant), refusal.step.c_str(),
                            cudnnGetErrorString(refusal.status));
                continue;
            }
            const Best best = fastestPlan(handle, graph, variant, b, candidates, runs);
            if (!best.plan) {
                std::printf("%-8s %-10s no engine runs (%d offered, %d built)\n", g.layer, nameOf(variant),
                            best.candidates, best.built);
                continue;
            }
            if (variant == Variant::Plain) plainMilliseconds = best.milliseconds;
            check(execute(handle, best.plan, variant, b), "execute");
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
            const std::string error =
                variant == Variant::Plain ? std::string("-") : std::to_string(statisticsError(g, batch, b));
            std::printf("%-8s %-10s %10.4f %9.2fx %8d %10s %7lld\n", g.layer, nameOf(variant), best.milliseconds,
                        plainMilliseconds > 0 ? best.milliseconds / plainMilliseconds : 0.0f, best.built,
                        error.c_str(), static_cast<long long>(best.engine));
            std::fflush(stdout);
        }
        for (void* pointer : {b.x, b.w, b.y, static_cast<void*>(b.sum), static_cast<void*>(b.squares),
                              static_cast<void*>(b.scale), static_cast<void*>(b.bias), b.workspace})
            cudaFree(pointer);
    }
    cudnnDestroy(handle);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"fusion_bench: cuDNN's runtime fusion of batch-norm work into fer-cnn's convolutions"};
    int batch = 256, candidates = 8, runs = 20;
    app.add_option("--batch", batch, "images per convolution")->check(CLI::Range(1, 4096));
    app.add_option("--candidates", candidates, "engine configurations timed per graph")->check(CLI::Range(1, 64));
    app.add_option("--runs", runs, "timed executions per candidate")->check(CLI::Range(1, 1000));
    CLI11_PARSE(app, argc, argv);
    try {
        return measure(batch, candidates, runs);
    } catch (const cnnstudio::Error& error) {  // a descriptor cuDNN refused to create or set
        std::fprintf(stderr, "fusion_bench: %s\n", error.what());
        return 1;
    }
}
