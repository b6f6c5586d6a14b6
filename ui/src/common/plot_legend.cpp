#include "cnnstudio/ui/common/plot_legend.h"

#include <algorithm>

#include <qcustomplot.h>

namespace cnnstudio::ui {

void fitLegendColumns(QCustomPlot* plot) {
    QCPLegend* legend = plot->legend;
    int widest = 1;
    for (int i = 0; i < legend->itemCount(); ++i)  // a wrapped grid counts its empty cells too
        if (const QCPAbstractLegendItem* item = legend->item(i))
            widest = std::max(widest, item->minimumOuterSizeHint().width() + legend->columnSpacing());
    const int available = plot->width() - legend->margins().left() - legend->margins().right();
    const int columns = std::max(1, available / widest);
    if (columns == legend->wrap()) return;
    legend->setWrap(columns);
    legend->setFillOrder(legend->fillOrder(), true);  // a new wrap moves only the entries placed after it
}

}  // namespace cnnstudio::ui
