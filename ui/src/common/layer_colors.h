// Colours the pages draw with, chosen to read on both light and dark palettes.
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

namespace cnnstudio::ui {

// One hue per layer category ("Convolution", "Pooling", ...), the same in palette and canvas.
QColor layerCategoryColor(const QString& category);
// Red for nodes in error, lighter on a dark palette so it stays readable.
QColor problemColor(const QPalette& palette);
QColor blend(const QColor& from, const QColor& to, double amount);
bool isDarkPalette(const QPalette& palette);
// The index-th of a set of colours told apart at a glance (the curves of compared runs); after
// ten it cycles through the same hues lighter or darker.
QColor seriesColor(int index, const QPalette& palette);

}  // namespace cnnstudio::ui
