// EdgeItem: one connection on the designer canvas, a curve from the source's output port to one
// slot of the target's input port (several slots when a node such as Add or Concat takes several
// inputs, in the order of the spec). Where a curve would cross other cards (a skip connection
// past a residual block's layers) or climb to a card above, it takes a lane beside them instead.
// Selectable, so it can be deleted (disconnected).
#pragma once

#include <vector>

#include <QGraphicsPathItem>

namespace cnnstudio::ui {

class NodeItem;

class EdgeItem : public QGraphicsPathItem {
public:
    enum { Type = UserType + 2 };

    EdgeItem(NodeItem* source, NodeItem* target);

    int type() const override { return Type; }
    QPainterPath shape() const override;
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    NodeItem* source() const { return source_; }
    NodeItem* target() const { return target_; }
    void setSlot(int slot, int slotCount);
    void updatePath();

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

private:
    // The other cards level with the span between the source's foot and the target's head, in
    // scene coordinates: those a direct line could cross.
    std::vector<QRectF> cardsBetweenEnds() const;

    NodeItem* source_;
    NodeItem* target_;
    int slot_ = 0, slotCount_ = 1;
};

}  // namespace cnnstudio::ui
