// What every oneDNN-backed op of the `cpu` backend shares:
//  - SharedBuffer / SharedBuffers: the scratchpad and the layout-staging memory. Ops run one
//    after another, so one scratchpad and one staging area per operand slot serve every
//    primitive of a backend; plans hold no big memory of their own.
//  - Operand: one argument of a primitive. The caller's layout is plain (fp32 NCHW, or the bf16
//    channels-last activations of bf16 precision: activationDesc); when a primitive runs faster
//    in a blocked layout (oneDNN's format_tag::any), the operand stages the data in that layout
//    and owns the reorder between the two.
//  - Plan: a primitive with its argument map, built once per geometry and replayed.
//  - PlanCache: plans keyed by geometry.
//  - OmpThreadScope: sets the OpenMP thread count (Debian's libdnnl runs on OpenMP, so one
//    setting governs oneDNN and our own loops) for the duration of one op.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>

namespace cnnstudio::cpu {

// A growable, 64-byte aligned host buffer; its contents do not survive growth.
class SharedBuffer {
public:
    void reserve(std::size_t bytes);
    void* data() const { return data_.get(); }

private:
    struct Free {
        void operator()(void* pointer) const noexcept { std::free(pointer); }
    };
    std::unique_ptr<void, Free> data_;
    std::size_t bytes_ = 0;
};

// Staging slots: an op converts at most three operands at once (conv backward weights:
// x and dy in, dw out).
enum class StagingSlot { First = 0, Second = 1, Third = 2 };

struct SharedBuffers {
    SharedBuffer scratchpad;
    std::array<SharedBuffer, 3> staging;
    SharedBuffer& slot(StagingSlot s) { return staging[std::size_t(s)]; }
};

// The caller's plain memory and, when the primitive wants another layout, a staged copy.
class Operand {
public:
    enum class Direction { Input, Output };

    Operand() = default;
    Operand(const dnnl::engine& engine, const dnnl::memory::desc& plain,
            const dnnl::memory::desc& wanted, Direction direction, StagingSlot slot,
            SharedBuffers& buffers);
    // An operand the primitive takes in the caller's layout: never staged.
    static Operand plain(const dnnl::engine& engine, const dnnl::memory::desc& desc);

    // The memory the primitive reads or writes; created once, handles bound per call.
    const dnnl::memory& primitiveMemory() const { return staged_ ? staged_ : plain_; }

    // Input: points at the caller's data and converts it into the staging layout if needed.
    void bindInput(const void* data, dnnl::stream& stream, SharedBuffers& buffers);
    // Output: points at the caller's data (or the staging area the primitive writes to);
    // finishOutput() converts a staged result back to the caller's layout.
    void bindOutput(void* data, SharedBuffers& buffers);
    void finishOutput(dnnl::stream& stream);

private:
    dnnl::memory plain_;
    dnnl::memory staged_;  // empty when the primitive takes the plain layout
    dnnl::reorder convert_;
    StagingSlot slot_ = StagingSlot::First;
};

// A primitive, its argument map (memory objects whose handles are rebound per call) and its
// scratchpad. The args map is built once, so a call allocates nothing.
struct Plan {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
    dnnl::memory scratchpad;

    // Registers the primitive's scratchpad (from its primitive descriptor) in the shared buffer.
    void attachScratchpad(const dnnl::memory::desc& scratchpadDesc, const dnnl::engine& engine,
                          SharedBuffers& buffers);
    void execute(dnnl::stream& stream, SharedBuffers& buffers);
};

// Hash over a list of integer fields (floats pass their bit patterns).
inline std::size_t hashFields(std::initializer_list<std::int64_t> fields) {
    std::size_t hash = 0x9e3779b97f4a7c15ULL;
    for (std::int64_t field : fields)
        hash ^= std::hash<std::int64_t>{}(field) + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
    return hash;
}
inline std::int64_t floatBits(float value) { return std::bit_cast<std::uint32_t>(value); }

template <class Key, class Value, class KeyHash>
using PlanCache = std::unordered_map<Key, Value, KeyHash>;

// Sets the calling thread's OpenMP thread count for one op and restores it afterwards.
class OmpThreadScope {
public:
    explicit OmpThreadScope(int threads) : previous_(omp_get_max_threads()) {
        if (threads != previous_) omp_set_num_threads(threads);
        threads_ = threads;
    }
    ~OmpThreadScope() {
        if (threads_ != previous_) omp_set_num_threads(previous_);
    }
    OmpThreadScope(const OmpThreadScope&) = delete;
    OmpThreadScope& operator=(const OmpThreadScope&) = delete;

private:
    int previous_;
    int threads_;
};

// Turns a oneDNN failure while building a plan into an Error naming the op.
[[noreturn]] void throwPlanError(const dnnl::error& error, const char* op);  // op: "cpu convForward"

// Plain (NCHW-family) memory descriptors.
dnnl::memory::desc plainDesc(const dnnl::memory::dims& dims);
// Activations of these dims as the backend stores them: fp32 plain, or in bf16 precision bf16
// with 4-D tensors channels-last (acdb, oneDNN's nhwc).
dnnl::memory::desc activationDesc(const dnnl::memory::dims& dims, bool bf16);
// A descriptor that lets the primitive choose the layout, of fp32 or of `type`.
dnnl::memory::desc anyDesc(const dnnl::memory::dims& dims,
                           dnnl::memory::data_type type = dnnl::memory::data_type::f32);

}  // namespace cnnstudio::cpu
