#include "cnnstudio/ui/common/plot_export.h"

#include <QApplication>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <qcustomplot.h>

#include "cnnstudio/error.h"

namespace cnnstudio::ui {
namespace {

bool paintPdf(const QList<QCustomPlot*>& plots, QIODevice& file, QSize plotSize) {
    QPdfWriter writer(&file);
    writer.setCreator(QApplication::applicationDisplayName());
    writer.setPageSize(QPageSize(QSizeF(plotSize.width(), double(plotSize.height()) * double(plots.size())),
                                 QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    writer.setResolution(72);  // one point per pixel of plotSize
    QCPPainter painter;
    if (!painter.begin(&writer)) return false;
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    for (QCustomPlot* plot : plots) {
        plot->toPainter(&painter, plotSize.width(), plotSize.height());
        painter.translate(0, plotSize.height());
    }
    return painter.end();
}

bool paintPng(const QList<QCustomPlot*>& plots, QIODevice& file, QSize plotSize) {
    QImage image(plotSize.width(), plotSize.height() * int(plots.size()), QImage::Format_ARGB32);
    image.fill(plots.first()->palette().color(QPalette::Base));
    {
        QPainter painter(&image);
        for (qsizetype i = 0; i < plots.size(); ++i)
            painter.drawPixmap(0, int(i) * plotSize.height(), plots[i]->toPixmap(plotSize.width(), plotSize.height()));
    }
    return image.save(&file, "PNG");
}

}  // namespace

void exportPlots(const QList<QCustomPlot*>& plots, const QString& path, QSize plotSize) {
    const std::string where = path.toStdString();
    if (plots.isEmpty()) throw Error("there is no chart to export", where);
    for (QCustomPlot* plot : plots) plot->replot(QCustomPlot::rpImmediateRefresh);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        throw Error("could not write the charts: " + file.errorString().toStdString(), where,
                    "check that the folder exists and you may write to it");
    const bool pdf = QFileInfo(path).suffix().compare("pdf", Qt::CaseInsensitive) == 0;
    const bool painted = pdf ? paintPdf(plots, file, plotSize) : paintPng(plots, file, plotSize);
    if (!painted || !file.commit())
        throw Error("could not write the charts", where, "check that the folder exists and you may write to it");
}

}  // namespace cnnstudio::ui
