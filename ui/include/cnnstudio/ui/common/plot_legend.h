// What every chart of the app does with its legend (the training curves, the hardware charts).
#pragma once

class QCustomPlot;

namespace cnnstudio::ui {

// As many legend entries side by side as the plot's width holds; the rest wrap to more rows.
// Call it when the plot is resized or its entries change.
void fitLegendColumns(QCustomPlot* plot);

}  // namespace cnnstudio::ui
