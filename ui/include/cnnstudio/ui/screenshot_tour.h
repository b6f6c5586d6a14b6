// The screenshots of the docs (docs/screenshots/): each page of a MainWindow rendered to a PNG
// with QWidget::grab() — the designer with the loaded network, the run settings, the training
// dashboard replaying the newest completed run under the runs folder, and the run history with
// that run opened and with the runs compared — at 1024×700 and at 1920×1080, in the light palette
// and (most of them) in a dark one, named <shot>-<width>x<height>[-dark].png.
// `cnnstudio --screenshot DIR`.
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
