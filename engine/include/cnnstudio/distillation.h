// Knowledge distillation (Hinton, Vinyals and Dean 2015, "Distilling the Knowledge in a Neural
// Network"): trained teacher networks, frozen, see every training batch the student sees (after
// augmentation, mixing included) and the mean of their softened probabilities becomes a share of
// the student's target (backend.h SoftTargets). Several teachers distil an ensemble into one
// network, a large teacher a small fast one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cnnstudio/backend.h"
#include "cnnstudio/checkpoint.h"
#include "cnnstudio/network.h"
#include "cnnstudio/tensor.h"

namespace cnnstudio {

struct DistillationConfig {
    // Model folders (resolved, absolute: a resumed run finds them from anywhere); empty: none.
    std::vector<std::string> teachers;
    float weight = 0.5f;       // the share of the loss that learns the teachers, in (0, 1]
    float temperature = 1.0f;  // T > 0: the teachers' probabilities are softmax(logits / T)

    bool enabled() const { return !teachers.empty(); }
    void validate() const;  // throws Error naming the bad setting
    nlohmann::json toJson() const;
    static DistillationConfig fromJson(const nlohmann::json& json);
};

// The teachers of one student: each a Network on the student's backend and batch, loaded from
// its model folder. Throws Error naming the teacher's folder when it cannot teach this student:
// another input shape, another number or order of classes, another input normalisation.
class TeacherEnsemble {
public:
    TeacherEnsemble(const DistillationConfig& config, const Network& student);
    ~TeacherEnsemble();
    TeacherEnsemble(const TeacherEnsemble&) = delete;
    TeacherEnsemble& operator=(const TeacherEnsemble&) = delete;

    // The teachers must have learnt the student's classes, in the same order, from inputs
    // normalised the same way (the run's class names and normalisation).
    void requireCompatible(const std::vector<std::string>& classNames,
                           const InputNormalization& normalization) const;

    // Runs every teacher on `input` (the student's input tensor, after augmentation) and
    // writes their probabilities into the table softTargets() points at. Enqueued on the
    // backend like any op: the student's step that follows reads them in order.
    void predict(const Tensor& input);

    // The table predict() fills, one set per teacher, at `weight`.
    SoftTargets softTargets(float weight) const;
    std::size_t size() const { return teachers_.size(); }

private:
    struct Teacher;
    std::vector<std::unique_ptr<Teacher>> teachers_;
    Tensor probabilities_;  // (teachers * batch, classes)
    int batch_ = 0, classes_ = 0;
};

}  // namespace cnnstudio
