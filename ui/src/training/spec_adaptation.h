// The engine's fit of a spec to a data set (cnnstudio/trainer.h: adaptSpecToDataset), reached
// through a source without Qt headers: trainer.h brings in the EventWriter, whose `emit` member
// Qt's keyword macro would break.
#pragma once

#include <string>
#include <vector>

#include "cnnstudio/spec.h"

namespace cnnstudio::ui {

struct AdaptedSpec {
    NetworkSpec spec;
    std::vector<std::string> changes;
};

// Throws Error naming the node when the network cannot be fitted.
AdaptedSpec adaptSpecToData(const NetworkSpec& spec, int channels, int height, int width, int classes);

}  // namespace cnnstudio::ui
