#include "cnnstudio/network.h"

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <random>

#include "cnnstudio/error.h"
#include "cnnstudio/ops/dropout_hash.h"
#include "layers/layer.h"
#include "layers/layer_type.h"

namespace cnnstudio {

std::size_t ParameterInfo::count() const {
    std::size_t n = 1;
    for (std::int64_t d : shape) n *= std::size_t(d);
    return n;
}

// One node of the built network: its layer, where its inputs and output live, and where its
// backward pass writes each input gradient.
struct Network::Node {
    std::string name;
    const LayerType* type = nullptr;  // its registry record: what the graph code asks about it
    std::unique_ptr<Layer> layer;
    std::vector<int> inputs;  // producer indices into nodes_
    std::vector<int> consumers;
    Tensor output, outputGradient;
    LayerIo io;
    std::vector<float*> gradientTargets;  // per input: null, the producer's gradient or a scratch
    struct Accumulation {
        Tensor scratch;
        float* producerGradient;
    };
    std::vector<Accumulation> accumulations;  // scratch gradients added after backward
    std::size_t parameterOffset = 0, parameterCount = 0;
    // On a Conv2D that starts a Conv2D -> BatchNorm2D -> ReLU chain (each output read only by
    // the next): inference runs the chain as one op into the ReLU's output, and the chain's
    // other two nodes are skipped.
    struct InferenceFusion {
        FusableConv conv;
        FusableBatchNorm batchNorm;
        int relu;  // index of the chain's last node
    };
    std::optional<InferenceFusion> inferenceFusion;
    bool skippedAtInference = false;
    // On a batch norm whose output only a ReLU reads: training runs both as one layer call each
    // way (Layer::forwardWithRelu), and the ReLU node is skipped. When only a max pooling reads
    // the ReLU's output, it joins them (Layer::forwardWithReluMaxPool) and is skipped too.
    // When that batch norm reads a Conv2D that alone reads the network's input (so needs no
    // input gradient) and is read by the batch norm alone, and no pooling joins, the convolution
    // joins them too (Layer::forwardWithConvRelu) and is skipped: its output and output gradient
    // are then the chain's inner tensors.
    int absorbedRelu = -1;
    int absorbedMaxPool = -1;
    int absorbedConv = -1;
    PoolGeometry absorbedMaxPoolGeometry;
    bool absorbedInTraining = false;
};

namespace {

// Every parameter and state slice starts on a 256-byte boundary, as a buffer of its own would:
// vectorised kernels and cuDNN's persistent batch norm read gamma, beta and the running
// statistics with wide loads. The padding between slices stays zero.
constexpr std::size_t kSliceAlignment = 256 / sizeof(float);

std::size_t alignSlice(std::size_t offset) {
    return (offset + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
}

// The standard deviation of the weights that produce the class scores, as torchvision's
// classifiers use: the first logits are then a few tenths at most and the first loss is close to
// ln(classes). With Glorot there, fer-cnn's logits started with a standard deviation of about 1.8
// (its dense layer reads 9216 max-pooled ReLU outputs, whose mean square is about 3 times what He
// initialisation assumes), a first loss of 3.9 instead of ln 7 = 1.95 and gradients that blew the
// first SGD steps at lr 0.05 up to a loss of 122 and left the network predicting the majority
// class for many epochs (docs/experiments/fer2013.md, "The stall").
constexpr float kClassScoreWeightStddev = 0.01f;

void initialise(std::span<float> values, const BufferRequest& request, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    switch (request.initialisation) {
    case Initialisation::Zeros: std::fill(values.begin(), values.end(), 0.0f); return;
    case Initialisation::Ones: std::fill(values.begin(), values.end(), 1.0f); return;
    case Initialisation::He: {  // normal, std = sqrt(2 / fan_in)
        std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / float(request.fanIn)));
        for (float& v : values) v = normal(random);
        return;
    }
    case Initialisation::Glorot: {  // uniform in +-sqrt(6 / (fan_in + fan_out))
        float limit = std::sqrt(6.0f / float(request.fanIn + request.fanOut));
        std::uniform_real_distribution<float> uniform(-limit, limit);
        for (float& v : values) v = uniform(random);
        return;
    }
    case Initialisation::ClassScores: {  // normal, std = kClassScoreWeightStddev
        std::normal_distribution<float> normal(0.0f, kClassScoreWeightStddev);
        for (float& v : values) v = normal(random);
        return;
    }
    }
}

}  // namespace

