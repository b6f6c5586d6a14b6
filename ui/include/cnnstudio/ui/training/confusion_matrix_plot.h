// ConfusionMatrixPlot: a heat map of a confusion matrix (rows: true class, columns: predicted),
// the class names along both axes and the figure in every cell — counts, or each row divided by
// its total (the recall of the row's class on the diagonal). The figures are drawn as large as the
// cells allow, never below a legible size: cells too small for that show only colour, and a
// cell's tooltip gives its figure.
#pragma once

#include <optional>

#include <QFont>
#include <QList>
#include <QRectF>
#include <QStringList>
#include <QWidget>

namespace cnnstudio::ui {

class ConfusionMatrixPlot : public QWidget {
    Q_OBJECT

public:
    explicit ConfusionMatrixPlot(QWidget* parent = nullptr);

    void setMatrix(const QStringList& classNames, const QList<QList<qint64>>& counts);
    void clear();
    bool isNormalised() const { return normalised_; }
    int classCount() const { return int(counts_.size()); }
    qint64 count(int trueClass, int predictedClass) const;
    double value(int trueClass, int predictedClass) const;  // the count, or its share of the row
    QString cellText(int trueClass, int predictedClass) const;
    QString className(int index) const;
    // The font of the cell figures at the plot's size; none when the cells are too small for a
    // legible one.
    std::optional<QFont> cellFigureFont() const;
    // "true Shirt, predicted Coat: 25"; empty away from the cells.
    QString cellToolTipAt(QPointF position) const;

    QSize sizeHint() const override { return {420, 380}; }
    QSize minimumSizeHint() const override { return {220, 200}; }

public slots:
    void setNormalised(bool normalised);

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    struct Geometry {
        double axisTitle = 0, labelWidth = 0, bottomLabels = 0, cell = 0;
        QRectF grid;
    };
    Geometry geometry() const;

    QStringList classNames_;
    QList<QList<qint64>> counts_;
    bool normalised_ = false;
};

}  // namespace cnnstudio::ui
