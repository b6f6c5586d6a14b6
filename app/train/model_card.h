// `cnnstudio-train card RUN_DIR`: MODEL_CARD.md for a finished run's model, written into
// RUN_DIR/model/ so that the folder ships as it is (resources/models/NAME/). The card says what
// the model is, what it was trained on and with which settings, how it scores (accuracy with and
// without test-time augmentation, the confusion matrix and per-class precision, recall and F1 on
// the split it was selected on, and on the test split when the run had one), and what FER2013's
// known biases and label noise mean for its use.
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "cnnstudio/event_reader.h"

namespace cnnstudio::app {

// The card's Markdown from a run's events. `ttaAccuracy`: the accuracy `evaluate --tta flip`
// measured on the selection split, when known. Throws Error naming the run when it has not
// finished or has no model.
std::string modelCardText(const EventLog& log, const std::string& runName, std::optional<double> ttaAccuracy);

// Reads RUN_DIR/events.jsonl and writes RUN_DIR/model/MODEL_CARD.md atomically.
void writeModelCard(const std::filesystem::path& runDir, std::optional<double> ttaAccuracy, std::FILE* out);

}  // namespace cnnstudio::app
