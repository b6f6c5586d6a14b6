#include "cnnstudio/ui/training/confusion_matrix_plot.h"

#include <algorithm>
#include <cmath>

#include <QFontInfo>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <QtMath>
#include <QPaintEvent>

#include "common/layer_colors.h"

namespace cnnstudio::ui {
namespace {

constexpr double labelGap = 6;
constexpr double labelAngleDegrees = 40;
// Below this the figures are a grey blur (the audit saw ~6 px at 1024x700): colour alone then.
constexpr double smallestFigurePoints = 7;

}  // namespace

ConfusionMatrixPlot::ConfusionMatrixPlot(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ConfusionMatrixPlot::setMatrix(const QStringList& classNames, const QList<QList<qint64>>& counts) {
    classNames_ = classNames;
    counts_ = counts;
    update();
}

void ConfusionMatrixPlot::clear() {
    classNames_.clear();
    counts_.clear();
    update();
}

void ConfusionMatrixPlot::setNormalised(bool normalised) {
    normalised_ = normalised;
    update();
}

qint64 ConfusionMatrixPlot::count(int trueClass, int predictedClass) const {
    if (trueClass < 0 || trueClass >= counts_.size()) return 0;
    return counts_[trueClass].value(predictedClass);
}

double ConfusionMatrixPlot::value(int trueClass, int predictedClass) const {
    const qint64 cell = count(trueClass, predictedClass);
    if (!normalised_) return double(cell);
    qint64 rowTotal = 0;
    for (qint64 entry : counts_.value(trueClass)) rowTotal += entry;
    return rowTotal > 0 ? double(cell) / double(rowTotal) : 0.0;
}

QString ConfusionMatrixPlot::cellText(int trueClass, int predictedClass) const {
    if (normalised_) return QString::number(value(trueClass, predictedClass) * 100.0, 'f', 0) + '%';
    return QString::number(count(trueClass, predictedClass));
}

QString ConfusionMatrixPlot::className(int index) const {
    return index < classNames_.size() ? classNames_[index] : QString::number(index);
}

ConfusionMatrixPlot::Geometry ConfusionMatrixPlot::geometry() const {
    const QFontMetricsF metrics(font());
    const int classes = classCount();
    Geometry geometry;
    for (int i = 0; i < classes; ++i)
        geometry.labelWidth = std::max(geometry.labelWidth, metrics.horizontalAdvance(className(i)));
    geometry.axisTitle = metrics.height() + labelGap;
    const double left = geometry.axisTitle + geometry.labelWidth + labelGap;
    geometry.bottomLabels = geometry.labelWidth * std::sin(qDegreesToRadians(labelAngleDegrees)) + metrics.height() + labelGap;
    const double available = std::min(width() - left - 8, height() - 8 - geometry.bottomLabels - geometry.axisTitle);
    geometry.cell = std::max(4.0, available / std::max(1, classes));
    geometry.grid = QRectF(left, 8, geometry.cell * classes, geometry.cell * classes);
    return geometry;
}

std::optional<QFont> ConfusionMatrixPlot::cellFigureFont() const {
    const int classes = classCount();
    if (classes == 0) return std::nullopt;
    QString widest;
    for (int row = 0; row < classes; ++row)
        for (int column = 0; column < classes; ++column)
            if (const QString text = cellText(row, column); text.size() > widest.size()) widest = text;
    const double cell = geometry().cell;
    // The largest size up to the page's whose widest figure fits a cell, in half points.
    QFont figure = font();
    for (double points = QFontInfo(font()).pointSizeF(); points >= smallestFigurePoints; points -= 0.5) {
        figure.setPointSizeF(points);
        const QFontMetricsF metrics(figure);
        if (metrics.horizontalAdvance(widest) <= cell - 2 && metrics.height() <= cell) return figure;
    }
    return std::nullopt;
}

QString ConfusionMatrixPlot::cellToolTipAt(QPointF position) const {
    const Geometry shape = geometry();
    if (classCount() == 0 || !shape.grid.contains(position)) return {};
    const int row = std::min(classCount() - 1, int((position.y() - shape.grid.top()) / shape.cell));
    const int column = std::min(classCount() - 1, int((position.x() - shape.grid.left()) / shape.cell));
    return tr("true %1, predicted %2: %3").arg(className(row), className(column), cellText(row, column));
}

bool ConfusionMatrixPlot::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        const QString text = cellToolTipAt(help->pos());
        if (text.isEmpty()) QToolTip::hideText();
        else QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void ConfusionMatrixPlot::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    const QPalette colors = palette();
    const int classes = classCount();
    if (classes == 0) {
        painter.setPen(colors.color(QPalette::PlaceholderText));
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                         tr("The confusion matrix appears after the first epoch."));
        return;
    }

    const QFontMetricsF metrics(font());
    const auto [axisTitle, labelWidth, bottomLabels, cell, grid] = geometry();

    double largest = 0;
    for (int row = 0; row < classes; ++row)
        for (int column = 0; column < classes; ++column) largest = std::max(largest, value(row, column));
    const QColor empty = colors.color(QPalette::Base);
    const QColor full = isDarkPalette(colors) ? QColor(90, 160, 255) : QColor(25, 85, 170);

    const std::optional<QFont> figureFont = cellFigureFont();
    if (figureFont) painter.setFont(*figureFont);
    for (int row = 0; row < classes; ++row)
        for (int column = 0; column < classes; ++column) {
            const double share = largest > 0 ? value(row, column) / largest : 0.0;
            const QColor fill = blend(empty, full, std::sqrt(share));  // sqrt: small confusions stay visible
            const QRectF box(grid.left() + column * cell, grid.top() + row * cell, cell, cell);
            painter.fillRect(box, fill);
            if (figureFont) {
                painter.setPen(fill.lightnessF() < 0.55 ? QColor(Qt::white) : QColor(Qt::black));
                painter.drawText(box, Qt::AlignCenter, cellText(row, column));
            }
        }
    painter.setPen(QPen(colors.color(QPalette::Mid), 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(grid);
    painter.setPen(QPen(colors.color(QPalette::Text), 1.2));
    for (int i = 0; i < classes; ++i) {
        const QRectF box(grid.left() + i * cell, grid.top() + i * cell, cell, cell);
        painter.drawRect(box.adjusted(0.5, 0.5, -0.5, -0.5));  // the diagonal: right answers
    }

    painter.setFont(font());
    painter.setPen(colors.color(QPalette::Text));
    for (int row = 0; row < classes; ++row) {
        const QRectF label(axisTitle, grid.top() + row * cell, labelWidth, cell);
        painter.drawText(label, Qt::AlignRight | Qt::AlignVCenter, className(row));
    }
    for (int column = 0; column < classes; ++column) {
        painter.save();
        painter.translate(grid.left() + (column + 0.5) * cell, grid.bottom() + labelGap);
        painter.rotate(-labelAngleDegrees);
        painter.drawText(QRectF(-labelWidth, -metrics.height() / 2, labelWidth, metrics.height()),
                         Qt::AlignRight | Qt::AlignVCenter, className(column));
        painter.restore();
    }
    painter.setPen(colors.color(QPalette::PlaceholderText));
    painter.drawText(QRectF(grid.left(), grid.bottom() + bottomLabels, grid.width(), metrics.height()),
                     Qt::AlignCenter, tr("predicted class"));
    painter.save();
    painter.translate(2, grid.center().y());
    painter.rotate(-90);
    painter.drawText(QRectF(-grid.height() / 2, 0, grid.height(), metrics.height()), Qt::AlignCenter,
                     tr("true class"));
    painter.restore();
}

}  // namespace cnnstudio::ui
