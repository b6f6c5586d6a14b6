// cpu_ops_bench: times every layer of fer-cnn, forward and backward, on a CPU backend, then
// a whole training step (forward, loss, backward, SGD with momentum), the figure that
// bench/pytorch_reference.py prints for PyTorch.
//
// fer-cnn: three stages of [conv3x3 (no bias) - BN - ReLU] x2 + maxpool2 with 64, 128, 256
// channels on 1x48x48 inputs, then flatten 256*6*6 -> dense 256 -> ReLU -> dropout 0.5 ->
// dense 7. ReLU runs in place, as in the PyTorch model. The first convolution computes no
// input gradient (nothing needs it), as in PyTorch.
//
//   cpu_ops_bench                          # cpu backend, every core, batch 64
//   cpu_ops_bench --threads 16 --batch 64 --repeats 20
//   cpu_ops_bench --backend cpu-ref --repeats 2
//
// Each figure is the median of --repeats timed runs after one warm-up run. DNNL_VERBOSE=1
// shows which oneDNN kernel each primitive runs (Winograd, direct, reorders) and its time.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cnnstudio/backend.h"
#include "cnnstudio/backend_registry.h"
#include "cnnstudio/error.h"
#include "cnnstudio/tensor.h"

using namespace cnnstudio;

namespace {

struct Layer {
    std::string name;
    std::function<void()> forward, backward;
};

// An activation and its gradient; the gradient is null where nothing needs it (the input).
struct Flow {
    Tensor* value;
    Tensor* gradient;
};

// fer-cnn as a list of layers over preallocated buffers, each layer a forward and a backward
// call sequence on the backend.
class FerCnnBench {
public:
    FerCnnBench(Backend& backend, int batch) : backend_(backend), batch_(batch), rng_(2024) {
        TensorShape shape{batch, 1, 48, 48};
        Flow flow{&keep(randomTensor(shape, 1.0f)), nullptr};
        for (int channels : {64, 128, 256}) {
            for (const char* half : {"a", "b"}) {
                std::string id = std::to_string(channels) + half;
                flow = addConv("conv" + id, flow, channels);
                flow = addBatchNorm("bn" + id, flow);
                addRelu("relu" + id, flow);
            }
            flow = addMaxPool("pool" + std::to_string(channels), flow);
        }
        flow = addDense("dense256", flow, 256);
        addRelu("relu256", flow);
        addDropout("dropout", flow);
        flow = addDense("dense7", flow, 7);
        addLoss(flow);
        velocity_ = &keep(Tensor(backend_, {1, 1, 1, int(parameterCount_)}));
        backend_.fill(velocity_->data(), 0.0f, std::size_t(parameterCount_));
    }

    const std::vector<Layer>& layers() const { return layers_; }
    std::int64_t parameterCount() const { return parameterCount_; }

    void trainingStep() {
        for (const Layer& layer : layers_) layer.forward();
        for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) layer->backward();
        SgdSettings sgd;
        sgd.momentum = 0.9f;
        backend_.sgdUpdate(sgd, &scalars_, parameters_->data(), gradients_->data(),
                           velocity_->data(), std::size_t(parameterCount_));
        ++scalars_.step;
    }

private:
    Tensor& keep(Tensor tensor) {
        tensors_.push_back(std::make_unique<Tensor>(std::move(tensor)));
        return *tensors_.back();
    }

    Tensor randomTensor(TensorShape shape, float deviation) {
        std::normal_distribution<float> normal(0.0f, deviation);
        std::vector<float> values(std::size_t(shape.count()));
        for (float& value : values) value = normal(rng_);
        Tensor tensor(backend_, shape);
        tensor.fromHost(values);
        return tensor;
    }

    Flow newFlow(TensorShape shape) {
        return {&keep(Tensor(backend_, shape)), &keep(Tensor(backend_, shape))};
    }

    // Parameters and gradients are views into two flat buffers, as in the engine, so that the
    // optimiser is one call. The buffers are sized for fer-cnn up front.
    Flow parameter(TensorShape shape, float deviation) {
        ensureParameterBuffers();
        if (parameterCount_ + shape.count() > parameterCapacity)
            throw Error("fer-cnn outgrew the bench's parameter buffer", "cpu_ops_bench");
        Tensor param = Tensor::view(backend_, parameters_->data() + parameterCount_, shape);
        Tensor grad = Tensor::view(backend_, gradients_->data() + parameterCount_, shape);
        Tensor initial = randomTensor(shape, deviation);
        backend_.copy(param.data(), initial.data(), initial.bytes());
        parameterCount_ += shape.count();
        return {&keep(std::move(param)), &keep(std::move(grad))};
    }
    void ensureParameterBuffers() {
        if (parameters_) return;
        parameters_ = &keep(Tensor(backend_, {1, 1, 1, parameterCapacity}));
        gradients_ = &keep(Tensor(backend_, {1, 1, 1, parameterCapacity}));
    }