Network::Network(const NetworkSpec& spec, Backend& backend, int batch, std::uint64_t seed, NetworkUse use)
    : spec_(spec), shapes_(inferShapes(spec)), backend_(backend), batch_(batch), use_(use) {
    if (batch < 1) throw Error("batch size must be at least 1, got " + std::to_string(batch));
    build(seed);
}

Network::~Network() = default;

TensorShape Network::inputShape() const { return shapes_.inputShape.withBatch(batch_); }
int Network::classes() const { return int(shapes_.outputShape.countPerImage()); }
Tensor& Network::input() { return nodes_.front()->output; }
const Tensor& Network::logits() const { return nodes_.back()->output; }
const Tensor& Network::probabilities() const { return probabilities_; }

void Network::setGradientsReadyHook(std::function<void(std::size_t, std::size_t)> hook) {
    gradientsReady_ = std::move(hook);
}

void Network::build(std::uint64_t seed) {
    // Nodes in topological order; the Input comes first and the output (the sink) last.
    std::map<std::string, int> indexOf;
    for (const NodeInfo& info : shapes_.nodes) {
        auto node = std::make_unique<Node>();
        node->name = info.name;
        node->type = findRegisteredLayerType(info.type);  // inferShapes accepted every type
        indexOf[info.name] = int(nodes_.size());
        nodes_.push_back(std::move(node));
    }
    for (auto& node : nodes_) {
        for (const std::string& producer : spec_.find(node->name)->inputs) {
            node->inputs.push_back(indexOf.at(producer));
            nodes_[indexOf.at(producer)]->consumers.push_back(indexOf.at(node->name));
        }
    }

    // He initialisation for weights that feed a ReLU-like activation (through batch norm or
    // dropout), small weights for the layer producing the class scores, Glorot for the others.
    auto feedsActivation = [&](int index) {
        for (int at = index;;) {
            const Node& node = *nodes_[at];
            if (node.consumers.size() != 1) return false;
            const LayerTraits& next = nodes_[node.consumers[0]]->type->traits;
            if (next.isActivation) return true;
            if (!next.transparentToInitialisation) return false;
            at = node.consumers[0];
        }
    };
    // Whether a node's output reaches the network's output (the last node) only through layers
    // that pass class scores through unchanged in meaning (dropout, pooling, flatten), with no
    // activation between: then its weights produce the class scores.
    auto producesClassScores = [&](int index) {
        for (int at = index;;) {
            if (at == int(nodes_.size()) - 1) return true;
            const Node& node = *nodes_[at];
            if (node.consumers.size() != 1) return false;
            const LayerTraits& next = nodes_[node.consumers[0]]->type->traits;
            if (!next.passesClassScoresThrough || next.isActivation) return false;
            at = node.consumers[0];
        }
    };

    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        Node& node = *nodes_[i];
        const NodeSpec& nodeSpec = *spec_.find(node.name);
        node.io.outputShape = shapes_.nodes[i].outputShape.withBatch(batch_);
        for (int producer : node.inputs) {
            node.io.inputShapes.push_back(nodes_[producer]->io.outputShape);
            node.io.inputs.push_back(nodes_[producer]->output.data());
        }
        const bool hasWeights = node.type->traits.hasWeights;
        const Initialisation init = hasWeights && feedsActivation(int(i))        ? Initialisation::He
                                    : hasWeights && producesClassScores(int(i)) ? Initialisation::ClassScores
                                                                                : Initialisation::Glorot;
        node.layer = createLayer(backend_, nodeSpec, node.io.inputShapes, node.io.outputShape,
                                 init, mixBits(seed ^ (0x9e3779b97f4a7c15ULL * (i + 1))));
        node.output = Tensor::activations(backend_, node.io.outputShape);
        node.io.output = node.output.data();
    }

    // Flat buffers, laid out in reverse topological order: backward completes the gradients
    // of the last layers first, and those slices then arrive front to back.
    struct Slot {
        Node* node;
        BufferRequest request;
        std::size_t offset;
    };
    std::vector<Slot> parameterSlots, stateSlots;
    std::size_t parameterTotal = 0, stateTotal = 0;
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
        Node& node = **it;
        node.parameterOffset = parameterTotal;
        for (const BufferRequest& request : node.layer->parameterRequests()) {
            parameterTotal = alignSlice(parameterTotal);
            ParameterInfo info{node.name + "." + request.suffix, parameterTotal, request.shape};
            parameterSlots.push_back({&node, request, parameterTotal});
            parameterInfo_.push_back(info);
            parameterTotal += info.count();
        }
        node.parameterCount = parameterTotal - node.parameterOffset;
        for (const BufferRequest& request : node.layer->stateRequests()) {
            stateTotal = alignSlice(stateTotal);
            ParameterInfo info{node.name + "." + request.suffix, stateTotal, request.shape};
            stateSlots.push_back({&node, request, stateTotal});
            stateInfo_.push_back(info);
            stateTotal += info.count();
        }
    }
    // Shape inference bounds the parameters themselves; each slice starts aligned, so the padded
    // totals can still pass the int sizes of a tensor.
    if (std::max(parameterTotal, stateTotal) > std::size_t(kMaxNetworkParameters))
        throw Error("its parameters and state take " + std::to_string(parameterTotal) + " and " +
                        std::to_string(stateTotal) + " floats with their alignment, more than the " +
                        std::to_string(kMaxNetworkParameters) + " (2^31 - 1) one tensor holds",
                    spec_.name.empty() ? std::string("network") : "network '" + spec_.name + "'",
                    "make its largest layers smaller");
    parameters_ = Tensor(backend_, {1, int(std::max<std::size_t>(parameterTotal, 1)), 1, 1});
    gradients_ = Tensor(backend_, parameters_.shape());
    if (stateTotal > 0) state_ = Tensor(backend_, {1, int(stateTotal), 1, 1});

    std::vector<float> initialParameters(parameters_.count(), 0.0f), initialState(stateTotal);
    for (std::size_t k = 0; k < parameterSlots.size(); ++k)
        initialise(std::span(initialParameters).subspan(parameterSlots[k].offset, parameterInfo_[k].count()),
                   parameterSlots[k].request, mixBits(seed + k));
    for (std::size_t k = 0; k < stateSlots.size(); ++k)
        initialise(std::span(initialState).subspan(stateSlots[k].offset, stateInfo_[k].count()),
                   stateSlots[k].request, 0);
    parameters_.fromHost(initialParameters);
    backend_.fill(gradients_.data(), 0.0f, std::size_t(gradients_.count()));
    if (stateTotal > 0) state_.fromHost(initialState);

    for (auto& node : nodes_) {
        std::vector<float*> parameters, gradients, state;
        for (const Slot& slot : parameterSlots)
            if (slot.node == node.get()) {
                parameters.push_back(parameters_.data() + slot.offset);
                gradients.push_back(gradients_.data() + slot.offset);
            }
        for (const Slot& slot : stateSlots)
            if (slot.node == node.get()) state.push_back(state_.data() + slot.offset);
        node->layer->bind(parameters, gradients, state);
    }

    findFusions();

    if (use_ == NetworkUse::Training) allocateActivationGradients();

    labelStorage_ = BackendBuffer<std::int32_t>(backend_, std::size_t(batch_));
    labels_ = labelStorage_.data();
    probabilities_ = Tensor(backend_, {batch_, classes(), 1, 1});
    lossStorage_ = Tensor(backend_, {1, 1, 1, 1});
    loss_ = lossStorage_.data();
    stepStorage_ = BackendBuffer<StepScalars>(backend_, 1);
    stepScalars_ = stepStorage_.data();
    StepScalars initial;
    backend_.upload(stepScalars_, &initial, sizeof initial);
    std::vector<std::int32_t> zeroLabels(std::size_t(batch_), 0);
    backend_.upload(labels_, zeroLabels.data(), zeroLabels.size() * sizeof(std::int32_t));
}

