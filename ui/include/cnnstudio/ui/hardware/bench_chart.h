// BenchChart: what the Hardware page's charts share — a QCustomPlot with a title above it, a
// legend below it, the light or dark palette of the window, and a note in place of the plot when
// there is nothing to draw (saying what would fill it). SpeedupChart, ScalingChart,
// TimeBreakdownChart and RunThroughputChart each draw their own data into it.
#pragma once

#include <QList>
#include <QString>
#include <QWidget>

class QCPTextElement;
class QCustomPlot;
class QLabel;
class QStackedLayout;

namespace cnnstudio::ui {

class BenchChart : public QWidget {
    Q_OBJECT

public:
    explicit BenchChart(QWidget* parent = nullptr);

    QCustomPlot* plot() const { return plot_; }
    QString title() const;
    // The note shown instead of the plot; empty when the plot is shown.
    QString emptyNote() const;

    // Hides the plot behind a note saying what would fill it.
    void showEmptyNote(const QString& note);

    // Paints the charts one above the other into a PNG image or a PDF page (vector), each
    // `width` × `height` points. Throws Error naming the file when it cannot be written.
    static void exportCharts(const QList<BenchChart*>& charts, const QString& path, int width = 1100,
                             int height = 520);

protected:
    void setTitle(const QString& title);
    void showPlot();
    // Colours and fonts from the palette, then the subclass's own series (restyle()).
    void applyPalette();
    virtual void restyle() {}
    // What depends on the plot's width in pixels (labels beside bars), before each replot.
    virtual void fitToWidth() {}
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void fitHeightToContents();

    QCustomPlot* plot_;
    QCPTextElement* title_;
    QLabel* note_;
    QStackedLayout* stack_;
};

// Text of a throughput for a bar or a table: "116 k images/s" style, three figures.
QString formatImagesPerSecond(double imagesPerSecond);

}  // namespace cnnstudio::ui
