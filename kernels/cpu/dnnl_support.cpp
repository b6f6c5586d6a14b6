#include "cpu/dnnl_support.h"

#include "cnnstudio/error.h"

namespace cnnstudio::cpu {

void SharedBuffer::reserve(std::size_t bytes) {
    if (bytes <= bytes_) return;
    std::size_t rounded = (bytes + 63) / 64 * 64;
    void* memory = std::aligned_alloc(64, rounded);
    if (!memory)
        throw Error("out of host memory growing a oneDNN work buffer to " +
                        std::to_string(rounded) + " bytes",
                    "cpu backend", "lower the batch size");
    data_.reset(memory);
    bytes_ = rounded;
}

Operand::Operand(const dnnl::engine& engine, const dnnl::memory::desc& plain,
                 const dnnl::memory::desc& wanted, Direction direction, StagingSlot slot,
                 SharedBuffers& buffers)
    : plain_(plain, engine, DNNL_MEMORY_NONE), slot_(slot) {
    if (wanted == plain) return;
    staged_ = dnnl::memory(wanted, engine, DNNL_MEMORY_NONE);
    buffers.slot(slot).reserve(wanted.get_size());
    convert_ = direction == Direction::Input ? dnnl::reorder(plain_, staged_)
                                             : dnnl::reorder(staged_, plain_);
}

Operand Operand::plain(const dnnl::engine& engine, const dnnl::memory::desc& desc) {
    Operand operand;
    operand.plain_ = dnnl::memory(desc, engine, DNNL_MEMORY_NONE);
    return operand;
}

void Operand::bindInput(const void* data, dnnl::stream& stream, SharedBuffers& buffers) {
    plain_.set_data_handle(const_cast<void*>(data));
    if (!staged_) return;
    staged_.set_data_handle(buffers.slot(slot_).data());
    convert_.execute(stream, plain_, staged_);
}

void Operand::bindOutput(void* data, SharedBuffers& buffers) {
    plain_.set_data_handle(data);
    if (staged_) staged_.set_data_handle(buffers.slot(slot_).data());
}

void Operand::finishOutput(dnnl::stream& stream) {
    if (staged_) convert_.execute(stream, staged_, plain_);
}

void Plan::attachScratchpad(const dnnl::memory::desc& scratchpadDesc, const dnnl::engine& engine,
                            SharedBuffers& buffers) {
    if (scratchpadDesc.get_size() == 0) return;
    buffers.scratchpad.reserve(scratchpadDesc.get_size());
    scratchpad = dnnl::memory(scratchpadDesc, engine, DNNL_MEMORY_NONE);
    args[DNNL_ARG_SCRATCHPAD] = scratchpad;
}

void Plan::execute(dnnl::stream& stream, SharedBuffers& buffers) {
    // The shared scratchpad may have grown (moved) since this plan was built.
    if (scratchpad) scratchpad.set_data_handle(buffers.scratchpad.data());
    primitive.execute(stream, args);
}

void throwPlanError(const dnnl::error& error, const char* op) {
    throw Error(std::string("oneDNN could not build a primitive: ") + error.what(),
                op,
                "the cpu-ref backend runs every geometry; report this one");
}

dnnl::memory::desc plainDesc(const dnnl::memory::dims& dims) {
    using tag = dnnl::memory::format_tag;
    static constexpr tag byRank[] = {tag::undef, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde};
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, byRank[dims.size()]);
}

dnnl::memory::desc activationDesc(const dnnl::memory::dims& dims, bool bf16) {
    using tag = dnnl::memory::format_tag;
    if (!bf16) return plainDesc(dims);
    static constexpr tag byRank[] = {tag::undef, tag::a, tag::ab, tag::abc, tag::acdb};
    return dnnl::memory::desc(dims, dnnl::memory::data_type::bf16, byRank[dims.size()]);
}

dnnl::memory::desc anyDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type type) {
    return dnnl::memory::desc(dims, type, dnnl::memory::format_tag::any);
}

}  // namespace cnnstudio::cpu