void Network::setLossOptions(const LossOptions& options) {
    if (!options.classWeights.empty() && int(options.classWeights.size()) != classes())
        throw Error("class weights has " + std::to_string(options.classWeights.size()) +
                        " entries, the network has " + std::to_string(classes()) + " classes",
                    "loss options");
    if (options.labelSmoothing < 0.0f || options.labelSmoothing >= 1.0f)
        throw Error("label smoothing must be in [0, 1), got " + std::to_string(options.labelSmoothing),
                    "loss options");
    if (!(options.temperature > 0.0f && std::isfinite(options.temperature)))
        throw Error("the loss temperature must be positive, got " + std::to_string(options.temperature),
                    "loss options");
    lossOptions_ = options;
    classWeights_ = Tensor();
    if (!options.classWeights.empty()) {
        classWeights_ = Tensor(backend_, {1, classes(), 1, 1});
        classWeights_.fromHost(options.classWeights);
    }
}

void Network::setMixedLabels(std::span<const std::int32_t> secondLabels,
                             std::span<const float> labelWeights) {
    if (secondLabels.size() != std::size_t(batch_) || labelWeights.size() != std::size_t(batch_))
        throw Error(std::to_string(secondLabels.size()) + " second labels and " +
                        std::to_string(labelWeights.size()) + " label weights for a batch of " +
                        std::to_string(batch_), "mixed labels", "give one of each per image");
    if (secondLabelStorage_.data() == nullptr) {
        secondLabelStorage_ = BackendBuffer<std::int32_t>(backend_, std::size_t(batch_));
        labelWeightStorage_ = BackendBuffer<float>(backend_, std::size_t(batch_));
    }
    backend_.upload(secondLabelStorage_.data(), secondLabels.data(), secondLabels.size_bytes());
    backend_.upload(labelWeightStorage_.data(), labelWeights.data(), labelWeights.size_bytes());
}

