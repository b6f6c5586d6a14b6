// Tensor: storage owned by a backend, fp32 NCHW on the public side. A dense activation (N, F)
// is the tensor (N, F, 1, 1). An activation tensor (Tensor::activations) holds its elements in
// the backend's activation format (Backend::activationFormat, bf16 channels-last on some GPU
// backends); toHost and fromHost convert, so callers always see fp32 NCHW.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cnnstudio {

class Backend;

struct TensorShape {
    int batch = 1, channels = 1, height = 1, width = 1;

    std::int64_t count() const {
        return std::int64_t(batch) * channels * height * width;
    }
    std::int64_t countPerImage() const { return std::int64_t(channels) * height * width; }
    TensorShape withBatch(int n) const { return {n, channels, height, width}; }
    std::string toString() const;  // "(N,C,H,W)"
    bool operator==(const TensorShape&) const = default;
};

class Tensor {
public:
    Tensor() = default;
    // Allocates shape.count() floats on the backend; contents undefined.
    Tensor(Backend& backend, TensorShape shape);
    // Allocates room for shape.count() activations in the backend's activation format.
    static Tensor activations(Backend& backend, TensorShape shape);
    // A view of memory owned elsewhere (a slice of the flat parameter buffer, say).
    static Tensor view(Backend& backend, float* data, TensorShape shape);

    float* data() { return data_; }
    const float* data() const { return data_; }
    const TensorShape& shape() const { return shape_; }
    std::int64_t count() const { return shape_.count(); }
    std::size_t bytes() const;  // of the elements, in this tensor's format
    Backend* backend() const { return backend_; }
    bool empty() const { return data_ == nullptr; }
    bool holdsActivations() const { return activations_; }

    std::vector<float> toHost() const;
    void fromHost(std::span<const float> values);  // values.size() must equal count()

private:
    Backend* backend_ = nullptr;
    float* data_ = nullptr;
    TensorShape shape_;
    bool activations_ = false;
    std::shared_ptr<void> storage_;  // null for views
};

}  // namespace cnnstudio
