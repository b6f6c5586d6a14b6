// The screenshots of the docs (docs/screenshots/): each main view of a MainWindow rendered to a
// PNG with QWidget::grab() — the designer with the loaded network, the run settings, the training
// dashboard replaying the newest run under the runs folder, and the run history comparing the two
// newest runs — first in the light palette, then in a dark one. `cnnstudio --screenshot DIR`.
#pragma once

#include <QPalette>
#include <QStringList>

namespace cnnstudio::ui {

class MainWindow;

// Returns the files written. Throws Error when a file cannot be written.
QStringList saveScreenshots(MainWindow& window, const QString& directory);
// Qt's Fusion colours for a dark desktop.
QPalette darkPalette();

}  // namespace cnnstudio::ui
