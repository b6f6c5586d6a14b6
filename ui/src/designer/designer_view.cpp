#include "cnnstudio/ui/designer/designer_view.h"

#include <algorithm>
#include <cmath>

#include <QGraphicsItem>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>

namespace cnnstudio::ui {
namespace {

constexpr double zoomStep = 1.15;
constexpr double minimumZoom = 0.02;
constexpr double maximumZoom = 4.0;
constexpr double fitMargin = 30.0;

}  // namespace

DesignerView::DesignerView(QGraphicsScene* scene, QWidget* parent) : QGraphicsView(scene, parent) {
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(RubberBandDrag);
    setTransformationAnchor(AnchorUnderMouse);
    // A fitted network stays centred when the page around the view changes size.
    setResizeAnchor(AnchorViewCenter);
    setViewportUpdateMode(SmartViewportUpdate);
    setAcceptDrops(true);
}

void DesignerView::zoomBy(double factor) {
    const double target = std::clamp(zoom() * factor, minimumZoom, maximumZoom);
    if (std::abs(target - zoom()) < 1e-9) return;
    const double applied = target / zoom();
    scale(applied, applied);
    fitted_ = false;
    emit zoomChanged(zoom());
}

void DesignerView::zoomIn() {
    const auto anchor = transformationAnchor();
    setTransformationAnchor(AnchorViewCenter);
    zoomBy(zoomStep);
    setTransformationAnchor(anchor);
}

void DesignerView::zoomOut() {
    const auto anchor = transformationAnchor();
    setTransformationAnchor(AnchorViewCenter);
    zoomBy(1 / zoomStep);
    setTransformationAnchor(anchor);
}

void DesignerView::resetZoom() {
    resetTransform();
    fitted_ = false;
    emit zoomChanged(zoom());
}

void DesignerView::fitToContents() {
    if (!scene()) return;
    // The drawing, without the overview labels: they keep their size on screen, so their extent
    // in the scene depends on the zoom being chosen, and would pull a fitted network off centre.
    QRectF drawing;
    for (const QGraphicsItem* item : scene()->items())
        if (!(item->flags() & QGraphicsItem::ItemIgnoresTransformations)) drawing |= item->sceneBoundingRect();
    const QRectF contents = drawing.adjusted(-fitMargin, -fitMargin, fitMargin, fitMargin);
    if (contents.isEmpty()) return;
    // However big the network, all of it: the nodes switch to a summary drawing when small.
    // A small network is not blown up beyond life size.
    const double fitted = std::min(viewport()->width() / contents.width(), viewport()->height() / contents.height());
    resetTransform();
    const double applied = std::clamp(fitted, minimumZoom, 1.0);
    scale(applied, applied);
    centerOn(contents.center());
    fitted_ = true;
    emit zoomChanged(zoom());
}

void DesignerView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    // A smaller window would cut the top and bottom nodes off a fitted network (audit item 19).
    if (fitted_) fitToContents();
}

void DesignerView::wheelEvent(QWheelEvent* event) {
    if (event->modifiers() & Qt::ControlModifier) {
        const double steps = event->angleDelta().y() / 120.0;
        if (steps != 0) zoomBy(std::pow(zoomStep, steps));
        event->accept();
        return;
    }
    QGraphicsView::wheelEvent(event);
}

void DesignerView::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::MiddleButton || (spaceHeld_ && event->button() == Qt::LeftButton)) {
        panning_ = true;
        fitted_ = false;
        lastPanPoint_ = event->position().toPoint();
        viewport()->setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::mousePressEvent(event);
}

void DesignerView::mouseMoveEvent(QMouseEvent* event) {
    if (panning_) {
        const QPoint delta = event->position().toPoint() - lastPanPoint_;
        lastPanPoint_ = event->position().toPoint();
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
        event->accept();
        return;
    }
    QGraphicsView::mouseMoveEvent(event);
}

void DesignerView::mouseReleaseEvent(QMouseEvent* event) {
    if (panning_ && (event->button() == Qt::MiddleButton || event->button() == Qt::LeftButton)) {
        panning_ = false;
        viewport()->setCursor(spaceHeld_ ? Qt::OpenHandCursor : Qt::ArrowCursor);
        event->accept();
        return;
    }
    QGraphicsView::mouseReleaseEvent(event);
}

void DesignerView::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        spaceHeld_ = true;
        viewport()->setCursor(Qt::OpenHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::keyPressEvent(event);
}

void DesignerView::keyReleaseEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        spaceHeld_ = false;
        if (!panning_) viewport()->setCursor(Qt::ArrowCursor);
        event->accept();
        return;
    }
    QGraphicsView::keyReleaseEvent(event);
}

}  // namespace cnnstudio::ui
