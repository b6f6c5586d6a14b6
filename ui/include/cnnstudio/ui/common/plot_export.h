// Writing the app's charts to one file (the training curves, the hardware charts).
#pragma once

#include <QList>
#include <QSize>
#include <QString>

class QCustomPlot;

namespace cnnstudio::ui {

// `plots` one above the other, each `plotSize` (points in a PDF, pixels in a PNG), into `path`:
// vector PDF when its suffix is .pdf, otherwise a PNG on the plots' own background colour (their
// palette's Base, which the app's charts paint themselves with). The file goes through a
// temporary one renamed over `path`, so a failed export leaves what was there; Error names it.
void exportPlots(const QList<QCustomPlot*>& plots, const QString& path, QSize plotSize);

}  // namespace cnnstudio::ui