void Network::setSoftTargets(const SoftTargets& soft) { softTargets_ = soft; }  // the loss ops check them

LabelMix Network::labelMix() const {
    if (secondLabelStorage_.data() == nullptr) return {};
    return {secondLabelStorage_.data(), labelWeightStorage_.data()};
}

void Network::findFusions() {
    auto soleConsumer = [&](const Node& node) -> Node* {
        return node.consumers.size() == 1 ? nodes_[node.consumers[0]].get() : nullptr;
    };
    auto soleReluConsumer = [&](const Node& node) -> Node* {
        Node* next = soleConsumer(node);
        return next && next->type->traits.isRelu ? next : nullptr;
    };
    // The convolution `node` reads, when it offers its weights, reads the network's input alone
    // without needing its gradient, and has no other reader.
    auto inputConvReadOnlyBy = [&](const Node& node) -> Node* {
        if (node.inputs.size() != 1) return nullptr;
        Node* conv = nodes_[node.inputs[0]].get();
        const bool readsTheInput = conv->inputs.size() == 1 &&
                                   nodes_[conv->inputs[0]]->type->traits.isNetworkInput &&
                                   !conv->layer->alwaysWritesInputGradients();
        return readsTheInput && soleConsumer(*conv) == &node && conv->layer->fusableConv()
                   ? conv
                   : nullptr;
    };
    for (auto& node : nodes_) {
        if (Node* relu = soleReluConsumer(*node); relu && node->type->traits.absorbsFollowingRelu) {
            node->absorbedRelu = node->consumers[0];
            relu->absorbedInTraining = true;
            Node* pool = soleConsumer(*relu);
            if (std::optional<PoolGeometry> max = pool ? pool->layer->fusableMaxPool() : std::nullopt) {
                node->absorbedMaxPool = relu->consumers[0];
                node->absorbedMaxPoolGeometry = *max;
                pool->absorbedInTraining = true;
            } else if (Node* conv = inputConvReadOnlyBy(*node)) {
                node->absorbedConv = node->inputs[0];
                conv->absorbedInTraining = true;
            }
        }
        // The layers that offer their weights for the inference chain (Conv2D, BatchNorm2D).
        std::optional<FusableConv> conv = node->layer->fusableConv();
        Node* batchNorm = conv ? soleConsumer(*node) : nullptr;
        std::optional<FusableBatchNorm> norm;
        if (batchNorm) norm = batchNorm->layer->fusableBatchNorm();
        Node* relu = norm ? soleReluConsumer(*batchNorm) : nullptr;
        if (relu == nullptr) continue;
        node->inferenceFusion = Node::InferenceFusion{*conv, *norm, batchNorm->consumers[0]};
        batchNorm->skippedAtInference = relu->skippedAtInference = true;
    }
}

