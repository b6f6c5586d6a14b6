// NodeItem: one layer on the designer canvas — a card with the node's name and type, its output
// shape, parameters and FLOPs from the live shape analysis, an input port on top (none for an
// Input node) and an output port at the bottom, each a PortItem child that owns the connecting
// drag. A node the analysis rejects is drawn red and carries the message as its tooltip.
#pragma once

#include <QGraphicsItem>
#include <QList>
#include <QString>

#include "cnnstudio/shape_inference.h"

namespace cnnstudio::ui {

class EdgeItem;
class OverviewLabel;
class PortItem;

class NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };
    // Below this scale (screen pixels per scene unit) a card is too small to read: it is drawn
    // plain and, in overview, a label beside it keeps the name and shape readable. Above it and
    // below life size the card shows its name and shape in larger type, and drops the costs.
    static constexpr double overviewBelowScale = 0.25;
    // Whether overview labels, one per row of the auto-layout, clear each other at this zoom;
    // further out they would pile up into an unreadable smear, and only the cards are drawn.
    static bool overviewLabelsFitAt(double zoom);

    NodeItem(const QString& name, const QString& layerType);

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    QString name() const { return name_; }
    void setName(const QString& name);
    QString layerType() const { return layerType_; }
    QString category() const { return category_; }
    bool hasInputPort() const { return inputPort_ != nullptr; }
    PortItem* inputPort() const { return inputPort_; }  // null for an Input node
    PortItem* outputPort() const { return outputPort_; }

    // info: the analysis of this node (null when the analysis has none); problem: empty when fine.
    void setAnalysis(const NodeInfo* info, const QString& problem);
    QString problem() const { return problem_; }
    QString annotationText() const;  // the shape / parameters / FLOPs lines as drawn
    void setOverview(bool overview);  // shows the label beside the card
    bool isOverview() const;
    // Where the overview label would be drawn at this zoom, in scene coordinates.
    QRectF overviewLabelSceneRect(double zoom) const;

    QPointF inputPortScenePos(int slot = 0, int slotCount = 1) const;
    QPointF outputPortScenePos() const;

    void addEdge(EdgeItem* edge) { edges_.append(edge); }
    void removeEdge(EdgeItem* edge) { edges_.removeAll(edge); }
    const QList<EdgeItem*>& edges() const { return edges_; }

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

private:
    void refreshOverviewLabel();
    void paintText(QPainter* painter, const QPalette& palette, const QFont& titleFont, bool compact) const;

    QString name_, layerType_, category_;
    PortItem* inputPort_ = nullptr;
    PortItem* outputPort_ = nullptr;
    OverviewLabel* overviewLabel_;
    QString shapeLine_, costLine_, problem_;
    QList<EdgeItem*> edges_;
    QRectF rectBeforeMove_;  // in scene coordinates, while a move is under way
};

}  // namespace cnnstudio::ui
