// PortItem: a node's input port (top centre) or output port (bottom centre) on the designer
// canvas. It owns the connecting drag: it accepts the press, so the view never starts a rubber
// band and the node under it never moves, and it reports the drag while the button is held.
// Its hit area is much larger than the dot it draws, so a press near the dot still connects.
// Hovering it (or dragging a connection onto its node) grows and highlights it; it shows a
// crosshair cursor and a tooltip saying what a drag does.
#pragma once

#include <QGraphicsObject>

namespace cnnstudio::ui {

class NodeItem;

class PortItem : public QGraphicsObject {
    Q_OBJECT

public:
    enum { Type = UserType + 3 };
    enum class Kind { Input, Output };

    // Radii in scene units: the dot as drawn, the dot while highlighted, and where a press counts.
    static constexpr double radius = 5.5;
    static constexpr double highlightedRadius = 8.5;
    static constexpr double hitRadius = 16.0;

    PortItem(Kind kind, NodeItem* node);

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    Kind kind() const { return kind_; }
    NodeItem* node() const { return node_; }
    bool isHighlighted() const { return hovered_ || targeted_; }
    // A connection being drawn would end on this port if the button were released now.
    void setTargeted(bool targeted);
    void refreshToolTip();  // after the node's name changed

signals:
    void connectionDragStarted(cnnstudio::ui::PortItem* port, QPointF scenePos);
    void connectionDragMoved(cnnstudio::ui::PortItem* port, QPointF scenePos);
    void connectionDragFinished(cnnstudio::ui::PortItem* port, QPointF scenePos);

protected:
    void hoverEnterEvent(QGraphicsSceneHoverEvent* event) override;
    void hoverLeaveEvent(QGraphicsSceneHoverEvent* event) override;
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseMoveEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override;

private:
    Kind kind_;
    NodeItem* node_;
    bool hovered_ = false;
    bool targeted_ = false;
    bool dragging_ = false;
};

}  // namespace cnnstudio::ui