bool Network::runsInForward(const Node& node, Phase phase) const {
    return phase == Phase::Training ? !node.absorbedInTraining : !node.skippedAtInference;
}

void Network::forwardNode(Node& node, Phase phase) {
    const bool training = phase == Phase::Training;
    if (!training && node.inferenceFusion) {
        const Node::InferenceFusion& fusion = *node.inferenceFusion;
        const FusableBatchNorm& bn = fusion.batchNorm;
        backend_.convBatchNormReluInference(fusion.conv.geometry, node.io.inputs[0],
                                            fusion.conv.weight, fusion.conv.bias, bn.geometry,
                                            bn.gamma, bn.beta, bn.runningMean, bn.runningVar,
                                            nodes_[fusion.relu]->output.data());
    } else if (training && node.absorbedMaxPool >= 0) {
        node.layer->forwardWithReluMaxPool(node.io, nodes_[node.absorbedRelu]->output.data(),
                                           node.absorbedMaxPoolGeometry,
                                           nodes_[node.absorbedMaxPool]->output.data());
    } else if (training && node.absorbedConv >= 0) {
        Node& conv = *nodes_[node.absorbedConv];
        node.layer->forwardWithConvRelu(node.io, *conv.layer->fusableConv(), conv.io.inputs[0],
                                        conv.output.data(),
                                        nodes_[node.absorbedRelu]->output.data());
    } else if (training && node.absorbedRelu >= 0) {
        node.layer->forwardWithRelu(node.io, nodes_[node.absorbedRelu]->output.data());
    } else {
        node.layer->forward(phase, node.io, stepScalars_);
    }
}

void Network::forward(Phase phase) {
    for (std::size_t i = 1; i < nodes_.size(); ++i)
        if (runsInForward(*nodes_[i], phase)) forwardNode(*nodes_[i], phase);
}

LossGeometry Network::lossGeometry() const {
    return {batch_, classes(), lossOptions_.labelSmoothing, lossOptions_.temperature};
}

// Where each backward writes its input gradients. Walking backwards, the first consumer of a
// producer overwrites the producer's gradient; later ones write a scratch that is then added in
// (backward ops overwrite, so fan-out sums are explicit).
void Network::allocateActivationGradients() {
    std::vector<bool> gradientStarted(nodes_.size(), false);
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
        Node& node = **it;
        for (int producerIndex : node.inputs) {
            Node& producer = *nodes_[producerIndex];
            bool needed = !producer.type->traits.isNetworkInput ||
                          node.layer->alwaysWritesInputGradients();
            if (!needed) {
                node.gradientTargets.push_back(nullptr);
                continue;
            }
            if (producer.outputGradient.empty())
                producer.outputGradient = Tensor::activations(backend_, producer.io.outputShape);
            if (!gradientStarted[producerIndex]) {
                gradientStarted[producerIndex] = true;
                node.gradientTargets.push_back(producer.outputGradient.data());
            } else {
                Tensor scratch = Tensor::activations(backend_, producer.io.outputShape);
                node.gradientTargets.push_back(scratch.data());
                node.accumulations.push_back({scratch, producer.outputGradient.data()});
            }
        }
    }
    Node& sink = *nodes_.back();
    if (sink.outputGradient.empty())
        sink.outputGradient = Tensor::activations(backend_, sink.io.outputShape);
}

