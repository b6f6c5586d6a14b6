// How numbers read in the designer, the dashboard and the run history: short, with units.
#pragma once

#include <cstdint>

#include <QString>

#include "cnnstudio/tensor.h"

namespace cnnstudio::ui {

QString formatCount(std::int64_t count);        // 1234567 -> "1.23 M"
QString formatFlops(std::int64_t flops);        // 2500000 -> "2.50 MFLOPs"
QString formatBytes(std::int64_t bytes);        // 1536 -> "1.50 KiB"
QString formatShape(const TensorShape& shape);  // per image: "64×48×48", a dense output: "128"
QString formatDuration(double seconds);         // 125 -> "2 min 05 s"
// "1 thread", "4 threads": the count and the noun that goes with it.
QString countOf(std::int64_t count, const QString& singular, const QString& plural);
// The text with a line-break opportunity (a zero-width space) after each comma, for a word-wrapped
// label: a comma list without spaces, such as an augmentation recipe, otherwise runs off the edge.
QString breakableAfterCommas(const QString& text);

}  // namespace cnnstudio::ui
