// Toolbar icons drawn in the palette's colours, so they read on light and dark desktops alike
// (the style's stock pictures for these are black).
#pragma once

#include <QIcon>
#include <QPalette>

namespace cnnstudio::ui {

enum class ActionIcon { Train, Stop, AutoLayout, FitNetwork };

QIcon paintedIcon(ActionIcon icon, const QPalette& palette);

}  // namespace cnnstudio::ui
