#include "cnnstudio/ui/designer/edge_item.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <QApplication>
#include <QGraphicsScene>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>
#include <QWidget>

#include "cnnstudio/ui/designer/auto_layout.h"
#include "cnnstudio/ui/designer/node_item.h"
#include "cnnstudio/ui/designer/port_item.h"

namespace cnnstudio::ui {
namespace {

constexpr double arrowLength = 10.0;
constexpr double arrowHalfWidth = 5.0;
constexpr double cornerRadius = 14.0;

// A path through the points, its corners rounded.
QPainterPath roundedPolyline(const std::vector<QPointF>& points) {
    QPainterPath path(points.front());
    for (std::size_t i = 1; i + 1 < points.size(); ++i) {
        const QPointF in = points[i] - points[i - 1], out = points[i + 1] - points[i];
        const double inLength = std::hypot(in.x(), in.y()), outLength = std::hypot(out.x(), out.y());
        if (inLength < 1e-6 || outLength < 1e-6) continue;
        const double radius = std::min({cornerRadius, inLength / 2, outLength / 2});
        path.lineTo(points[i] - in * (radius / inLength));
        path.quadTo(points[i], points[i] + out * (radius / outLength));
    }
    path.lineTo(points.back());
    return path;
}

// Out of the source, along the gap below it to a lane at laneX, down or up the lane, along the
// gap above the target and into it: the way around cards that a direct curve would cut across.
QPainterPath lanePath(QPointF start, QPointF end, double laneX) {
    const double belowSource = start.y() + NodeMetrics::verticalGap / 2 - PortItem::radius;
    const double aboveTarget = end.y() + PortItem::radius + arrowLength - NodeMetrics::verticalGap / 2;
    return roundedPolyline({start, {start.x(), belowSource}, {laneX, belowSource}, {laneX, aboveTarget},
                            {end.x(), aboveTarget}, end});
}

// An edge to a card above its source, as from the foot of one column of a wrapped layout to
// the head of the next. A curve would cut across both columns' cards.
QPainterPath climbingPath(QPointF start, QPointF end) {
    // Between the two cards when they stand side by side (the wrapped layout puts the lane in
    // the middle of the gap between columns), else beside the one further right.
    const double laneX = std::abs(end.x() - start.x()) >= NodeMetrics::width + NodeMetrics::horizontalGap
                             ? (start.x() + end.x()) / 2
                             : std::max(start.x(), end.x()) + (NodeMetrics::width + NodeMetrics::horizontalGap) / 2;
    return lanePath(start, end, laneX);
}

// The lane for an edge down past the cards between its ends, as a residual block's identity skip
// into its Add: right of those cards, and right of any card beside them (a projection shortcut)
// too, in the middle of the gap after the last card it would otherwise run through.
double laneRightOf(const std::vector<QRectF>& cards, QPointF start, QPointF end) {
    // A lane this close to a card still reads as beside it, not on it.
    constexpr double clearance = NodeMetrics::horizontalGap / 4;
    double laneX = std::max(start.x(), end.x());
    for (bool moved = true; moved;) {
        moved = false;
        for (const QRectF& card : cards)
            if (card.left() - clearance < laneX && laneX < card.right() + clearance) {
                laneX = card.right() + NodeMetrics::horizontalGap / 2;
                moved = true;
            }
    }
    return laneX;
}

// Whether the path runs through any of the cards.
bool crossesAny(const QPainterPath& path, const std::vector<QRectF>& cards) {
    const QRectF extent = path.boundingRect().adjusted(-1, -1, 1, 1);
    // QPainterPath::intersects fills an open path; the outline of a thin stroke of it is filled
    // only where the line runs. Made only for a card near the path: most are nowhere near.
    QPainterPath line;
    for (const QRectF& card : cards) {
        if (!card.intersects(extent)) continue;
        if (line.isEmpty()) {
            QPainterPathStroker stroker;
            stroker.setWidth(1);
            line = stroker.createStroke(path);
        }
        if (line.intersects(card)) return true;
    }
    return false;
}

}  // namespace

EdgeItem::EdgeItem(NodeItem* source, NodeItem* target) : source_(source), target_(target) {
    setFlag(ItemIsSelectable);
    // Above the node cards: an edge goes around the cards between its ends, but one the user
    // placed in the gap it turns along is still crossed, and hidden under it the edge would look
    // like a missing connection. Its shape leaves the ports free.
    setZValue(1);
    updatePath();
}

void EdgeItem::setSlot(int slot, int slotCount) {
    slot_ = slot;
    slotCount_ = std::max(slotCount, 1);
    updatePath();
}

void EdgeItem::updatePath() {
    // From just below the output dot to the arrow's tip just above the input dot.
    const QPointF start = source_->outputPortScenePos() + QPointF(0, PortItem::radius);
    const QPointF end = target_->inputPortScenePos(slot_, slotCount_) - QPointF(0, PortItem::radius + arrowLength);
    QPainterPath path(start);
    if (end.y() < start.y()) {
        path = climbingPath(start, end);
    } else {
        const double bend = std::max(40.0, std::abs(end.y() - start.y()) / 2);
        path.cubicTo(start + QPointF(0, bend), end - QPointF(0, bend), end);
        if (const std::vector<QRectF> between = cardsBetweenEnds(); crossesAny(path, between))
            path = lanePath(start, end, laneRightOf(between, start, end));
    }
    prepareGeometryChange();
    setPath(path);
    setToolTip(QObject::tr("%1 → %2 (select and press Delete to disconnect)")
                   .arg(source_->name(), target_->name()));
}

std::vector<QRectF> EdgeItem::cardsBetweenEnds() const {
    std::vector<QRectF> cards;
    if (!scene()) return cards;
    const double top = source_->outputPortScenePos().y(), bottom = target_->inputPortScenePos().y();
    for (QGraphicsItem* item : scene()->items()) {
        auto* card = qgraphicsitem_cast<NodeItem*>(item);
        if (!card || card == source_ || card == target_) continue;
        const QRectF rect = card->mapRectToScene(card->shape().boundingRect());
        if (rect.bottom() > top && rect.top() < bottom) cards.push_back(rect);
    }
    return cards;
}

QVariant EdgeItem::itemChange(GraphicsItemChange change, const QVariant& value) {
    // The way around other cards can only be found once the edge is among them.
    if (change == ItemSceneHasChanged) updatePath();
    return QGraphicsPathItem::itemChange(change, value);
}

QPainterPath EdgeItem::shape() const {
    QPainterPathStroker stroker;
    stroker.setWidth(10);
    // Presses near either end belong to the ports (to start a connecting drag), not to the edge.
    QPainterPath ports;
    ports.addEllipse(mapFromScene(source_->outputPortScenePos()), PortItem::hitRadius, PortItem::hitRadius);
    ports.addEllipse(mapFromScene(target_->inputPortScenePos(slot_, slotCount_)), PortItem::hitRadius,
                     PortItem::hitRadius);
    return stroker.createStroke(path()).subtracted(ports);
}

QRectF EdgeItem::boundingRect() const {
    return path().boundingRect().adjusted(-arrowHalfWidth - 3, -3, arrowHalfWidth + 3, arrowLength + 3);
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
    const QPalette palette = widget ? widget->palette() : QApplication::palette();
    const bool selected = option->state & QStyle::State_Selected;
    QColor color = selected ? palette.color(QPalette::Highlight) : palette.color(QPalette::Text);
    if (!selected) color.setAlphaF(0.65f);
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setBrush(Qt::NoBrush);
    // A halo in the canvas colour keeps the line readable where it crosses a card's text.
    QColor halo = palette.color(QPalette::Base);
    halo.setAlphaF(0.85f);
    painter->setPen(QPen(halo, 5.0, Qt::SolidLine, Qt::RoundCap));
    painter->drawPath(path());
    painter->setPen(QPen(color, selected ? 2.6 : 1.6));
    painter->drawPath(path());

    const QPointF tip = path().currentPosition() + QPointF(0, arrowLength);
    const QPointF back = path().currentPosition();
    const QPolygonF head{tip, back + QPointF(-arrowHalfWidth, 0), back + QPointF(arrowHalfWidth, 0)};
    painter->setPen(Qt::NoPen);
    painter->setBrush(color);
    painter->drawPolygon(head);
}

}  // namespace cnnstudio::ui
