#include "cnnstudio/distillation.h"

#include <cmath>
#include <filesystem>

#include "cnnstudio/error.h"

namespace cnnstudio {

// ---- DistillationConfig ------------------------------------------------------------------------

void DistillationConfig::validate() const {
    if (!(weight > 0.0f && weight <= 1.0f))
        throw Error("the distillation weight is " + std::to_string(weight) + ", needs 0 < value <= 1",
                    "distill-weight", "0.5 to 0.9: the share of the loss that learns the teachers");
    if (!(temperature > 0.0f && std::isfinite(temperature)))
        throw Error("the distillation temperature is " + std::to_string(temperature) + ", needs a positive value",
                    "distill-temperature", "1 keeps the teachers' probabilities; 2 to 4 softens them");
}

nlohmann::json DistillationConfig::toJson() const {
    return {{"teachers", teachers}, {"weight", weight}, {"temperature", temperature}};
}

DistillationConfig DistillationConfig::fromJson(const nlohmann::json& json) {
    DistillationConfig config;
    config.teachers = json.at("teachers").get<std::vector<std::string>>();
    config.weight = json.at("weight").get<float>();
    config.temperature = json.at("temperature").get<float>();
    config.validate();
    return config;
}

// ---- TeacherEnsemble ---------------------------------------------------------------------------

struct TeacherEnsemble::Teacher {
    std::string folder;
    ModelInfo info;
    std::unique_ptr<Network> network;
};

namespace {

// The teacher's Network on the student's backend and batch, its loss at `temperature` (its
// probabilities are all the ensemble reads; its labels stay the zeros a Network starts with).
std::unique_ptr<Network> buildTeacher(const ModelFolder& model, const std::string& folder,
                                      const Network& student, float temperature) {
    auto network = std::make_unique<Network>(model.spec, student.backend(), student.batch(), 0,
                                             NetworkUse::Inference);
    loadNetworkTensors(*network, model.weights, std::filesystem::path(folder) / "model.safetensors");
    const TensorShape teacherInput = network->inputShape(), studentInput = student.inputShape();
    if (!(teacherInput == studentInput))
        throw Error("the teacher takes inputs " + teacherInput.toString() + ", the student " +
                        studentInput.toString(), folder, "choose a teacher trained on the same data set");
    if (network->classes() != student.classes())
        throw Error("the teacher predicts " + std::to_string(network->classes()) + " classes, the student " +
                        std::to_string(student.classes()), folder, "choose a teacher trained on the same data set");
    LossOptions loss;
    loss.temperature = temperature;
    network->setLossOptions(loss);
    return network;
}

bool sameValues(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > 1e-4f * std::max(1.0f, std::abs(b[i]))) return false;
    return true;
}

std::string describe(const InputNormalization& normalization) {
    if (normalization.mean.empty()) return "pixel / 255";
    std::string text = "mean";
    for (float mean : normalization.mean) text += " " + std::to_string(mean);
    text += ", stddev";
    for (float stddev : normalization.stddev) text += " " + std::to_string(stddev);
    return text;
}

}  // namespace

TeacherEnsemble::TeacherEnsemble(const DistillationConfig& config, const Network& student)
    : batch_(student.batch()), classes_(student.classes()) {
    config.validate();
    if (!config.enabled()) throw Error("no teacher given", "distillation", "name at least one teacher model");
    for (const std::string& folder : config.teachers) {
        ModelFolder model = readModelFolder(folder);
        auto teacher = std::make_unique<Teacher>();
        teacher->folder = folder;
        teacher->info = model.info;
        teacher->network = buildTeacher(model, folder, student, config.temperature);
        teachers_.push_back(std::move(teacher));
    }
    probabilities_ = Tensor(student.backend(), {int(teachers_.size()) * batch_, classes_, 1, 1});
}

TeacherEnsemble::~TeacherEnsemble() = default;

void TeacherEnsemble::requireCompatible(const std::vector<std::string>& classNames,
                                        const InputNormalization& normalization) const {
    for (const auto& teacher : teachers_) {
        if (!teacher->info.classNames.empty() && teacher->info.classNames != classNames)
            throw Error("the teacher's classes are not the run's (in name or order)", teacher->folder,
                        "choose a teacher trained on the same data set");
        const InputNormalization& theirs = teacher->info.normalization;
        if (!sameValues(theirs.mean, normalization.mean) || !sameValues(theirs.stddev, normalization.stddev))
            throw Error("the teacher normalises its inputs with " + describe(theirs) + ", this run with " +
                            describe(normalization), teacher->folder,
                        "choose a teacher trained on the same training split");
    }
}

void TeacherEnsemble::predict(const Tensor& input) {
    Backend& backend = *probabilities_.backend();
    const std::size_t setBytes = std::size_t(batch_) * classes_ * sizeof(float);
    for (std::size_t t = 0; t < teachers_.size(); ++t) {
        Network& teacher = *teachers_[t]->network;
        backend.copy(teacher.input().data(), input.data(), input.bytes());
        teacher.forward(Phase::Inference);
        teacher.computeLoss();
        backend.copy(reinterpret_cast<char*>(probabilities_.data()) + t * setBytes,
                     teacher.probabilities().data(), setBytes);
    }
}

SoftTargets TeacherEnsemble::softTargets(float weight) const {
    return {probabilities_.data(), int(teachers_.size()), weight};
}

}  // namespace cnnstudio