    Flow addConv(const std::string& name, Flow in, int filters) {
        const TensorShape& s = in.value->shape();
        ConvGeometry g;
        g.batch = batch_;
        g.inChannels = s.channels;
        g.inHeight = g.outHeight = s.height;
        g.inWidth = g.outWidth = s.width;
        g.outChannels = filters;
        g.kernelHeight = g.kernelWidth = 3;
        g.padHeight = g.padWidth = 1;
        Flow w = parameter({filters, s.channels, 3, 3}, std::sqrt(2.0f / (9.0f * s.channels)));
        Flow out = newFlow({batch_, filters, s.height, s.width});
        layers_.push_back(
            {name, [=, this] {
                 backend_.convForward(g, in.value->data(), w.value->data(), nullptr,
                                      out.value->data());
             },
             [=, this] {
                 backend_.convBackwardFilter(g, in.value->data(), out.gradient->data(),
                                             w.gradient->data(), nullptr);
                 if (in.gradient)
                     backend_.convBackwardData(g, out.gradient->data(), w.value->data(),
                                               in.gradient->data());
             }});
        return out;
    }

    Flow addBatchNorm(const std::string& name, Flow in) {
        const TensorShape& s = in.value->shape();
        BatchNormGeometry g;
        g.batch = batch_;
        g.channels = s.channels;
        g.spatial = s.height * s.width;
        const TensorShape perChannel{1, s.channels, 1, 1};
        Flow gamma = parameter(perChannel, 0.1f), beta = parameter(perChannel, 0.1f);
        Tensor* runningMean = &keep(Tensor(backend_, perChannel));
        Tensor* runningVar = &keep(Tensor(backend_, perChannel));
        backend_.fill(runningMean->data(), 0.0f, std::size_t(s.channels));
        backend_.fill(runningVar->data(), 1.0f, std::size_t(s.channels));
        Tensor* savedMean = &keep(Tensor(backend_, perChannel));
        Tensor* savedInvStd = &keep(Tensor(backend_, perChannel));
        Flow out = newFlow(s);
        layers_.push_back(
            {name, [=, this] {
                 backend_.batchNormForwardTraining(g, in.value->data(), gamma.value->data(),
                                                   beta.value->data(), out.value->data(),
                                                   runningMean->data(), runningVar->data(),
                                                   savedMean->data(), savedInvStd->data());
             },
             [=, this] {
                 backend_.batchNormBackward(g, in.value->data(), out.gradient->data(),
                                            gamma.value->data(), savedMean->data(),
                                            savedInvStd->data(), in.gradient->data(),
                                            gamma.gradient->data(), beta.gradient->data());
             }});
        return out;
    }

    // In place on the values and on the gradients, as nn.ReLU(inplace=True).
    void addRelu(const std::string& name, Flow flow) {
        const std::size_t count = std::size_t(flow.value->count());
        layers_.push_back({name,
                           [=, this] {
                               backend_.activationForward(Activation::Relu, 0.0f,
                                                          flow.value->data(), flow.value->data(),
                                                          count);
                           },
                           [=, this] {
                               backend_.activationBackward(
                                   Activation::Relu, 0.0f, flow.value->data(), flow.value->data(),
                                   flow.gradient->data(), flow.gradient->data(), count);
                           }});
    }

    Flow addMaxPool(const std::string& name, Flow in) {
        const TensorShape& s = in.value->shape();
        PoolGeometry g;
        g.kind = PoolKind::Max;
        g.batch = batch_;
        g.channels = s.channels;
        g.inHeight = s.height;
        g.inWidth = s.width;
        g.outHeight = s.height / 2;
        g.outWidth = s.width / 2;
        g.kernelHeight = g.kernelWidth = g.strideHeight = g.strideWidth = 2;
        Flow out = newFlow({batch_, s.channels, g.outHeight, g.outWidth});
        layers_.push_back(
            {name, [=, this] { backend_.poolForward(g, in.value->data(), out.value->data()); },
             [=, this] {
                 backend_.poolBackward(g, in.value->data(), out.value->data(),
                                       out.gradient->data(), in.gradient->data());
             }});
        return out;
    }

    Flow addDense(const std::string& name, Flow in, int outFeatures) {
        const int inFeatures = int(in.value->shape().countPerImage());
        DenseGeometry g{batch_, inFeatures, outFeatures};
        Flow w = parameter({outFeatures, inFeatures, 1, 1}, std::sqrt(2.0f / float(inFeatures)));
        Flow bias = parameter({1, outFeatures, 1, 1}, 0.01f);
        Flow out = newFlow({batch_, outFeatures, 1, 1});
        layers_.push_back(
            {name, [=, this] {
                 backend_.denseForward(g, in.value->data(), w.value->data(), bias.value->data(),
                                       out.value->data());
             },
             [=, this] {
                 backend_.denseBackwardWeights(g, in.value->data(), out.gradient->data(),
                                               w.gradient->data(), bias.gradient->data());
                 backend_.denseBackwardData(g, out.gradient->data(), w.value->data(),
                                            in.gradient->data());
             }});
        return out;
    }

