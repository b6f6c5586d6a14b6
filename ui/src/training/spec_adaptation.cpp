// No Qt header here: see spec_adaptation.h.
#include "training/spec_adaptation.h"

#include "cnnstudio/trainer.h"

namespace cnnstudio::ui {

AdaptedSpec adaptSpecToData(const NetworkSpec& spec, int channels, int height, int width, int classes) {
    SpecAdaptation adapted = adaptSpecToDataset(spec, channels, height, width, classes);
    return {std::move(adapted.spec), std::move(adapted.changes)};
}

}  // namespace cnnstudio::ui