void Network::requireActivationGradients(const char* operation) const {
    if (use_ == NetworkUse::Inference)
        throw Error("the network was built for inference and holds no activation gradients",
                    std::string("Network::") + operation, "build it with NetworkUse::Training");
}

void Network::computeLoss() {
    backend_.softmaxCrossEntropyForward(lossGeometry(), logits().data(), labels_,
                                        classWeights_.empty() ? nullptr : classWeights_.data(),
                                        probabilities_.data(), loss_, labelMix(), softTargets_);
}

void Network::backwardNode(Node& node) {
    if (node.absorbedMaxPool >= 0) {
        Node& relu = *nodes_[node.absorbedRelu];  // its gradient is room for the chain's op
        const Node& pool = *nodes_[node.absorbedMaxPool];
        node.layer->backwardWithReluMaxPool(node.io, relu.output.data(),
                                            node.absorbedMaxPoolGeometry, pool.output.data(),
                                            pool.outputGradient.data(),
                                            relu.outputGradient.data(),
                                            node.outputGradient.data(), node.gradientTargets);
    } else if (node.absorbedConv >= 0) {
        const Node& conv = *nodes_[node.absorbedConv];
        const Node& relu = *nodes_[node.absorbedRelu];
        node.layer->backwardWithConvRelu(node.io, *conv.layer->fusableConv(), conv.io.inputs[0],
                                         relu.output.data(), relu.outputGradient.data(),
                                         node.outputGradient.data(), node.gradientTargets[0]);
    } else if (node.absorbedRelu >= 0) {
        const Node& relu = *nodes_[node.absorbedRelu];
        node.layer->backwardWithRelu(node.io, relu.output.data(), relu.outputGradient.data(),
                                     node.outputGradient.data(), node.gradientTargets);
    } else {
        node.layer->backward(node.io, node.outputGradient.data(), node.gradientTargets);
    }
    for (const Node::Accumulation& sum : node.accumulations)
        backend_.axpy(1.0f, sum.scratch.data(), sum.producerGradient,
                      std::size_t(sum.scratch.count()));
}

void Network::backward() {
    requireActivationGradients("backward");
    Node& sink = *nodes_.back();
    backend_.softmaxCrossEntropyBackward(lossGeometry(), probabilities_.data(), labels_,
                                         classWeights_.empty() ? nullptr : classWeights_.data(),
                                         sink.outputGradient.data(), labelMix(), softTargets_);
    // Weight gradients may run beside the chain of input gradients: nothing in this pass reads
    // them or overwrites what they read, and the overlap ends (joins) before the optimiser.
    WeightGradientOverlap overlap(backend_);
    for (std::size_t i = nodes_.size() - 1; i >= 1; --i) {
        Node& node = *nodes_[i];
        if (node.absorbedInTraining) continue;  // its batch norm differentiates the chain
        backwardNode(node);
        announceGradients(node);
        if (node.absorbedConv >= 0) announceGradients(*nodes_[node.absorbedConv]);
    }
}

void Network::announceGradients(const Node& node) {
    if (node.parameterCount > 0 && gradientsReady_)
        gradientsReady_(node.parameterOffset, node.parameterCount);
}

