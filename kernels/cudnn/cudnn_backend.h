// CudnnBackend: the "cudnn" backend. It is the cuda backend (our kernels, stream, memory pool and
// CUDA-graph capture) with cuDNN for convolution, pooling, batch norm and relu/elu activations and
// cuBLAS for dense layers. Leaky relu, dropout, concat, loss and optimisers stay ours.
//
// Precision (BackendOptions::precision):
//   fp32  strict: TF32 is off everywhere (cuDNN FMA math, cuBLAS fp32 compute).
//   tf32  convolutions and GEMMs on the tensor cores with TF32 inputs, fp32 accumulation.
//   bf16  mixed: x and w are converted to bf16 in scratch memory for convolutions and GEMMs,
//         which accumulate in fp32; every op still takes and returns fp32, and master weights
//         stay fp32. Convolution results (y, dx, dw) are rounded to bf16 before widening, as
//         under PyTorch's autocast; GEMMs write fp32 directly. Biases, pooling, batch norm and
//         activations run in fp32.
//
// Steady state never allocates and never searches: the first call with a new geometry builds its
// descriptors, benchmarks cuDNN's convolution algorithms (cudnnFind*AlgorithmEx on scratch
// buffers) and caches both; later calls only enqueue work. When a new geometry first appears
// while a step is being captured, benchmarking is impossible (it synchronises), so cuDNN's
// heuristics choose instead. Each op file (conv.cpp, pool.cpp, batchnorm.cpp, activation.cpp,
// dense.cpp) holds that op's plans and calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include <cublas_v2.h>
#include <cudnn.h>

#include "cnnstudio/kernels/cudnn_stats.h"
#include "cuda/cuda_backend.h"
#include "cudnn/cudnn_descriptors.h"

namespace cnnstudio::kernels {

// One convolution algorithm chosen for one direction of one geometry.
struct ConvAlgorithmChoice {
    int algorithm = -1;  // a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
    cudnnMathType_t mathType = CUDNN_DEFAULT_MATH;
    std::size_t workspaceBytes = 0;
    bool benchmarked = false;  // false: picked by heuristics during capture
    bool chosen() const { return algorithm >= 0; }
};

// Everything cuDNN needs for one convolution geometry, built on its first use.
struct ConvPlan {
    TensorDescriptor input, output;  // x/dx and y/dy in the compute type (fp32 or bf16)
    TensorDescriptor outputFloat;    // y/dy in fp32, for the bias
    TensorDescriptor bias;           // (1, outChannels, 1, 1) fp32
    FilterDescriptor filter;         // w/dw in the compute type
    ConvolutionDescriptor convolution;
    ConvAlgorithmChoice forward, backwardData, backwardFilter;
};

struct PoolPlan {
    TensorDescriptor input, output;
    PoolingDescriptor pooling;
};

struct BatchNormPlan {
    bool batchStatistics = false;  // more than one value per channel: cuDNN can train on it
    TensorDescriptor data;        // (batch, channels, spatial, 1)
    TensorDescriptor parameters;  // (1, channels, 1, 1), derived by cuDNN
};

struct DensePlan {
    TensorDescriptor output;  // y/dy as (batch, outFeatures, 1, 1), for the bias
    TensorDescriptor bias;    // (1, outFeatures, 1, 1)
};

struct ConvKey {
    ConvGeometry geometry;
    Precision precision = Precision::Fp32;
    bool operator==(const ConvKey&) const = default;
};
struct ConvKeyHash {
    std::size_t operator()(const ConvKey& key) const noexcept;
};
struct PoolGeometryHash {
    std::size_t operator()(const PoolGeometry& g) const noexcept;
};
struct BatchNormGeometryHash {
    std::size_t operator()(const BatchNormGeometry& g) const noexcept;
};
struct DenseGeometryHash {
    std::size_t operator()(const DenseGeometry& g) const noexcept;
};

class CudnnBackend : public CudaBackend {
public:
    // Creates the cuDNN and cuBLAS handles on the backend's device and stream and sets the math
    // modes of options.precision. Throws Error when no usable device exists.
    explicit CudnnBackend(const BackendOptions& options);
    ~CudnnBackend() override;

    std::string name() const override;         // "cudnn"
    std::string description() const override;  // "NVIDIA H200 (device 0), cuDNN 9.14.0, tf32"

    // ---- convolution (conv.cpp) -----------------------------------------------------------
    void convForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     float* y) override;
    void convBackwardData(const ConvGeometry& g, const float* dy, const float* w,
                          float* dx) override;
    void convBackwardFilter(const ConvGeometry& g, const float* x, const float* dy, float* dw,
                            float* dbias) override;

