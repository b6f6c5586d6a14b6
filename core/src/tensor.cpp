#include "cnnstudio/tensor.h"

#include "cnnstudio/backend.h"
#include "cnnstudio/error.h"

namespace cnnstudio {

std::string TensorShape::toString() const {
    std::string text = "(";
    for (int dimension : {batch, channels, height, width}) text += std::to_string(dimension) + ",";
    text.back() = ')';
    return text;
}

Tensor::Tensor(Backend& backend, TensorShape shape) : backend_(&backend), shape_(shape) {
    if (shape.count() <= 0) throw Error("cannot allocate a tensor of shape " + shape.toString());
    // fp32-sized even for activations: a narrower activation format uses the front.
    void* memory = backend.allocateBytes(std::size_t(count()) * sizeof(float));
    storage_ = std::shared_ptr<void>(memory, [b = &backend](void* p) { b->freeBytes(p); });
    data_ = static_cast<float*>(memory);
}

Tensor Tensor::activations(Backend& backend, TensorShape shape) {
    Tensor tensor(backend, shape);
    tensor.activations_ = true;
    return tensor;
}

std::size_t Tensor::bytes() const {
    const std::size_t elements = std::size_t(count());
    return activations_ ? backend_->activationBytes(elements) : elements * sizeof(float);
}

Tensor Tensor::view(Backend& backend, float* data, TensorShape shape) {
    Tensor tensor;
    tensor.backend_ = &backend;
    tensor.data_ = data;
    tensor.shape_ = shape;
    return tensor;
}

std::vector<float> Tensor::toHost() const {
    std::vector<float> values(static_cast<std::size_t>(count()));
    if (values.empty()) return values;
    if (activations_)
        backend_->downloadActivations(shape_, data_, values.data());
    else
        backend_->download(values.data(), data_, bytes());
    return values;
}

void Tensor::fromHost(std::span<const float> values) {
    if (std::int64_t(values.size()) != count())
        throw Error("tensor of shape " + shape_.toString() + " given " +
                    std::to_string(values.size()) + " values");
    if (activations_)
        backend_->uploadActivations(shape_, values.data(), data_);
    else
        backend_->upload(data_, values.data(), bytes());
}

}  // namespace cnnstudio
