#include "cnnstudio/ui/designer/port_item.h"

#include <QApplication>
#include <QCursor>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QPalette>
#include <QWidget>

#include "cnnstudio/ui/designer/node_item.h"
#include "common/layer_colors.h"

namespace cnnstudio::ui {

PortItem::PortItem(Kind kind, NodeItem* node) : QGraphicsObject(node), kind_(kind), node_(node) {
    setAcceptHoverEvents(true);
    setAcceptedMouseButtons(Qt::LeftButton);
    setCursor(Qt::CrossCursor);
    refreshToolTip();
}

QRectF PortItem::boundingRect() const { return QRectF(-hitRadius, -hitRadius, 2 * hitRadius, 2 * hitRadius); }

QPainterPath PortItem::shape() const {
    QPainterPath path;
    path.addEllipse(QPointF(0, 0), hitRadius, hitRadius);
    return path;
}

void PortItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget* widget) {
    const QPalette palette = widget ? widget->palette() : QApplication::palette();
    const QColor accent = layerCategoryColor(node_->category());
    painter->setRenderHint(QPainter::Antialiasing);
    if (isHighlighted()) {
        painter->setPen(QPen(palette.color(QPalette::Highlight), 2.4));
        painter->setBrush(blend(accent, palette.color(QPalette::Highlight), 0.5));
        painter->drawEllipse(QPointF(0, 0), highlightedRadius, highlightedRadius);
        return;
    }
    painter->setPen(QPen(palette.color(QPalette::Text), 1.2));
    painter->setBrush(accent);
    painter->drawEllipse(QPointF(0, 0), radius, radius);
}

void PortItem::setTargeted(bool targeted) {
    if (targeted_ == targeted) return;
    targeted_ = targeted;
    update();
}

void PortItem::refreshToolTip() {
    setToolTip(kind_ == Kind::Output
                   ? tr("Output of %1: drag onto another layer to feed it").arg(node_->name())
                   : tr("Input of %1: drag onto another layer to take its output").arg(node_->name()));
}

void PortItem::hoverEnterEvent(QGraphicsSceneHoverEvent* event) {
    hovered_ = true;
    update();
    QGraphicsObject::hoverEnterEvent(event);
}

void PortItem::hoverLeaveEvent(QGraphicsSceneHoverEvent* event) {
    hovered_ = false;
    update();
    QGraphicsObject::hoverLeaveEvent(event);
}

void PortItem::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        event->ignore();
        return;
    }
    // Accepting makes this port the mouse grabber: moves and the release come here, not to the
    // node (which would move) nor to the view (which would draw a rubber band).
    event->accept();
    dragging_ = true;
    emit connectionDragStarted(this, event->scenePos());
}

void PortItem::mouseMoveEvent(QGraphicsSceneMouseEvent* event) {
    if (dragging_) emit connectionDragMoved(this, event->scenePos());
}

void PortItem::mouseReleaseEvent(QGraphicsSceneMouseEvent* event) {
    if (!dragging_) return;
    dragging_ = false;
    emit connectionDragFinished(this, event->scenePos());
}

}  // namespace cnnstudio::ui