    // ---- pooling (pool.cpp) ---------------------------------------------------------------
    void poolForward(const PoolGeometry& g, const float* x, float* y) override;
    void poolBackward(const PoolGeometry& g, const float* x, const float* y, const float* dy,
                      float* dx) override;

    // ---- batch normalisation (batchnorm.cpp) -----------------------------------------------
    void batchNormForwardTraining(const BatchNormGeometry& g, const float* x, const float* gamma,
                                  const float* beta, float* y, float* runningMean,
                                  float* runningVar, float* savedMean,
                                  float* savedInvStd) override;
    void batchNormForwardInference(const BatchNormGeometry& g, const float* x,
                                   const float* gamma, const float* beta,
                                   const float* runningMean, const float* runningVar,
                                   float* y) override;
    void batchNormBackward(const BatchNormGeometry& g, const float* x, const float* dy,
                           const float* gamma, const float* savedMean, const float* savedInvStd,
                           float* dx, float* dgamma, float* dbeta) override;

    // ---- activations (activation.cpp): relu and elu through cuDNN, leaky relu ours --------
    void activationForward(Activation kind, float alpha, const float* x, float* y,
                           std::size_t count) override;
    void activationBackward(Activation kind, float alpha, const float* x, const float* y,
                            const float* dy, float* dx, std::size_t count) override;

    // ---- dense (dense.cpp) ----------------------------------------------------------------
    void denseForward(const DenseGeometry& g, const float* x, const float* w, const float* bias,
                      float* y) override;
    void denseBackwardData(const DenseGeometry& g, const float* dy, const float* w,
                           float* dx) override;
    void denseBackwardWeights(const DenseGeometry& g, const float* x, const float* dy, float* dw,
                              float* dbias) override;

    CudnnStats stats() const;

private:
    // ---- shared helpers (cudnn_backend.cpp) ------------------------------------------------
    bool streamIsCapturing() const;
    // Device memory for cuDNN's algorithm benchmark; bounded by what is free on the device.
    std::size_t searchWorkspaceLimit() const;
    // Converts `count` floats to bf16 at `destination` on the stream.
    void toBf16(const float* source, void* destination, std::size_t count);
    void fromBf16(const void* source, float* destination, std::size_t count);
    cudnnDataType_t computeType() const;       // CUDNN_DATA_FLOAT or CUDNN_DATA_BFLOAT16
    cudnnMathType_t requestedMathType() const;  // by precision

    // ---- convolution (conv.cpp) ------------------------------------------------------------
    ConvPlan& convPlan(const ConvGeometry& g, const char* op);  // validates on first use
    // On the first call for a plan: benchmark (or, during capture, ask the heuristics) and
    // cache the algorithm. x, w, dy are the caller's fp32 operands.
    void chooseForwardAlgorithm(const ConvGeometry& g, ConvPlan& plan, const float* x,
                                const float* w);
    void chooseBackwardDataAlgorithm(const ConvGeometry& g, ConvPlan& plan, const float* dy,
                                     const float* w);
    void chooseBackwardFilterAlgorithm(const ConvGeometry& g, ConvPlan& plan, const float* x,
                                       const float* dy);
    void recordChoice(const ConvGeometry& g, const char* direction, const ConvAlgorithmChoice& choice);

    // ---- pooling, batch norm, activation ----------------------------------------------------
    PoolPlan& poolPlan(const PoolGeometry& g, const char* op);  // validate on first use
    BatchNormPlan& batchNormPlan(const BatchNormGeometry& g, const char* op);
    cudnnActivationDescriptor_t activationDescriptor(Activation kind, float alpha);
    cudnnTensorDescriptor_t flatDescriptor(std::size_t count);

    // ---- dense (dense.cpp) -----------------------------------------------------------------
    DensePlan& densePlan(const DenseGeometry& g, const char* op);  // validates on first use
    cublasComputeType_t gemmComputeType() const;

    cudnnHandle_t cudnn_ = nullptr;
    cublasHandle_t cublas_ = nullptr;
    void* cublasWorkspace_ = nullptr;

    std::unordered_map<ConvKey, ConvPlan, ConvKeyHash> convPlans_;
    std::unordered_map<PoolGeometry, PoolPlan, PoolGeometryHash> poolPlans_;
    std::unordered_map<BatchNormGeometry, BatchNormPlan, BatchNormGeometryHash> batchNormPlans_;
    std::unordered_map<std::uint64_t, ActivationDescriptor> activationDescriptors_;
    std::unordered_map<std::size_t, TensorDescriptor> flatDescriptors_;
    std::unordered_map<DenseGeometry, DensePlan, DenseGeometryHash> densePlans_;

    CudnnStats stats_;
};

}  // namespace cnnstudio::kernels
