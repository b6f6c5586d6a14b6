// The bf16 copies of fp32 weights that the cudnn backend stages for a forward pass and reads again
// in the backward pass that follows, while the caller holds the weights unchanged
// (Backend::beginWeightsHeld). A copy is valid in the hold it was staged in; ending the hold
// forgets them all, and their memory stays for the next hold to stage into, so that a captured
// training step allocates nothing. A hold that covers a copy's weights stages it again as it
// begins, all such copies at once, so that the backend can do it beside the first ops of the
// step instead of in front of each layer that reads one. The memory lives as long as the
// backend, which a training run creates for its own network.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cnnstudio/backend_buffer.h"

namespace cnnstudio::kernels {

class HeldWeights {
public:
    // What a copy holds, in the staging's terms: a convolution's (K, C/groups, R*S) filter in
    // KRSC, a dense layer's (count, 1, 1) weights. A weight staged in another shape is staged
    // anew.
    using Shape = std::array<std::int64_t, 3>;
    // Writes a copy's values into its room, on the backend's stream of the moment.
    using Stage = std::function<void(void* room)>;

    // Opens a hold over the device memory `covered`. The copies the hold before staged of
    // weights that lie in `covered` are staged again, by one call of enqueue(stageThem), and
    // copyOf finds them in this hold. Returns how many.
    template <typename Enqueue>
    std::size_t beginHold(std::span<const float> covered, Enqueue&& enqueue) {
        std::vector<Copy*> ahead;
        for (auto& [weights, copy] : copies_)
            if (copy.hold + 1 == hold_ && lieIn(covered, weights, copy.shape)) ahead.push_back(&copy);
        if (!ahead.empty())
            enqueue([&ahead] {
                for (Copy* copy : ahead) copy->stage(copy->memory.data());
            });
        // Open only once staged: a hold that failed to begin never ends (WeightsHeld).
        for (Copy* copy : ahead) copy->hold = hold_;
        holding_ = true;
        return ahead.size();
    }
    void endHold() noexcept {
        holding_ = false;
        ++hold_;
    }
    bool holding() const { return holding_; }

    // The copy of `weights` in `shape` staged in this hold: the one found, or one that
    // stage(room) writes now into `bytes` of room claimed for it. `stage` is kept to stage the
    // copy again as a later hold begins.
    const void* copyOf(Backend& memory, const float* weights, const Shape& shape,
                       std::size_t bytes, Stage stage) {
        if (const void* copy = find(weights, shape)) return copy;
        Copy& copy = claim(memory, weights, shape, bytes);
        copy.stage = std::move(stage);
        copy.stage(copy.memory.data());
        return copy.memory.data();
    }

private:
    // The copy of `weights` staged in this hold in `shape`, or null.
    const void* find(const float* weights, const Shape& shape) const {
        const auto found = copies_.find(weights);
        if (found == copies_.end()) return nullptr;
        const Copy& copy = found->second;
        return copy.hold == hold_ && copy.shape == shape ? copy.memory.data() : nullptr;
    }

    struct Copy {
        BackendBuffer<char> memory;
        Shape shape{};
        std::uint64_t hold = 0;
        Stage stage;
    };

    // The copy of `weights` in `shape` with room of `bytes`, which find() returns for the rest
    // of this hold (its memory reused when an earlier hold claimed as many bytes).
    Copy& claim(Backend& memory, const float* weights, const Shape& shape, std::size_t bytes) {
        Copy& copy = copies_[weights];
        if (copy.memory.bytes() != bytes) copy.memory = BackendBuffer<char>(memory, bytes);
        copy.shape = shape;
        copy.hold = hold_;
        return copy;
    }

    // Whether the weights of a copy in `shape` at `weights` lie in `covered`.
    static bool lieIn(std::span<const float> covered, const float* weights, const Shape& shape) {
        const std::int64_t count = shape[0] * shape[1] * shape[2];
        const std::less_equal<const float*> notAfter;  // ordered on unrelated pointers too
        return notAfter(covered.data(), weights) &&
               notAfter(weights + count, covered.data() + covered.size());
    }
    std::unordered_map<const float*, Copy> copies_;
    std::uint64_t hold_ = 1;  // a Copy claimed in no hold (hold 0) is never found
    bool holding_ = false;
};

}  // namespace cnnstudio::kernels