std::vector<LayerTime> Network::profileTrainingPass() {
    auto timedMs = [this](const std::function<void()>& work) {
        backend_.synchronize();
        const auto start = std::chrono::steady_clock::now();
        work();
        backend_.synchronize();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    std::vector<LayerTime> times;
    std::vector<int> entryOfNode(nodes_.size(), -1);
    for (std::size_t i = 1; i < nodes_.size(); ++i) {
        Node& node = *nodes_[i];
        if (!runsInForward(node, Phase::Training)) continue;
        entryOfNode[i] = int(times.size());
        times.push_back({node.name, node.type->info.type,
                         timedMs([&] { forwardNode(node, Phase::Training); }), 0.0});
    }
    LayerTime loss{"loss", "SoftmaxCrossEntropy", timedMs([this] { computeLoss(); }), 0.0};
    Node& sink = *nodes_.back();
    loss.backwardMs = timedMs([&] {
        backend_.softmaxCrossEntropyBackward(lossGeometry(), probabilities_.data(), labels_,
                                             classWeights_.empty() ? nullptr : classWeights_.data(),
                                             sink.outputGradient.data(), labelMix(), softTargets_);
    });
    for (std::size_t i = nodes_.size() - 1; i >= 1; --i)
        if (entryOfNode[i] >= 0)
            times[std::size_t(entryOfNode[i])].backwardMs = timedMs([&] { backwardNode(*nodes_[i]); });
    times.push_back(loss);
    return times;
}

int Network::nodeIndex(const std::string& name) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i]->name == name) return int(i);
    throw Error("the network has no node named '" + name + "'", spec_.name,
                "name one of the nodes of its spec");
}

const Tensor& Network::activation(const std::string& node) const {
    return nodes_[std::size_t(nodeIndex(node))]->output;
}

const Tensor& Network::activationGradient(const std::string& node) const {
    requireActivationGradients("activationGradient");
    const Node& found = *nodes_[std::size_t(nodeIndex(node))];
    if (found.outputGradient.empty())
        throw Error("node '" + node + "' gets no gradient (it is the network input)", spec_.name,
                    "explain a node after the input");
    return found.outputGradient;
}

std::string Network::lastConvolutionalLayer() const {
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
        const Node& node = **it;
        if (node.type->traits.hasWeights && node.io.outputShape.height * node.io.outputShape.width > 1)
            return node.name;
    }
    throw Error("the network has no convolution with a spatial output", spec_.name,
                "Grad-CAM needs a Conv2D or SeparableConv2D whose output is larger than 1x1");
}

void Network::explainLogits(const std::vector<int>& classPerImage, const std::string& node) {
    requireActivationGradients("explainLogits");
    const int target = nodeIndex(node);
    if (target == 0)
        throw Error("node '" + node + "' is the network input", spec_.name, "explain a node after the input");
    if (int(classPerImage.size()) != batch_)
        throw Error(std::to_string(classPerImage.size()) + " classes for a batch of " + std::to_string(batch_),
                    "explainLogits", "give one class per image");
    const int classCount = classes();
    std::vector<float> seed(std::size_t(batch_) * std::size_t(classCount), 0.0f);
    for (int image = 0; image < batch_; ++image) {
        const int c = classPerImage[std::size_t(image)];
        if (c < 0 || c >= classCount)
            throw Error("class " + std::to_string(c) + " of image " + std::to_string(image) +
                            " is outside 0.." + std::to_string(classCount - 1),
                        "explainLogits", "pick one of the network's classes");
        seed[std::size_t(image * classCount + c)] = 1.0f;
    }
    // Unfused, so that every activation a backward reads (and the explained one) is written.
    for (std::size_t i = 1; i < nodes_.size(); ++i)
        nodes_[i]->layer->forward(Phase::Inference, nodes_[i]->io, stepScalars_);

    Node& sink = *nodes_.back();
    backend_.uploadActivations(sink.io.outputShape, seed.data(), sink.outputGradient.data());
    for (std::size_t i = nodes_.size() - 1; i > std::size_t(target); --i) {
        Node& current = *nodes_[i];
        current.layer->backwardInference(current.io, current.outputGradient.data(), current.gradientTargets);
        for (const Node::Accumulation& sum : current.accumulations)
            backend_.axpy(1.0f, sum.scratch.data(), sum.producerGradient, std::size_t(sum.scratch.count()));
    }
}

void Network::accumulateMetrics(int rows, bool withLoss, double* sums) {
    backend_.accumulateMetrics(metricsGeometry(rows), logits().data(), labels_, withLoss ? loss_ : nullptr, sums);
}

float Network::downloadLoss() const {
    float value = 0.0f;
    backend_.download(&value, loss_, sizeof value);
    return value;
}

}  // namespace cnnstudio
