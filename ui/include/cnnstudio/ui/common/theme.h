// The app's light and dark looks: a palette for each, applied to the whole application. The
// window's View menu switches between them and keeps the choice in QSettings; the screenshot
// tour renders both.
#pragma once

#include <QPalette>
#include <QString>

namespace cnnstudio::ui {

enum class Theme { Light, Dark };

QPalette lightPalette();  // the style's own colours
QPalette darkPalette();   // Fusion-like colours for a dark desktop
void applyTheme(Theme theme);
QString themeName(Theme theme);               // "light" | "dark", as kept in QSettings
Theme themeFromName(const QString& name);     // anything else is light

}  // namespace cnnstudio::ui
