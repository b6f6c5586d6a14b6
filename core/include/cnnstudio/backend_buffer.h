// RAII bytes in backend memory, for buffers that are not float tensors (labels, step scalars).
#pragma once

#include <cstddef>
#include <memory>

#include "cnnstudio/backend.h"

namespace cnnstudio {

template <typename T>
class BackendBuffer {
public:
    BackendBuffer() = default;
    BackendBuffer(Backend& backend, std::size_t count)
        : count_(count),
          memory_(static_cast<T*>(backend.allocateBytes(count * sizeof(T))),
                  [b = &backend](T* p) { b->freeBytes(p); }) {}

    T* data() const { return memory_.get(); }
    std::size_t count() const { return count_; }
    std::size_t bytes() const { return count_ * sizeof(T); }

private:
    std::size_t count_ = 0;
    std::shared_ptr<T> memory_;
};

}  // namespace cnnstudio