    // In place, with the mask kept for the backward.
    void addDropout(const std::string& name, Flow flow) {
        const std::size_t count = std::size_t(flow.value->count());
        Tensor* mask = &keep(Tensor(backend_, flow.value->shape()));
        layers_.push_back(
            {name, [=, this] {
                 backend_.dropoutMask(0.5f, 7, &scalars_, mask->data(), count);
                 backend_.multiply(flow.value->data(), mask->data(), flow.value->data(), count);
             },
             [=, this] {
                 backend_.multiply(flow.gradient->data(), mask->data(), flow.gradient->data(),
                                   count);
             }});
    }

    void addLoss(Flow logits) {
        const LossGeometry g{batch_, 7, 0.0f};
        std::vector<std::int32_t> hostLabels(static_cast<std::size_t>(batch_));
        for (std::size_t i = 0; i < hostLabels.size(); ++i) hostLabels[i] = std::int32_t(i % 7);
        const std::size_t labelBytes = hostLabels.size() * sizeof(std::int32_t);
        labelStorage_ = std::shared_ptr<void>(backend_.allocateBytes(labelBytes),
                                              [b = &backend_](void* p) { b->freeBytes(p); });
        backend_.upload(labelStorage_.get(), hostLabels.data(), labelBytes);
        const auto* labelData = static_cast<const std::int32_t*>(labelStorage_.get());
        Tensor* probabilities = &keep(Tensor(backend_, logits.value->shape()));
        Tensor* loss = &keep(Tensor(backend_, {1, 1, 1, 1}));
        layers_.push_back(
            {"loss", [=, this] {
                 backend_.softmaxCrossEntropyForward(g, logits.value->data(), labelData, nullptr,
                                                     probabilities->data(), loss->data());
             },
             [=, this] {
                 backend_.softmaxCrossEntropyBackward(g, probabilities->data(), labelData, nullptr,
                                                      logits.gradient->data());
             }});
    }

    static constexpr int parameterCapacity = 4 << 20;  // fer-cnn has 3.51M parameters

    Backend& backend_;
    int batch_;
    std::mt19937 rng_;
    StepScalars scalars_{0.01f, 1.0f, 1.0f, 0};
    std::vector<std::unique_ptr<Tensor>> tensors_;
    Tensor* parameters_ = nullptr;
    Tensor* gradients_ = nullptr;
    Tensor* velocity_ = nullptr;
    std::int64_t parameterCount_ = 0;
    std::shared_ptr<void> labelStorage_;
    std::vector<Layer> layers_;
};

double medianMs(Backend& backend, int repeats, const std::function<void()>& run) {
    run();  // warm-up: builds the plans
    backend.synchronize();
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
        auto start = std::chrono::steady_clock::now();
        run();
        backend.synchronize();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                               start)
                         .count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Times fer-cnn's layers, forward and backward, on a CPU backend"};
    std::string backendName = "cpu";
    int threads = 0, batch = 64, repeats = 10;
    app.add_option("--backend", backendName, "cpu or cpu-ref")->capture_default_str();
    app.add_option("--threads", threads, "0 = every core")->capture_default_str();
    app.add_option("--batch", batch, "images per step")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--repeats", repeats, "timed runs per figure (median)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);

    try {
        BackendOptions options;
        options.threads = threads;
        auto backend = createBackend(backendName, options);
        FerCnnBench bench(*backend, batch);
        std::printf("fer-cnn, batch %d, backend %s (%s), %lld parameters, median of %d\n", batch,
                    backendName.c_str(), backend->description().c_str(),
                    static_cast<long long>(bench.parameterCount()), repeats);
        std::printf("%-10s %10s %10s %10s\n", "layer", "fwd ms", "bwd ms", "sum ms");
        double forwardTotal = 0, backwardTotal = 0;
        for (const Layer& layer : bench.layers()) {
            const double forward = medianMs(*backend, repeats, layer.forward);
            const double backward = medianMs(*backend, repeats, layer.backward);
            forwardTotal += forward;
            backwardTotal += backward;
            std::printf("%-10s %10.3f %10.3f %10.3f\n", layer.name.c_str(), forward, backward,
                        forward + backward);
        }
        std::printf("%-10s %10.3f %10.3f %10.3f\n", "layers", forwardTotal, backwardTotal,
                    forwardTotal + backwardTotal);
        const double stepMs = medianMs(*backend, repeats, [&] { bench.trainingStep(); });
        std::printf("%-10s %32.3f  (forward, backward, SGD momentum)\n", "step", stepMs);
        std::printf("{\"impl\": \"cnnstudio\", \"backend\": \"%s\", \"description\": \"%s\", "
                    "\"model\": \"fer-cnn\", \"batch\": %d, \"step_ms\": %.3f, "
                    "\"images_per_s\": %.1f}\n",
                    backendName.c_str(), backend->description().c_str(), batch, stepMs,
                    1000.0 * batch / stepMs);
    } catch (const Error& error) {
        std::cerr << "cpu_ops_bench: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
