// The bf16 copies of fp32 weights that the cudnn backend stages for a forward pass and reads again
// in the backward pass that follows, while the caller holds the weights unchanged
// (Backend::beginWeightsHeld). A copy is valid in the hold it was staged in; ending the hold
// forgets them all, and their memory stays for the next hold to stage into, so that a captured
// training step allocates nothing. The memory lives as long as the backend, which a training run
// creates for its own network.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "cnnstudio/backend_buffer.h"

namespace cnnstudio::kernels {

class HeldWeights {
public:
    // What a copy holds, in the staging's terms: a convolution's (K, C/groups, R*S) filter in
    // KRSC, a dense layer's (count, 1, 1) weights. A weight staged in another shape is staged
    // anew.
    using Shape = std::array<std::int64_t, 3>;

    void beginHold() { holding_ = true; }
    void endHold() noexcept {
        holding_ = false;
        ++hold_;
    }
    bool holding() const { return holding_; }

    // The copy of `weights` in `shape` staged in this hold: the one found, or one that
    // stage(room) writes now into `bytes` of room claimed for it.
    template <typename Stage>
    const void* copyOf(Backend& memory, const float* weights, const Shape& shape,
                       std::size_t bytes, Stage&& stage) {
        if (const void* copy = find(weights, shape)) return copy;
        void* room = claim(memory, weights, shape, bytes);
        stage(room);
        return room;
    }

private:
    // The copy of `weights` staged in this hold in `shape`, or null.
    const void* find(const float* weights, const Shape& shape) const {
        const auto found = copies_.find(weights);
        if (found == copies_.end()) return nullptr;
        const Copy& copy = found->second;
        return copy.hold == hold_ && copy.shape == shape ? copy.memory.data() : nullptr;
    }

    // Room of `bytes` for the copy of `weights` in `shape`, which find() returns for the rest of
    // this hold (its memory reused when an earlier hold claimed as many bytes).
    void* claim(Backend& memory, const float* weights, const Shape& shape, std::size_t bytes) {
        Copy& copy = copies_[weights];
        if (copy.memory.bytes() != bytes) copy.memory = BackendBuffer<char>(memory, bytes);
        copy.shape = shape;
        copy.hold = hold_;
        return copy.memory.data();
    }

    struct Copy {
        BackendBuffer<char> memory;
        Shape shape{};
        std::uint64_t hold = 0;
    };
    std::unordered_map<const float*, Copy> copies_;
    std::uint64_t hold_ = 1;  // a Copy claimed in no hold (hold 0) is never found
    bool holding_ = false;
};

}  // namespace cnnstudio::kernels
